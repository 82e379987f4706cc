/**
 * SSRF of webhook delivery, against a resolver the test controls: a HostResolver of its own over a
 * hosts map (a real adapter of the port, as the system resolver is), the real transport, and real
 * loopback listeners that count the connections they get. Registration checks a name's addresses;
 * every delivery resolves again, checks every address, and connects only to what it checked, so a
 * name re-pointed at an internal address (later, or between check and connect) reaches nothing.
 * The table of refused literals, in both modes over HTTP, is packages/http/test/WebhookSsrf.test.ts.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import {
  Accounts,
  addressKind,
  checkEndpointUrl,
  HostResolver,
  Ids,
  LISTENER_STALE_MS,
  Outbox,
  ServerListeners,
  WebhookEndpointRepo,
  WebhookPrivateReceivers,
  Webhooks,
  WebhookTransport
} from "@tender/domain"
import { Effect, Layer, type Scope } from "effect"
import { configFromEnv, type TenderConfig } from "../src/Config.ts"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as Infrastructure from "../src/Infrastructure.ts"
import * as Deployment from "../src/webhooks/Deployment.ts"
import * as WebhookTransportHttp from "../src/webhooks/WebhookTransportHttp.ts"

/**
 * The test's resolver: each name answers its address lists in turn, the last one for ever after
 * (a name re-pointed between two questions); unknown names resolve to nothing.
 */
const hostsMap = () => {
  const answers = new Map<string, Array<ReadonlyArray<string>>>()
  const asked: Array<string> = []
  const layer = Layer.succeed(
    HostResolver,
    HostResolver.of({
      resolve: (host) =>
        Effect.sync(() => {
          asked.push(host)
          const queue = answers.get(host) ?? []
          return (queue.length > 1 ? queue.shift() : queue[0]) ?? []
        })
    })
  )
  return { layer, asked, point: (host: string, ...lists: Array<ReadonlyArray<string>>) => answers.set(host, lists) }
}

/** A loopback listener answering 200 that counts every connection made to it, on `port` if given. */
const listener = (host: string, port = 0) =>
  Effect.acquireRelease(
    Effect.callback<http.Server>((resume) => {
      const server = http.createServer((request, response) => {
        request.resume()
        request.on("end", () => response.writeHead(200).end("ok"))
      })
      server.listen(port, host, () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map((server) => {
    const seen = { connections: 0, hosts: [] as Array<string | undefined> }
    server.on("connection", () => seen.connections++)
    server.on("request", (request: http.IncomingMessage) => seen.hosts.push(request.headers.host))
    return { seen, port: (server.address() as AddressInfo).port }
  }))

const BODY = new TextEncoder().encode(JSON.stringify({ id: "evt_1", type: "payment.succeeded" }))

const post = (url: string, timeoutMs = 2_000) =>
  Effect.flatMap(WebhookTransport, (transport) =>
    transport.post({ url, headers: { "content-type": "application/json" }, body: BODY, timeoutMs }))

/** A public address nothing in the test listens on: the check passes it, a connection to it goes nowhere local. */
const PUBLIC = "93.184.215.14"

describe("webhook SSRF, against a controlled resolver", () => {
  const suite = <A, E>(name: string, test: (hosts: ReturnType<typeof hostsMap>) => Effect.Effect<A, E, WebhookTransport | HostResolver | Scope.Scope>) =>
    it.live(name, () => {
      const hosts = hostsMap()
      return Effect.scoped(test(hosts)).pipe(
        Effect.provide(Layer.provideMerge(WebhookTransportHttp.layer, hosts.layer))
      )
    })

  suite("registration resolves the name: any internal address among its addresses is refused, naming url", (hosts) =>
    Effect.gen(function*() {
      const register = (mode: "test" | "live", url: string) =>
        Effect.flip(checkEndpointUrl(mode, url)).pipe(Effect.map((e) => ({ url, field: e.errors?.[0]?.field, message: e.errors?.[0]?.message })))
      for (const internal of ["127.0.0.1", "10.0.0.5", "169.254.169.254", "100.64.1.1", "::1", "fd00::1", "64:ff9b::a00:1", "2002:a00:1::1", "::ffff:192.168.1.1"]) {
        hosts.point("hooks.merchant.test", [PUBLIC, internal])
        for (const mode of ["test", "live"] as const) {
          const refused = yield* register(mode, "https://hooks.merchant.test/hook")
          expect(refused).toMatchObject({ field: "url" })
          expect(refused.message).toContain(internal)
        }
      }
      hosts.point("hooks.merchant.test", [PUBLIC])
      expect(yield* checkEndpointUrl("live", "https://hooks.merchant.test/hook")).toBe("https://hooks.merchant.test/hook")
      // A name that resolves to nothing: live mode refuses it; test mode takes it (each delivery checks again).
      expect(yield* register("live", "https://nowhere.merchant.test/hook")).toMatchObject({ field: "url", message: expect.stringContaining("does not resolve") })
      expect(yield* checkEndpointUrl("test", "https://nowhere.merchant.test/hook")).toBe("https://nowhere.merchant.test/hook")
    }))

  suite("a name registered on a public address that later resolves internal: the delivery fails, no connection made", (hosts) =>
    Effect.gen(function*() {
      const target = yield* listener("127.0.0.1")
      const url = `https://hooks.merchant.test:${target.port}/hook`
      hosts.point("hooks.merchant.test", [PUBLIC])
      yield* checkEndpointUrl("live", url)
      for (const internal of [["127.0.0.1"], ["::ffff:127.0.0.1"], [PUBLIC, "127.0.0.1"]]) {
        hosts.point("hooks.merchant.test", internal)
        const outcome = yield* post(url)
        expect(outcome).toMatchObject({ _tag: "Failed", error: expect.stringContaining("127.0.0.1") })
      }
      expect(target.seen.connections).toBe(0)
    }))

  suite("rebinding between check and connect: the connection goes to the checked address, never the new one", (hosts) =>
    Effect.gen(function*() {
      const internal = yield* listener("127.0.0.1")
      // Public when checked, loopback for anyone asking after.
      hosts.point("rebind.merchant.test", [PUBLIC], ["127.0.0.1"])
      const outcome = yield* post(`https://rebind.merchant.test:${internal.port}/hook`, 1_000)
      expect(outcome._tag).toBe("Failed")
      expect(internal.seen.connections).toBe(0)
      expect(hosts.asked).toEqual(["rebind.merchant.test"])
    }))

  suite("the checked address is the one connected to, with the name in the Host header (a local receiver)", (hosts) =>
    Effect.gen(function*() {
      const checked = yield* listener("127.0.0.1")
      const other = yield* listener("127.0.0.2", checked.port)
      hosts.point("localhost", ["127.0.0.1"], ["127.0.0.2"])
      expect(yield* post(`http://localhost:${checked.port}/hook`)).toMatchObject({ _tag: "Answered", status: 200 })
      expect(checked.seen.hosts).toEqual([`localhost:${checked.port}`])
      expect(other.seen.connections).toBe(0)
    }))

  suite("a stored URL that registration would refuse today is refused at delivery (https on loopback, http elsewhere)", (hosts) =>
    Effect.gen(function*() {
      const target = yield* listener("127.0.0.1")
      hosts.point("localhost", ["127.0.0.1"])
      hosts.point("hooks.merchant.test", ["127.0.0.1"])
      for (const url of [
        `https://127.0.0.1:${target.port}/hook`,
        `https://localhost:${target.port}/hook`,
        `https://[::ffff:7f00:1]:${target.port}/hook`,
        `http://hooks.merchant.test:${target.port}/hook`
      ]) {
        expect({ url, outcome: (yield* post(url))._tag }).toEqual({ url, outcome: "Failed" })
      }
      expect(target.seen.connections).toBe(0)
    }))
})

describe("TENDER_WEBHOOK_ALLOW_PRIVATE", () => {
  it.live("allows private-use, CGNAT and unique-local receivers; loopback, link-local and the rest stay refused", () =>
    Effect.gen(function*() {
      const refusedUnlessPrivate = ["https://10.1.2.3/hook", "https://172.16.0.9/hook", "https://192.168.1.20/hook", "https://100.64.0.7/hook", "https://[fd00::7]/hook"]
      const alwaysRefused = ["https://127.0.0.1/hook", "https://169.254.169.254/hook", "https://[fe80::1]/hook", "https://198.18.0.1/hook", "https://[64:ff9b::a00:1]/hook"]
      for (const url of [...refusedUnlessPrivate, ...alwaysRefused]) {
        expect({ url, refused: (yield* Effect.flip(checkEndpointUrl("live", url)))._tag }).toEqual({ url, refused: "ValidationFailed" })
      }
      const withPrivate = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, WebhookPrivateReceivers, true)
      for (const url of refusedUnlessPrivate) expect(yield* withPrivate(checkEndpointUrl("live", url))).toBe(url)
      for (const url of alwaysRefused) {
        expect({ url, refused: (yield* withPrivate(Effect.flip(checkEndpointUrl("live", url))))._tag }).toEqual({ url, refused: "ValidationFailed" })
      }
    }).pipe(Effect.provide(hostsMap().layer)))

  it.live("is read from the environment and reaches the use case through the infrastructure", () => {
    const config = configFromEnv({ storage: "memory", dataDir: ".tender-unused" }, { TENDER_WEBHOOK_ALLOW_PRIVATE: "true" })
    expect(config.webhookAllowPrivate).toBe(true)
    expect(configFromEnv({ storage: "memory" }, {}).webhookAllowPrivate).toBeUndefined()
    return Effect.gen(function*() {
      const accounts = yield* Accounts
      const account = yield* accounts.get((yield* accounts.create({ name: "private receivers", mode: "live" })).account_id)
      const endpoint = yield* (yield* Webhooks).createEndpoint(account, { url: "https://10.1.2.3/hook" })
      expect(endpoint.url).toBe("https://10.1.2.3/hook")
      // The transport holds deliveries to the same rule (here: refused for loopback, whatever the setting).
      expect(yield* post("https://127.0.0.1:1/hook")).toMatchObject({ _tag: "Failed", error: expect.stringContaining("loopback") })
    }).pipe(Effect.provide(Layer.mergeAll(Accounts.layer, Webhooks.layer).pipe(Layer.provideMerge(Infrastructure.layer(config)))))
  })
})

describe("TENDER_WEBHOOK_ALLOW_LOOPBACK and the reserved loopback ports", () => {
  const registerTest = (url: string) =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const account = yield* accounts.get((yield* accounts.create({ name: "local receivers", mode: "test" })).account_id)
      return yield* (yield* Webhooks).createEndpoint(account, { url })
    })
  const withInfrastructure = (config: ReturnType<typeof configFromEnv>) =>
    Effect.provide(Layer.mergeAll(Accounts.layer, Webhooks.layer).pipe(Layer.provideMerge(Infrastructure.layer(config))))

  it.live("off: a test-mode local receiver is refused at registration, and a stored one at delivery, no connection made", () => {
    const config = configFromEnv({ storage: "memory", dataDir: ".tender-unused" }, { TENDER_WEBHOOK_ALLOW_LOOPBACK: "false" })
    expect(config.webhookAllowLoopback).toBe(false)
    expect(configFromEnv({ storage: "memory" }, {}).webhookAllowLoopback).toBeUndefined()
    return Effect.gen(function*() {
      const target = yield* listener("127.0.0.1")
      for (const url of [`http://127.0.0.1:${target.port}/hook`, `http://localhost:${target.port}/hook`, `http://[::1]:${target.port}/hook`]) {
        const refused = yield* Effect.flip(registerTest(url))
        expect({ url, refused }).toMatchObject({ url, refused: { _tag: "ValidationFailed", errors: [{ field: "url", message: expect.stringContaining("loopback receivers are turned off") }] } })
      }
      // Registered while allowed, delivered after the operator turned it off.
      expect(yield* post(`http://127.0.0.1:${target.port}/hook`)).toMatchObject({ _tag: "Failed", error: expect.stringContaining("turned off") })
      expect(target.seen.connections).toBe(0)
    }).pipe(Effect.scoped, withInfrastructure(config))
  })

  it.live("on (the default): local receivers work, except on this server's, the database's and Redis's ports", () => {
    const config = configFromEnv({
      storage: "memory",
      dataDir: ".tender-unused",
      listenPort: 4100,
      databaseUrl: "postgres://tender@127.0.0.1:4101/tender"
    }, {})
    return Effect.gen(function*() {
      const target = yield* listener("127.0.0.1")
      expect(yield* registerTest(`http://127.0.0.1:${target.port}/hook`)).toMatchObject({ url: `http://127.0.0.1:${target.port}/hook` })
      expect(yield* post(`http://localhost:${target.port}/hook`)).toMatchObject({ _tag: "Answered", status: 200 })
      for (const port of [4100, 4101]) {
        for (const url of [`http://127.0.0.1:${port}/`, `http://localhost:${port}/x`, `http://[::1]:${port}/`]) {
          const refused = yield* Effect.flip(registerTest(url))
          expect({ url, refused }).toMatchObject({ url, refused: { errors: [{ field: "url", message: `must not point at loopback port ${port} (used by this server)` }] } })
          expect(yield* post(url)).toMatchObject({ _tag: "Failed", error: expect.stringContaining(`loopback port ${port}`) })
        }
      }
    }).pipe(Effect.scoped, withInfrastructure(config))
  })

  it.live("a URL without a port is port 80; only the ports this server uses are refused", () =>
    Effect.gen(function*() {
      const layerFor = (config: Partial<ReturnType<typeof configFromEnv>>) =>
        Layer.mergeAll(Accounts.layer, Webhooks.layer).pipe(Layer.provideMerge(Infrastructure.layer(configFromEnv({ storage: "memory", dataDir: ".tender-unused", ...config }, {}))))
      expect(yield* Effect.flip(registerTest("http://localhost/hook").pipe(Effect.provide(layerFor({ listenPort: 80 }))))).toMatchObject({
        errors: [{ field: "url", message: "must not point at loopback port 80 (used by this server)" }]
      })
      expect(yield* registerTest("http://localhost:6379/hook").pipe(Effect.provide(layerFor({})))).toMatchObject({ url: "http://localhost:6379/hook" })
    }))

  it.live.skipIf(process.env.REDIS_URL === undefined)("with REDIS_URL, its port is refused", () => {
    const redisUrl = process.env.REDIS_URL!
    const port = new URL(redisUrl).port || "6379"
    return Effect.flip(registerTest(`http://127.0.0.1:${port}/hook`)).pipe(
      Effect.map((refused) => expect(refused).toMatchObject({ errors: [{ field: "url", message: `must not point at loopback port ${port} (used by this server)` }] })),
      withInfrastructure(configFromEnv({ storage: "memory", dataDir: ".tender-unused", redisUrl }, {}))
    )
  })
})

/** This machine's private-use, CGNAT and unique-local addresses (TENDER_WEBHOOK_ALLOW_PRIVATE lets endpoints name them). */
const privateMachineAddresses = Deployment.machineAddresses().filter((address) => addressKind(address) === "private")

describe("this deployment's addresses and ports (issue 21 item 10: no port of this deployment, also not on a private address)", () => {
  /**
   * The receiver policy as the infrastructure builds it for `config`, over memory storage (the
   * servers' rows) and the test's resolver, with the operator's TENDER_WEBHOOK_ALLOW_PRIVATE on:
   * registration (`checkEndpointUrl`) and the transport (each delivery) see the same places.
   */
  const deployment = <A, E>(
    config: Partial<TenderConfig>,
    test: (hosts: ReturnType<typeof hostsMap>) => Effect.Effect<A, E, WebhookTransport | HostResolver | ServerListeners | Scope.Scope>
  ) => {
    const hosts = hostsMap()
    const world = WebhookTransportHttp.layer.pipe(
      Layer.provideMerge(Deployment.layer({ storage: "memory", dataDir: ".tender-unused", ...config })),
      Layer.provideMerge(Layer.mergeAll(hosts.layer, Infrastructure.memoryStorage.pipe(Layer.provide(IdsRandom.layer)))),
      Layer.provideMerge(Layer.succeed(WebhookPrivateReceivers, true))
    )
    return Effect.scoped(test(hosts)).pipe(Effect.provide(world))
  }
  const refusal = (mode: "test" | "live", url: string) =>
    Effect.flip(checkEndpointUrl(mode, url)).pipe(Effect.map((e) => e.errors?.[0]))

  it.live("the database's and Redis's names, resolved: refused at their address and port, at registration and at delivery; their neighbours are not", () =>
    deployment({ databaseUrl: "postgres://tender@db.internal.test:6543/tender", redisUrl: "redis://cache.internal.test" }, (hosts) =>
      Effect.gen(function*() {
        hosts.point("db.internal.test", ["10.9.8.7"])
        hosts.point("cache.internal.test", ["fd00:9::6"])
        for (const [url, address, port] of [["https://10.9.8.7:6543/hook", "10.9.8.7", 6543], ["https://[fd00:9::6]:6379/hook", "fd00:9::6", 6379]] as const) {
          expect({ url, refused: yield* refusal("live", url) }).toEqual({ url, refused: { field: "url", message: `must not point at ${address} port ${port} (used by this server)` } })
          // Delivery of a URL stored before: a failed attempt with the reason, nothing connected (the address is nobody's here).
          expect(yield* post(url)).toMatchObject({ _tag: "Failed", error: `endpoint URL must not point at ${address} port ${port} (used by this server)` })
        }
        // The same port on a loopback local receiver: refused as before, whatever host the URL named.
        expect(yield* refusal("test", "http://127.0.0.1:6543/hook")).toEqual({ field: "url", message: "must not point at loopback port 6543 (used by this server)" })
        for (const url of ["https://10.9.8.7:6544/hook", "https://10.9.8.8:6543/hook", "https://[fd00:9::6]/hook", "https://[fd00:9::7]:6379/hook"]) {
          expect(yield* checkEndpointUrl("live", url)).toBe(url)
        }
      })))

  it.live("a receiver's name that points at the database, now or only by the time of a delivery: refused, no connection made", () =>
    deployment({ databaseUrl: "postgres://tender@db.internal.test/tender" }, (hosts) =>
      Effect.gen(function*() {
        hosts.point("db.internal.test", ["10.9.8.7"])
        hosts.point("hooks.merchant.test", ["10.9.8.7"])
        expect(yield* refusal("live", "https://hooks.merchant.test:5432/hook")).toEqual({ field: "url", message: "must not point at 10.9.8.7 port 5432 (used by this server)" })
        hosts.point("later.merchant.test", ["10.9.8.5"], ["10.9.8.7"])
        expect(yield* checkEndpointUrl("live", "https://later.merchant.test:5432/hook")).toBe("https://later.merchant.test:5432/hook")
        expect(yield* post("https://later.merchant.test:5432/hook")).toMatchObject({ _tag: "Failed", error: "endpoint URL must not point at 10.9.8.7 port 5432 (used by this server)" })
      })))

  it.live("a server's row: its port on its machine's addresses and on loopback, as long as it is fresh", () =>
    deployment({}, () =>
      Effect.gen(function*() {
        const listeners = yield* ServerListeners
        yield* listeners.register("sibling", { port: 9100, addresses: ["10.1.1.1", "fd00:1::1"] }, LISTENER_STALE_MS)
        expect(yield* refusal("live", "https://10.1.1.1:9100/")).toEqual({ field: "url", message: "must not point at 10.1.1.1 port 9100 (used by this server)" })
        // Other spellings of its addresses (the URL parser's normal form names them).
        expect(yield* refusal("live", "https://[::ffff:10.1.1.1]:9100/")).toEqual({ field: "url", message: "must not point at ::ffff:a01:101 port 9100 (used by this server)" })
        expect(yield* refusal("live", "https://[fd00:1:0:0::1]:9100/")).toMatchObject({ message: "must not point at fd00:1::1 port 9100 (used by this server)" })
        expect(yield* refusal("test", "http://127.0.0.1:9100/")).toMatchObject({ message: "must not point at loopback port 9100 (used by this server)" })
        expect(yield* checkEndpointUrl("live", "https://10.1.1.2:9100/")).toBe("https://10.1.1.2:9100/")
        expect(yield* checkEndpointUrl("live", "https://10.1.1.1:9101/")).toBe("https://10.1.1.1:9101/")
        yield* listeners.unregister("sibling")
        expect(yield* checkEndpointUrl("live", "https://10.1.1.1:9100/")).toBe("https://10.1.1.1:9100/")
      })))

  it.live("the public, SDK and fields URLs: refused where their name points at this deployment (a server's machine, this one), not at a shared front elsewhere", () =>
    deployment({ publicUrl: "https://pay.tender.test", sdkUrl: "https://sdk.tender.test:8443", fieldsUrl: "http://fields.tender.test:8181" }, (hosts) =>
      Effect.gen(function*() {
        // The public URL behind a CDN: its address serves other sites too.
        hosts.point("pay.tender.test", [PUBLIC])
        // The SDK host is a sibling server's machine; the fields host is this one.
        hosts.point("sdk.tender.test", ["10.1.1.1"])
        hosts.point("fields.tender.test", ["127.0.0.1"])
        yield* (yield* ServerListeners).register("sibling", { port: 9100, addresses: ["10.1.1.1"] }, LISTENER_STALE_MS)
        expect(yield* checkEndpointUrl("live", `https://${PUBLIC}/hook`)).toBe(`https://${PUBLIC}/hook`)
        expect(yield* refusal("live", "https://10.1.1.1:8443/hook")).toMatchObject({ message: "must not point at 10.1.1.1 port 8443 (used by this server)" })
        expect(yield* refusal("test", "http://127.0.0.1:8181/hook")).toMatchObject({ message: "must not point at loopback port 8181 (used by this server)" })
        for (const address of privateMachineAddresses) {
          const url = `https://${address.includes(":") ? `[${address}]` : address}:8181/hook`
          expect(yield* refusal("live", url)).toMatchObject({ message: expect.stringContaining("port 8181 (used by this server)") })
        }
        expect(yield* checkEndpointUrl("live", "https://10.1.1.1:8444/hook")).toBe("https://10.1.1.1:8444/hook")
      })))

  it.live.skipIf(privateMachineAddresses.length === 0)("a database on this machine (DATABASE_URL names 127.0.0.1) is refused on the machine's private address too; one elsewhere is not", () =>
    Effect.gen(function*() {
      const [address] = privateMachineAddresses
      const url = `https://${address.includes(":") ? `[${address}]` : address}:6432/hook`
      const local = yield* deployment({ databaseUrl: "postgres://tender@127.0.0.1:6432/tender" }, () => refusal("live", url))
      expect(local).toEqual({ field: "url", message: `must not point at ${address} port 6432 (used by this server)` })
      const remote = yield* deployment({ databaseUrl: "postgres://tender@10.200.0.9:6432/tender" }, () => checkEndpointUrl("live", url))
      expect(remote).toBe(url)
    }))
})

describe("through the dispatcher", () => {
  it.live("a stored endpoint the check refuses today: the attempt is failed in the delivery log with the reason, no connection made", () =>
    Effect.gen(function*() {
      const target = yield* listener("127.0.0.1")
      const accounts = yield* Accounts
      const account = yield* accounts.get((yield* accounts.create({ name: "stored before the rules", mode: "test" })).account_id)
      // As an endpoint registered before loopback https was refused would be stored: no request can create it now.
      const at = new Date().toISOString()
      yield* (yield* WebhookEndpointRepo).insert({
        id: yield* (yield* Ids).make("webhookEndpoint"),
        account_id: account.id,
        url: `https://127.0.0.1:${target.port}/hook`,
        enabled_events: ["*"],
        description: null,
        status: "enabled",
        created_at: at,
        updated_at: at,
        version: 1
      }, 16)
      yield* (yield* Outbox).record({
        account_id: account.id,
        type: "payment.succeeded",
        livemode: false,
        processing_profile: null,
        order_id: null,
        data: { order_id: "ord_x" }
      })
      const webhooks = yield* Webhooks
      expect(yield* webhooks.dispatchDue()).toBe(1)
      const [delivery] = (yield* webhooks.listDeliveries(account, {})).data
      const { attempts, status } = yield* webhooks.getDelivery(account, delivery.id)
      expect(status).toBe("failed")
      expect(attempts).toEqual([expect.objectContaining({ status_code: null, error: expect.stringContaining("loopback") })])
      expect(target.seen.connections).toBe(0)
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.mergeAll(Accounts.layer, Webhooks.layer, Outbox.layer).pipe(
        Layer.provideMerge(Infrastructure.layer({ storage: "memory", dataDir: ".tender-unused" }))
      ))
    ))
})
