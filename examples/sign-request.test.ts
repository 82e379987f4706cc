/**
 * The sign-request example, run as a merchant runs it (a Node process with the account's keys in its
 * environment) against a real server: its request is accepted and the answer's signature verifies;
 * with the wrong signing secret the server refuses it and the example exits non-zero.
 */
import { execFile } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, expect, it } from "vitest"
import { Effect } from "effect"
import { startTestServer, type TestServer } from "@tender/http/testing/TestServer"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const NODE = join(ROOT, "node_modules/.bin/node")

let server: TestServer
let account: { secret_key: string; signing_secret: string }
beforeAll(async () => {
  server = await startTestServer()
  account = await Effect.runPromise(server.accounts.create({ name: "example merchant", mode: "test" }))
})
afterAll(() => server.close())

const run = (args: ReadonlyArray<string>, signingSecret: string) =>
  new Promise<{ code: number; stdout: string }>((resolve) => {
    execFile(NODE, [join(ROOT, "examples/sign-request.ts"), ...args], {
      cwd: ROOT,
      timeout: 60_000,
      env: { ...process.env, TENDER_URL: server.baseUrl, TENDER_SECRET_KEY: account.secret_key, TENDER_SIGNING_SECRET: signingSecret }
    }, (error, stdout) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout }))
  })

it("a POST with a body: 201, the answer verified; the wrong signing secret: refused, exit 1", async () => {
  const body = JSON.stringify({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
  const ok = await run(["POST", "/v1/test_helpers/card_tokens", body], account.signing_secret)
  expect(ok.stdout).toMatch(/^201 \(response signature: valid\)\n\{"token":"tok_/)
  expect(ok.code).toBe(0)
  const wrong = await run(["GET", "/v1/payment-methods?country=US&currency=USD"], "whsec_not_this_account")
  // The server refuses the signature, and answers signed with the account's secret, which the example does not hold.
  expect(wrong.stdout).toMatch(/^401 \(response signature: invalid\)\n.*"code":"invalid_signature"/)
  expect(wrong.code).toBe(1)
})
