import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { signaturesSuite } from "./SignaturesSuite.ts"

// A fresh embedded PostgreSQL in a temporary data dir (or DATABASE_URL when set), stopped with the server.
const dataDir = mkdtempSync(join(tmpdir(), "tender-signatures-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

signaturesSuite({ storage: "postgres", dataDir })
