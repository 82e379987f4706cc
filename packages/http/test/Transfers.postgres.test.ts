import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { transfersSuite } from "./TransfersSuite.ts"

// This file's own database on the run's PostgreSQL (PgTestServer.ts), a copy of the migrated template.
transfersSuite(await fileStorage())
