/**
 * The browser SDK's routes limit each client IP on its own bucket (`client:ip:<ip>`, the default
 * limit), before and apart from each account's: two accounts with room to spare are still refused
 * once one browser address has spent the IP's bucket.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { Effect } from "effect"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { expectSpentBucket } from "./support/RateLimits.ts"

let server: TestServer

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { perSecond: 1, burst: 3 } })
})
afterAll(() => server.close())

const session = (publishableKey: string) =>
  fetch(`${server.baseUrl}/v1/client/session`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${publishableKey}`, origin: "https://shop.example" },
    body: JSON.stringify({ client_secret: "ord_unknown_secret_00" })
  })

it("one IP's bucket is shared by every account: the 4th request from it is 429 with Retry-After and the RateLimit-* headers", async () => {
  const accounts = await Promise.all(["ip-a", "ip-b"].map(async (name) => {
    const created = await Effect.runPromise(server.accounts.create({ name, mode: "test" }))
    await Effect.runPromise(server.accounts.setRateLimit(created.account_id, 100, 100))
    return created
  }))
  const replies: Array<Response> = []
  for (let i = 0; i < 4; i++) replies.push(await session(accounts[i % 2]!.publishable_key))
  const statuses = replies.map((reply) => reply.status)
  const refused = replies[3]
  // the first three are judged on their secret (unknown → 401); the fourth never gets that far
  expect(statuses).toEqual([401, 401, 401, 429])
  // each answer says the IP's bucket, the tighter of the two it spends from (the accounts' hold 100)
  expectSpentBucket(replies, 3)
  expect(refused!.headers.get("access-control-expose-headers")).toContain("ratelimit-remaining")
  expect((await refused!.json()).error).toMatchObject({ type: "api_error", code: "rate_limited" })
})
