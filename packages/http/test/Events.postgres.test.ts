import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { eventsSuite } from "./EventsSuite.ts"

// This file's own database on the run's PostgreSQL (PgTestServer.ts), a copy of the migrated template.
eventsSuite(await fileStorage())
