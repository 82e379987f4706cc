import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { fuzzSuite } from "./FuzzSuite.ts"

// PostgreSQL refuses what memory accepts (NUL, out-of-range dates and numbers, over-long values):
// a smaller pass over this file's own database on the run's PostgreSQL (PgTestServer.ts).
fuzzSuite(await fileStorage(), 1_000)
