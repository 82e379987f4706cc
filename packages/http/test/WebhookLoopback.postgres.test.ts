/**
 * The embedded PostgreSQL's port is one a test-mode local receiver may never name (with
 * DATABASE_URL set, that URL's port is, Infrastructure.ts): the server knows it only once the
 * database has started, so this runs the real server over a fresh embedded PostgreSQL.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { Effect, Option } from "effect"
import { EmbeddedPostgres } from "@tender/adapters"
import { send } from "@tender/client/Testing"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"

const dataDir = mkdtempSync(join(tmpdir(), "tender-loopback-"))
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({}, undefined, { storage: "postgres", dataDir })
}, 120_000)
afterAll(async () => {
  await server?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

it("a test-mode local receiver on the embedded PostgreSQL's port is refused", async () => {
  const port = Option.getOrThrow(await Effect.runPromise(EmbeddedPostgres.recordedPort(dataDir)))
  const account = await Effect.runPromise(server.accounts.create({ name: "loopback", mode: "test" }))
  const reply = await send(server, account, "POST", "/v1/webhook_endpoints", { body: JSON.stringify({ url: `http://127.0.0.1:${port}/` }) })
  expect({ status: reply.status, code: reply.json?.code, errors: reply.json?.errors }).toEqual({
    status: 400,
    code: "validation_failed",
    errors: [{ field: "url", message: `must not point at loopback port ${port} (used by this server)` }]
  })
})
