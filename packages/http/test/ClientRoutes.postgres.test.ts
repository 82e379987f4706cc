import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { clientRoutesSuite } from "./ClientRoutesSuite.ts"

// This file's own database on the run's PostgreSQL (PgTestServer.ts), a copy of the migrated template.
clientRoutesSuite(await fileStorage())
