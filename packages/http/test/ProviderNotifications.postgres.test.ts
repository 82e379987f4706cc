import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { providerNotificationsSuite } from "./ProviderNotificationsSuite.ts"

// This file's own database on the run's PostgreSQL (PgTestServer.ts), a copy of the migrated template.
providerNotificationsSuite(await fileStorage())
