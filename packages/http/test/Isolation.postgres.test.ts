import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { isolationSuite } from "./IsolationSuite.ts"

// This file's own database on the run's PostgreSQL (PgTestServer.ts), a copy of the migrated
// template: the variant that matters most, since there every account filter is SQL.
isolationSuite(await fileStorage())
