/**
 * The console's garbage round (ConsoleTesting.ts) on PostgreSQL, which refuses what memory takes (a
 * NUL byte, over-long values): every console input an operator can type or a link can carry, in
 * ids, searches, the audit filter, action forms and the login form, answers the console's own page,
 * never a 500 and never the API's JSON (review B2).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Agent, garbageRounds, helpersFor, type Merchant } from "./ConsoleTesting.ts"

let server: TestServer
let account: Merchant
let order: string
let agent: Agent
const { authorize, enrolled, login, orderOf } = helpersFor(() => server)

beforeAll(async () => {
  const limits = { rateLimit: { perSecond: 10_000, burst: 10_000 }, ipLimits: { perIp: { perSecond: 10_000, burst: 10_000 } } }
  server = await startTestServer({ ...limits, console: true }, undefined, await fileStorage())
  account = await Effect.runPromise(server.accounts.create({ name: "console-pg", mode: "test" }))
  order = await authorize(account, "console-pg-1")
  agent = await login(await enrolled("operator", [account.account_id]))
}, 60_000)

afterAll(async () => {
  await server?.close()
})

describe("garbage in, never a 500, on PostgreSQL", () => {
  it("NUL bytes, controls and over-long values in every console input: the console's own page", async () => {
    await garbageRounds(server, agent, order)
    expect((await orderOf(account, order)).status).toBe("authorized")
  }, 120_000)
})
