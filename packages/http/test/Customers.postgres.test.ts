import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { customersSuite } from "./CustomersSuite.ts"

// This file's own database on the run's PostgreSQL (PgTestServer.ts), a copy of the migrated template.
customersSuite(await fileStorage())
