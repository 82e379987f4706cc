/**
 * SSRF at registration, over real HTTP: an endpoint on any special-purpose address (IANA registries:
 * loopback, private, link-local, CGNAT, ULA, NAT64, 6to4, Teredo, benchmarking, documentation,
 * multicast, reserved, IPv4-mapped forms of them) is refused in both modes as `validation_failed`
 * naming `url`; so are credentials in the URL and host names outside RFC 1035/1123. Loopback `http`
 * stays allowed in test mode (local receivers). Names resolved through a controlled resolver, and the
 * delivery side (re-check, rebinding), are in packages/adapters/test/WebhookSsrf.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, send } from "@tender/client/Testing"

let server: TestServer
const accounts: Record<"test" | "live", Credentials> = {} as never

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } })
  accounts.test = await Effect.runPromise(server.accounts.create({ name: "ssrf test", mode: "test" }))
  accounts.live = await Effect.runPromise(server.accounts.create({ name: "ssrf live", mode: "live" }))
})
afterAll(() => server.close())

const register = (mode: "test" | "live", url: string) =>
  send(server, accounts[mode], "POST", "/v1/webhook_endpoints", { body: JSON.stringify({ url }) })

/** One address inside each refused range, and its edges where an off-by-one would let one through. */
const REFUSED_HOSTS = [
  "0.0.0.0", "0.255.255.255", // this network
  "10.0.0.1", "10.255.255.255", // private-use
  "100.64.0.1", "100.127.255.254", // CGNAT
  "127.0.0.1", "127.255.255.254", // loopback
  "169.254.169.254", // link-local (cloud metadata)
  "172.16.0.1", "172.31.255.254", // private-use
  "192.0.0.1", "192.0.0.170", // IETF protocol assignments
  "192.0.2.1", "198.51.100.1", "203.0.113.10", // documentation
  "192.88.99.1", // 6to4 relay anycast
  "192.168.0.8", // private-use
  "198.18.0.1", "198.19.255.254", // benchmarking
  "224.0.0.1", "239.255.255.250", // multicast
  "240.0.0.1", "255.255.255.255", // reserved, broadcast
  "[::]", "[::1]", // unspecified, loopback
  "[::ffff:127.0.0.1]", "[::ffff:10.0.0.1]", "[::ffff:169.254.169.254]", // IPv4-mapped: the v4 inside decides
  "[::127.0.0.1]", // IPv4-compatible (deprecated)
  "[64:ff9b::a00:1]", "[64:ff9b:1::1]", // NAT64
  "[100::1]", // discard-only
  "[2001::1]", "[2001:0:ffff::1]", // Teredo
  "[2001:2::1]", // benchmarking
  "[2001:db8::1]", "[3fff::1]", // documentation
  "[2002:a00:1::1]", // 6to4
  "[fc00::1]", "[fd00::1]", // unique local
  "[fe80::1]", "[fec0::1]", // link-local, site-local
  "[ff02::1]", "[ff0e::1]" // multicast
]

describe("webhook endpoint URLs: SSRF at registration", () => {
  it.each(["test", "live"] as const)("%s mode: every special-purpose address is refused, naming url; their public neighbours are not", async (mode) => {
    const refused = []
    for (const host of REFUSED_HOSTS) {
      const reply = await register(mode, `https://${host}/hook`)
      refused.push({ host, status: reply.status, code: reply.json?.code, field: reply.json?.errors?.[0]?.field })
    }
    expect(refused).toEqual(REFUSED_HOSTS.map((host) => ({ host, status: 400, code: "validation_failed", field: "url" })))
    for (const host of ["93.184.215.14", "100.128.0.1", "172.32.0.1", "198.20.0.1", "223.255.255.254", "[2606:4700::1111]", "[::ffff:93.184.215.14]"]) {
      expect({ host, status: (await register(mode, `https://${host}/hook`)).status }).toEqual({ host, status: 201 })
    }
  })

  it.each(["test", "live"] as const)("%s mode: credentials, long or malformed host names and long URLs are refused", async (mode) => {
    const label = "a".repeat(63)
    const bad = [
      "https://user:pass@93.184.215.14/hook",
      "https://user@93.184.215.14/hook",
      `https://${"a".repeat(5_000)}.com/hook`,
      `https://${[label, label, label, "a".repeat(58)].join(".")}.com/hook`, // 254 characters
      `https://${"a".repeat(64)}.com/hook`, // a label of 64
      "https://under_score.example.com/hook",
      "https://-leading.example.com/hook",
      `https://93.184.215.14/${"p".repeat(2_048)}`
    ]
    for (const url of bad) {
      const reply = await register(mode, url)
      expect({ url: url.slice(0, 80), status: reply.status, code: reply.json?.code, field: reply.json?.errors?.[0]?.field })
        .toEqual({ url: url.slice(0, 80), status: 400, code: "validation_failed", field: "url" })
    }
  })

  it("test mode: http on a loopback host stays allowed (local receivers); https on loopback, or http elsewhere, is not", async () => {
    for (const url of ["http://127.0.0.1:4242/hooks", "http://localhost:4242/hooks", "http://[::1]:4242/hooks"]) {
      expect({ url, status: (await register("test", url)).status }).toEqual({ url, status: 201 })
    }
    for (const url of ["https://127.0.0.1/hooks", "https://localhost/hooks", "http://10.0.0.1/hooks"]) {
      expect({ url, status: (await register("test", url)).status }).toEqual({ url, status: 400 })
    }
    for (const url of ["http://127.0.0.1:4242/hooks", "http://localhost:4242/hooks"]) {
      expect({ url, status: (await register("live", url)).status }).toEqual({ url, status: 400 })
    }
  })

  it("test mode: a local receiver on the server's own port is refused, on every loopback spelling", async () => {
    const own = new URL(server.baseUrl).port
    for (const url of [`http://127.0.0.1:${own}/v1/payments`, `http://localhost:${own}/`, `http://[::1]:${own}/`, `http://127.0.0.2:${own}/`]) {
      const reply = await register("test", url)
      expect({ url, status: reply.status, code: reply.json?.code, field: reply.json?.errors?.[0]?.field, message: reply.json?.errors?.[0]?.message })
        .toEqual({ url, status: 400, code: "validation_failed", field: "url", message: `must not point at loopback port ${own} (used by this server)` })
    }
  })

  it("an update to a refused URL is refused too", async () => {
    const created = await register("test", "https://93.184.215.14/hook")
    const reply = await send(server, accounts.test, "POST", `/v1/webhook_endpoints/${created.json.id}`, {
      body: JSON.stringify({ url: "https://169.254.169.254/latest/meta-data" })
    })
    expect({ status: reply.status, code: reply.json.code, field: reply.json.errors?.[0]?.field }).toEqual({ status: 400, code: "validation_failed", field: "url" })
  })
})
