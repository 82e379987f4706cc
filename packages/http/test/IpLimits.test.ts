/**
 * Per-IP limits (IpLimits.ts) over real HTTP: requests leave from distinct loopback addresses
 * (Linux routes all of 127/8 to loopback, so `localAddress` picks the peer address the server sees).
 * Each limit trips at its bound for one address and not for another.
 */
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Cidr } from "@tender/domain"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { expectSpentBucket, rateLimitOf } from "./support/RateLimits.ts"

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

/** One request from `from` (a 127/8 address). */
const call = (
  server: TestServer,
  from: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string
) =>
  new Promise<Answer>((resolve, reject) => {
    const url = new URL(path, server.baseUrl)
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers, localAddress: from },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
      }
    )
    req.on("error", reject)
    if (body !== undefined) req.write(body)
    req.end()
  })

const statuses = async (n: number, send: () => Promise<Answer>) => {
  const seen: Array<number> = []
  let last: Answer | undefined
  for (let i = 0; i < n; i++) {
    last = await send()
    seen.push(last.status)
  }
  return { seen, last: last! }
}

/** An account allowlisting 198.51.100.0/24, and the error code of its keyed request from `from` with the given X-Forwarded-For. */
const allowlistedCaller = async (server: TestServer, from: string, name: string) => {
  const merchant = await Effect.runPromise(server.accounts.create({ name, mode: "test" }))
  await Effect.runPromise(server.accounts.setAllowlist(merchant.account_id, ["198.51.100.0/24"]))
  return async (forwarded: string) => {
    const answer = await call(server, from, "GET", "/v1/orders/ord_unknown", { authorization: `Bearer ${merchant.secret_key}`, "x-forwarded-for": forwarded })
    return JSON.parse(answer.body).code as string
  }
}

// Buckets that never refill within a test: three public requests, five provider notifications,
// two unknown keys per address.
const LIMITS = {
  perIp: { perSecond: 0.001, burst: 3 },
  notifications: { perSecond: 0.001, burst: 5 },
  unknownKeys: { perSecond: 0.001, burst: 2 }
}

describe("routes without an API key: one bucket per client IP", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ ipLimits: LIMITS })
  })
  afterAll(() => server.close())

  it("hosted checkout page: the 4th request from one IP is a plain 429 page with Retry-After; another IP is served", async () => {
    const { last, seen } = await statuses(4, () => call(server, "127.0.0.2", "GET", "/checkout/cs_unknown"))
    expect(seen).toEqual([404, 404, 404, 429])
    expect(last.headers["content-type"]).toMatch(/^text\/html/)
    expect(Number(last.headers["retry-after"])).toBeGreaterThanOrEqual(1)
    expect(last.body).toContain("Too many requests")
    expect((await call(server, "127.0.0.3", "GET", "/checkout/cs_unknown")).status).toBe(404)
  })

  it("sandbox pages, SDK assets and provider returns share the IP's bucket", async () => {
    const paths = ["/sandbox/redirect/txn_unknown", "/sdk/v1/tender.js", "/providers/ch_unknown/return"]
    const seen = []
    for (const path of paths) seen.push((await call(server, "127.0.0.4", "GET", path)).status)
    expect(seen).not.toContain(429)
    expect((await call(server, "127.0.0.4", "GET", "/sdk/v1/tender.js")).status).toBe(429)
    expect((await call(server, "127.0.0.5", "GET", "/sdk/v1/tender.js")).status).not.toBe(429)
  })

  it("API-shaped paths (provider notifications, the OpenAPI document) answer 429 in the spec's envelope", async () => {
    const notify = () =>
      call(server, "127.0.0.6", "POST", "/providers/ch_unknown/notifications", { "content-type": "application/json" }, "{}")
    // the pages' bucket spent: a provider's notifications from the same address have their own
    expect((await statuses(4, () => call(server, "127.0.0.6", "GET", "/checkout/cs_unknown"))).seen).toEqual([404, 404, 404, 429])
    const { last, seen } = await statuses(6, notify)
    expect(seen.slice(0, 5)).not.toContain(429)
    expect(last.status).toBe(429)
    expect(Number(last.headers["retry-after"])).toBeGreaterThanOrEqual(1)
    expect(JSON.parse(last.body)).toMatchObject({ code: "rate_limited", request_id: expect.stringMatching(/^req_/) })
    expect((await notify()).status).toBe(429)
    const openapi: Array<Answer> = []
    for (let i = 0; i < 4; i++) openapi.push(await call(server, "127.0.0.7", "GET", "/v1/openapi.json"))
    expect(openapi.map((answer) => answer.status)).toEqual([200, 200, 200, 429])
    expectSpentBucket(openapi, 3)
    expect(JSON.parse(openapi[3]!.body).code).toBe("rate_limited")
    expect((await call(server, "127.0.0.8", "POST", "/providers/ch_unknown/notifications", { "content-type": "application/json" }, "{}")).status)
      .not.toBe(429)
  })

  it("X-Forwarded-For is ignored unless the operator trusts a proxy: a forged header does not buy a new bucket", async () => {
    const seen = []
    for (let i = 0; i < 4; i++) {
      seen.push((await call(server, "127.0.0.9", "GET", "/checkout/cs_unknown", { "x-forwarded-for": `198.51.100.${i}` })).status)
    }
    expect(seen).toEqual([404, 404, 404, 429])
    // nor does it pass an account's allowlist
    const merchant = await Effect.runPromise(server.accounts.create({ name: "no proxy", mode: "test" }))
    await Effect.runPromise(server.accounts.setAllowlist(merchant.account_id, ["198.51.100.0/24"]))
    const forged = await call(server, "127.0.0.12", "GET", "/v1/orders/ord_unknown", {
      authorization: `Bearer ${merchant.secret_key}`,
      "x-forwarded-for": "198.51.100.20"
    })
    expect(JSON.parse(forged.body).code).toBe("client_ip_not_allowlisted")
  })
})

describe("behind a trusted proxy (trustedProxies: 1)", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ ipLimits: { ...LIMITS, trustedProxies: 1 } })
  })
  afterAll(() => server.close())

  it("the client is the address the proxy appended (the rightmost entry); what the client claimed left of it is not used", async () => {
    const from = (forwarded: string) => call(server, "127.0.0.10", "GET", "/checkout/cs_unknown", { "x-forwarded-for": forwarded })
    const seen = []
    // one client behind the proxy, claiming a different address in each request
    for (let i = 0; i < 4; i++) seen.push((await from(`203.0.113.${i}, 198.51.100.7`)).status)
    expect(seen).toEqual([404, 404, 404, 429])
    // another client behind the same proxy (same socket address) has its own bucket
    expect((await from("198.51.100.8")).status).toBe(404)
  })

  it("an account's IP allowlist checks the client the proxy saw, not the proxy", async () => {
    const keyed = await allowlistedCaller(server, "127.0.0.11", "behind a proxy")
    // allowlisted: on to the signature check; the client's own claim left of the proxy's entry is not used
    expect(await keyed("10.9.9.9, 198.51.100.20")).toBe("malformed_signature_header")
    expect(await keyed("198.51.100.20, 203.0.113.5")).toBe("client_ip_not_allowlisted")
  })
})

/** A server behind two proxies, for the tests that need one (started and closed by the test). */
const withTwoProxies = async (test: (server: TestServer) => Promise<void>) => {
  const server = await startTestServer({ ipLimits: { ...LIMITS, trustedProxies: 2 } })
  try {
    await test(server)
  } finally {
    await server.close()
  }
}

describe("behind two trusted proxies (trustedProxies: 2): a header with fewer entries was written by the client", () => {
  it("the peer is used for the bucket", () =>
    withTwoProxies(async (server) => {
      const seen = []
      for (let i = 0; i < 4; i++) {
        seen.push((await call(server, "127.0.0.30", "GET", "/checkout/cs_unknown", { "x-forwarded-for": `198.51.100.${i}` })).status)
      }
      expect(seen).toEqual([404, 404, 404, 429])
    }))

  it("the allowlist reads the same address: a lone forged entry does not pass it, the outer proxy's entry does", () =>
    withTwoProxies(async (server) => {
      const keyed = await allowlistedCaller(server, "127.0.0.31", "two proxies")
      expect(await keyed("198.51.100.20")).toBe("client_ip_not_allowlisted")
      expect(await keyed("198.51.100.20, 10.0.0.1")).toBe("malformed_signature_header")
    }))
})

describe("IPv6 clients: one bucket per /64", () => {
  it("addresses of one /64 share a key, another /64 has its own; IPv4-mapped addresses are the IPv4 address", () => {
    expect(Cidr.clientNetwork("2001:db8:1:2:aaaa::1")).toBe(Cidr.clientNetwork("2001:DB8:1:2:bbbb:cccc:dddd:2"))
    expect(Cidr.clientNetwork("2001:db8:1:2::1")).not.toBe(Cidr.clientNetwork("2001:db8:1:3::1"))
    expect(Cidr.clientNetwork("::ffff:192.0.2.1")).toBe("192.0.2.1")
    expect(Cidr.clientNetwork("::ffff:c000:201")).toBe("192.0.2.1")
    expect(Cidr.clientNetwork("192.0.2.1")).toBe("192.0.2.1")
  })

  it("over HTTP (behind a trusted proxy): hopping addresses inside a /64 does not buy a new bucket", async () => {
    const server = await startTestServer({ ipLimits: { ...LIMITS, trustedProxies: 1 } })
    try {
      const seen = []
      for (let i = 1; i <= 4; i++) {
        seen.push((await call(server, "127.0.0.32", "GET", "/checkout/cs_unknown", { "x-forwarded-for": `2001:db8:1:2::${i}` })).status)
      }
      expect(seen).toEqual([404, 404, 404, 429])
      expect((await call(server, "127.0.0.32", "GET", "/checkout/cs_unknown", { "x-forwarded-for": "2001:db8:1:3::1" })).status).toBe(404)
    } finally {
      await server.close()
    }
  })
})

describe("unknown API keys: limited per IP", () => {
  let server: TestServer
  let secretKey: string
  beforeAll(async () => {
    server = await startTestServer({ ipLimits: LIMITS })
    secretKey = (await Effect.runPromise(server.accounts.create({ name: "keys", mode: "test" }))).secret_key
  })
  afterAll(() => server.close())

  const withKey = (from: string, key: string) => call(server, from, "GET", "/v1/orders/ord_unknown", { authorization: `Bearer ${key}` })

  it("after the allowance of unknown keys, 429 with Retry-After; the IP's keyed requests are then refused unread, another IP's are not", async () => {
    const codes = []
    let last: Answer | undefined
    for (let i = 0; i < 3; i++) {
      last = await withKey("127.0.0.20", `sk_test_unknown${i}`)
      codes.push(`${last.status} ${JSON.parse(last.body).code}`)
    }
    expect(codes).toEqual(["401 invalid_api_key", "401 invalid_api_key", "429 rate_limited"])
    // the 429 says the allowance's bucket: two keys, none left, a whole-second wait before one and before all
    const refused = rateLimitOf(last!.headers)
    expect(refused).toMatchObject({ limit: 2, remaining: 0 })
    expect(refused.retryAfter).toBeGreaterThanOrEqual(1)
    expect(refused.reset).toBeGreaterThan(refused.retryAfter)
    // refused before the key is looked up: any key not seen to authenticate here, even a real one
    const blocked = await withKey("127.0.0.20", secretKey)
    expect([blocked.status, JSON.parse(blocked.body).code]).toEqual([429, "rate_limited"])
    expect(rateLimitOf(blocked.headers)).toMatchObject({ limit: 2, remaining: 0, retryAfter: refused.retryAfter, reset: refused.reset })
    // another address: its unknown key is a 401, the real key gets as far as the signature check
    expect(JSON.parse((await withKey("127.0.0.21", "sk_test_unknown9")).body).code).toBe("invalid_api_key")
    const known = await withKey("127.0.0.21", secretKey)
    expect([known.status, JSON.parse(known.body).code]).toEqual([401, "malformed_signature_header"])
  })

  it("a known key does not spend the allowance", async () => {
    for (let i = 0; i < 5; i++) expect((await withKey("127.0.0.22", secretKey)).status).toBe(401)
    const codes = []
    for (let i = 0; i < 3; i++) codes.push(JSON.parse((await withKey("127.0.0.22", `sk_test_unknown${i}`)).body).code)
    expect(codes).toEqual(["invalid_api_key", "invalid_api_key", "rate_limited"])
  })

  it("a key that authenticated here before still works from an address refused for unknown keys (a shared NAT)", async () => {
    const merchant = await Effect.runPromise(server.accounts.create({ name: "behind a NAT", mode: "test" }))
    expect(JSON.parse((await withKey("127.0.0.23", merchant.secret_key)).body).code).toBe("malformed_signature_header")
    const codes = []
    for (let i = 0; i < 3; i++) codes.push(JSON.parse((await withKey("127.0.0.24", `sk_test_scanner${i}`)).body).code)
    expect(codes).toEqual(["invalid_api_key", "invalid_api_key", "rate_limited"])
    const known = await withKey("127.0.0.24", merchant.secret_key)
    expect([known.status, JSON.parse(known.body).code]).toEqual([401, "malformed_signature_header"])
    // unseen keys from that address are still refused unread
    expect(JSON.parse((await withKey("127.0.0.24", "sk_test_scanner9")).body).code).toBe("rate_limited")
  })

  it("a publishable key sent as a Bearer key spends the same allowance", async () => {
    const merchant = await Effect.runPromise(server.accounts.create({ name: "public key", mode: "test" }))
    const codes = []
    for (let i = 0; i < 3; i++) codes.push(JSON.parse((await withKey("127.0.0.25", merchant.publishable_key)).body).code)
    expect(codes).toEqual(["publishable_api_key_not_allowed", "publishable_api_key_not_allowed", "rate_limited"])
  })
})

describe("X-Forwarded-For while no proxy is trusted", () => {
  it("logs one warning, at the first request that carries it", async () => {
    const server = await startTestServer({ ipLimits: LIMITS })
    const logged: Array<string> = []
    const originals = { write: process.stdout.write, log: console.log, warn: console.warn, info: console.info, error: console.error }
    const capture = (...args: Array<unknown>) => logged.push(args.map(String).join(" "))
    process.stdout.write = ((chunk: unknown, ...rest: Array<any>) => (capture(chunk), originals.write.call(process.stdout, chunk as string, ...rest))) as typeof process.stdout.write
    for (const level of ["log", "warn", "info", "error"] as const) console[level] = capture
    try {
      await call(server, "127.0.0.40", "GET", "/checkout/cs_unknown")
      expect(logged.join("\n")).not.toContain("X-Forwarded-For received")
      for (let i = 0; i < 2; i++) await call(server, "127.0.0.40", "GET", "/checkout/cs_unknown", { "x-forwarded-for": "198.51.100.1" })
      await call(server, "127.0.0.40", "GET", "/v1/orders/ord_unknown", { authorization: "Bearer sk_test_x", "x-forwarded-for": "198.51.100.1" })
      expect(logged.join("\n").split("X-Forwarded-For received").length - 1).toBe(1)
    } finally {
      process.stdout.write = originals.write
      Object.assign(console, { log: originals.log, warn: originals.warn, info: originals.info, error: originals.error })
      await server.close()
    }
  })
})
