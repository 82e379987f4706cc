import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { providerThreeDsSuite } from "./ProviderThreeDsSuite.ts"

// This file's own database on the run's PostgreSQL (PgTestServer.ts), a copy of the migrated template.
providerThreeDsSuite(await fileStorage())
