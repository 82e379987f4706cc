import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { paymentsSuite } from "./PaymentsSuite.ts"

// This file's own database on the run's PostgreSQL (PgTestServer.ts), a copy of the migrated template.
paymentsSuite(await fileStorage())
