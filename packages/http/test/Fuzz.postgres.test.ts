import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { fuzzSuite } from "./FuzzSuite.ts"

// PostgreSQL refuses what memory accepts (NUL, out-of-range dates and numbers, over-long values):
// a smaller pass over a fresh embedded server (or DATABASE_URL when set).
const dataDir = mkdtempSync(join(tmpdir(), "tender-fuzz-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

fuzzSuite({ storage: "postgres", dataDir }, 1_000)
