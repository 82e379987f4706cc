import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { signaturesSuite } from "./SignaturesSuite.ts"

// This file's own database on the run's PostgreSQL (PgTestServer.ts), a copy of the migrated template.
signaturesSuite(await fileStorage())
