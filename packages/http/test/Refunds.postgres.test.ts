import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { refundsSuite } from "./RefundsSuite.ts"

// This file's own database on the run's PostgreSQL (PgTestServer.ts), a copy of the migrated template.
refundsSuite(await fileStorage())
