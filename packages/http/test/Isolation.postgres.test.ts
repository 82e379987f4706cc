import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { isolationSuite } from "./IsolationSuite.ts"

// A fresh embedded PostgreSQL in a temporary data dir (or DATABASE_URL when set), stopped with the
// server: the variant that matters most, since there every account filter is SQL.
const dataDir = mkdtempSync(join(tmpdir(), "tender-isolation-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

isolationSuite({ storage: "postgres", dataDir })
