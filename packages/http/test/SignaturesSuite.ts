/**
 * The signature suite (issue 12, item 1): no response signature ever authorises a request, and no
 * write is accepted twice. Response-as-request replay is generated from the HttpApi value, so a new
 * route is covered the day it appears; then same-request replay (sequential and raced), method swap,
 * a query added after signing, bodiless methods, and signing-secret rotation with overlap (requests,
 * responses and webhooks).
 */
import { createServer, type IncomingHttpHeaders, request as httpRequest, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TenderConfig } from "@tender/adapters/Config"
import { parseSignatureHeader, signatureHeader, verifySignature } from "@tender/api/Signature"
import { type Credentials, send } from "@tender/client/Testing"
import { requestHeaders } from "@tender/client/Raw"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { HttpApiGroup } from "effect/http-api"
import { Api } from "../src/Api.ts"
import * as Routes from "../src/Routes.ts"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type TenderPromiseClient, typedClient } from "./support/Typed.ts"

interface RawAnswer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly text: string
  readonly json: any
}

/** Every route of the API, as the HttpApi value declares it. */
const apiRoutes = (Object.values(Api.groups as Record<string, unknown>) as ReadonlyArray<HttpApiGroup.Top>).flatMap((group) =>
  Object.values(group.endpoints).map((endpoint) => ({ method: endpoint.method, path: endpoint.path }))
)
const routeTable = Routes.fromApi(Api, [])

const nowSeconds = () => Math.floor(Date.now() / 1000)

export const signaturesSuite = (storage: Pick<TenderConfig, "storage" | "dataDir" | "redisUrl">) => {
  let server: TestServer
  let merchant: Credentials & { account_id: string }
  let tender: TenderPromiseClient
  let seq = 0
  const ref = (label: string) => `${label}-${Date.now()}-${++seq}`

  /**
   * One request exactly as given (any method may carry a body, the signature header is whatever
   * the test says): what an attacker holding the API key, but not the signing secret, can send.
   */
  const raw = (method: string, path: string, options: { body?: string; signature?: string; key?: string } = {}) =>
    new Promise<RawAnswer>((resolve, reject) => {
      const url = new URL(path, server.baseUrl)
      const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? merchant.secret_key}` }
      if (options.signature !== undefined) headers["x-signature"] = options.signature
      if (options.body !== undefined) {
        headers["content-type"] = "application/json"
        headers["content-length"] = String(Buffer.byteLength(options.body))
      }
      const outgoing = httpRequest(url, { method, headers }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          let json: unknown
          try {
            json = text === "" ? undefined : JSON.parse(text)
          } catch {
            json = undefined
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json })
        })
      })
      outgoing.on("error", reject)
      outgoing.end(options.body)
    })

  /** A signed request's headers, captured: the signature of exactly this path and body at `t`. */
  const captured = (path: string, body = "", t = nowSeconds(), creds: Credentials = merchant) =>
    requestHeaders({ secretKey: creds.secret_key, signingSecret: creds.signing_secret }, path, body, t)["x-signature"]

  const expectCode = (answer: { status: number; json: any }, status: number, code: string) =>
    expect({ status: answer.status, code: answer.json?.code }).toEqual({ status, code })

  // Fixtures every route's path parameters are filled from, and read back to prove nothing changed.
  let receiverUrl = ""
  let receiver: Server
  const deliveries: Array<{ path: string; signature: string; body: string }> = []
  let endpointId = ""
  let customerId = ""
  let orderId = ""

  const tokenize = async (client: TenderPromiseClient) =>
    (await client.testHelpers.createCardToken({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).token

  const authorize = async (client: TenderPromiseClient = tender, amount = "10.00") =>
    client.payments.create({
      amount,
      currency: "USD",
      country: "US",
      capture_method: "manual",
      merchant_reference: ref("auth"),
      payment_method: { code: "card", details: { card_token: await tokenize(client), stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
    })

  const newEndpoint = async (creds: Credentials = merchant) =>
    (await send(server, creds, "POST", "/v1/webhook_endpoints", {
      body: JSON.stringify({ url: receiverUrl, enabled_events: ["*"], description: ref("hooks") })
    })).json.id as string

  /** The readable state of every fixture, to compare before and after the replays. */
  const snapshot = async () => {
    const paths = [
      `/v1/webhook_endpoints/${endpointId}`,
      "/v1/webhook_endpoints",
      `/v1/customers/${customerId}`,
      `/v1/orders/${orderId}`
    ]
    return Promise.all(paths.map(async (path) => (await send(server, merchant, "GET", path)).json))
  }

  /** A concrete path for a route: its parameters filled with the fixtures of its resource. */
  const concrete = (path: string) => {
    const resource = path.split("/")[2]
    const value = resource === "webhook_endpoints"
      ? endpointId
      : resource === "customers"
      ? customerId
      : resource === "orders" || resource === "transfers" || resource === "test_helpers"
      ? orderId
      : "unknown_000000"
    return path.replace(/:[A-Za-z0-9_]+/g, value)
  }

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        deliveries.push({
          path: request.url ?? "",
          signature: String(request.headers["x-signature"]),
          body: Buffer.concat(chunks).toString("utf8")
        })
        response.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const address = receiver.address()
    receiverUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/hooks`

    server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, storage)
    merchant = await Effect.runPromise(server.accounts.create({ name: "signatures", mode: "test" }))
    tender = typedClient(server, merchant)
    endpointId = await newEndpoint()
    customerId = (await tender.customers.create({ name: "Replay Target" })).id
    orderId = (await authorize()).order_id
  }, 120_000)

  afterAll(async () => {
    await server.close()
    await new Promise((resolve) => receiver.close(resolve))
  })

  describe("response-as-request replay (every route of the HttpApi value)", () => {
    it("the route list is generated: it covers the API, the deletable endpoint included", () => {
      expect(apiRoutes.length).toBeGreaterThan(30)
      expect(apiRoutes).toContainEqual({ method: "DELETE", path: "/v1/webhook_endpoints/:id" })
      for (const route of apiRoutes) expect(routeTable.requiresKey(concrete(route.path))).toBe(true)
    })

    it("an unsigned or wrongly signed call's 401 answer, replayed on every method of its path, is 401 invalid_signature; nothing changes", async () => {
      const before = await snapshot()
      for (const route of apiRoutes) {
        const path = concrete(route.path)
        const wrong = requestHeaders({ secretKey: merchant.secret_key, signingSecret: "whsec_wrong" }, path, "")["x-signature"]
        for (const signature of [undefined, wrong]) {
          const fished = await raw(route.method, path, { signature })
          expect(fished.status, `${route.method} ${path}`).toBe(401)
          const answerSignature = String(fished.headers["x-signature"])
          expect(verifySignature(merchant.signing_secret, answerSignature, path, fished.text, nowSeconds())).toBe("valid")
          for (const method of routeTable.methodsFor(path)) {
            const replay = await raw(method, path, { body: fished.text, signature: answerSignature })
            expect({ route: `${method} ${path}`, status: replay.status, code: replay.json?.code })
              .toEqual({ route: `${method} ${path}`, status: 401, code: "invalid_signature" })
          }
        }
      }
      expect(await snapshot()).toEqual(before)
    }, 120_000)

    it("a valid read's answer on a path that takes writes, replayed as each write there, is 401 invalid_signature", async () => {
      const before = await snapshot()
      const paths = [...new Set(apiRoutes.map((route) => concrete(route.path)))].filter((path) => {
        const methods = routeTable.methodsFor(path)
        return methods.includes("GET") && methods.some((m) => m !== "GET" && !path.endsWith("/search"))
      })
      expect(paths).toEqual(expect.arrayContaining(["/v1/webhook_endpoints", `/v1/webhook_endpoints/${endpointId}`]))
      for (const path of paths) {
        const read = await send(server, merchant, "GET", path)
        expect(read.status).toBe(200)
        for (const method of routeTable.methodsFor(path).filter((m) => m !== "GET")) {
          const replay = await raw(method, path, { body: read.text, signature: read.headers.get("x-signature")! })
          expectCode(replay, 401, "invalid_signature")
        }
      }
      expect(await snapshot()).toEqual(before)
    })

    it("a write's answer replayed as the same write is 401 invalid_signature (no second customer)", async () => {
      const created = await send(server, merchant, "POST", "/v1/customers", { body: JSON.stringify({ name: "Echo" }) })
      expect(created.status).toBe(201)
      const replay = await raw("POST", "/v1/customers", { body: created.text, signature: created.headers.get("x-signature")! })
      expectCode(replay, 401, "invalid_signature")
    })
  })

  describe("same-request replay", () => {
    const capture = (order: string) => JSON.stringify({ order_id: order, amount: "3.00", final: false })
    const captures = async (order: string) =>
      (await Effect.runPromise(server.events(order))).filter((e) => e.type === "payment.partially_captured").length

    it("a signed partial capture sent twice: the second is 409 conflict naming the first request_id; one capture", async () => {
      const order = (await authorize()).order_id
      const body = capture(order)
      const signature = captured("/v1/payments/capture", body)
      const first = await raw("POST", "/v1/payments/capture", { body, signature })
      expect(first.status).toBe(200)
      const second = await raw("POST", "/v1/payments/capture", { body, signature })
      expectCode(second, 409, "conflict")
      expect(second.json.message).toContain(String(first.headers["x-request-id"]))
      expect(await captures(order)).toBe(1)
    })

    it("both copies sent at once: exactly one is accepted", async () => {
      const order = (await authorize()).order_id
      const body = capture(order)
      const signature = captured("/v1/payments/capture", body)
      const answers = await Promise.all([0, 1, 2].map(() => raw("POST", "/v1/payments/capture", { body, signature })))
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409])
      expect(await captures(order)).toBe(1)
    })

    it("a client repeating a write signs it again (a later second if need be), and that is accepted", async () => {
      const order = (await authorize()).order_id
      const body = capture(order)
      const answers = [
        await send(server, merchant, "POST", "/v1/payments/capture", { body }),
        await send(server, merchant, "POST", "/v1/payments/capture", { body })
      ]
      expect(answers.map((a) => a.status)).toEqual([200, 200])
      expect(await captures(order)).toBe(2)
    })

    it("a client deleting an endpoint right after reading it signs the DELETE anew (the GET's signature is held)", async () => {
      const path = `/v1/webhook_endpoints/${await newEndpoint()}`
      const answers = [await send(server, merchant, "GET", path), await send(server, merchant, "DELETE", path)]
      expect(answers.map((a) => a.status)).toEqual([200, 200])
    })

    it("during a rotation overlap, a write signed under both secrets, resent under either one alone, is 409; one capture", async () => {
      const shop = await Effect.runPromise(server.accounts.create({ name: "overlap-replay", mode: "test" }))
      const rolled = await Effect.runPromise(server.accounts.rollSigningSecret(shop.account_id, 3600))
      const order = (await authorize(typedClient(server, { secret_key: shop.secret_key, signing_secret: rolled.signing_secret }))).order_id
      const [path, body, t] = ["/v1/payments/capture", capture(order), nowSeconds()]
      const both = signatureHeader([rolled.signing_secret, shop.signing_secret], t, path, body)
      expect((await raw("POST", path, { body, signature: both, key: shop.secret_key })).status).toBe(200)
      for (const secret of [shop.signing_secret, rolled.signing_secret]) {
        const alone = signatureHeader(secret, t, path, body)
        expectCode(await raw("POST", path, { body, signature: alone, key: shop.secret_key }), 409, "conflict")
      }
      expect(await captures(order)).toBe(1)
    })

    it("a write that failed (4xx) used its signature too: the replay is 409, not a second attempt", async () => {
      const body = JSON.stringify({ order_id: "ord_doesnotexist", amount: "3.00" })
      const signature = captured("/v1/payments/capture", body)
      expect((await raw("POST", "/v1/payments/capture", { body, signature })).status).toBe(404)
      expectCode(await raw("POST", "/v1/payments/capture", { body, signature }), 409, "conflict")
    })
  })

  describe("method swap, query, bodiless methods", () => {
    it("a signed GET of an endpoint sent again as DELETE is refused (409) and the endpoint stays", async () => {
      const id = await newEndpoint()
      const path = `/v1/webhook_endpoints/${id}`
      const signature = captured(path)
      expect((await raw("GET", path, { signature })).status).toBe(200)
      expectCode(await raw("DELETE", path, { signature }), 409, "conflict")
      expect((await send(server, merchant, "GET", path)).status).toBe(200)
    })

    it("a signed update sent again as DELETE with its body is refused and the endpoint stays", async () => {
      const id = await newEndpoint()
      const path = `/v1/webhook_endpoints/${id}`
      const body = JSON.stringify({ description: "renamed" })
      const signature = captured(path, body)
      expect((await raw("POST", path, { body, signature })).status).toBe(200)
      expectCode(await raw("DELETE", path, { body, signature }), 409, "conflict")
      expect((await send(server, merchant, "GET", path)).json.description).toBe("renamed")
    })

    it("a path spelled other than its route (case, doubled slash) is 404; escapes are checked as the route; a read's signature never deletes", async () => {
      const id = await newEndpoint()
      for (const path of [`/v1/Webhook_endpoints/${id}`, `/v1//webhook_endpoints/${id}`, `/v1/webhook_endpoints//${id}`, `/V1/webhook_endpoints/${id}`]) {
        const signature = captured(path)
        expectCode(await raw("GET", path, { signature }), 404, "not_found")
        expect((await raw("DELETE", path, { signature })).status, path).toBe(404)
      }
      for (const path of [`/v1/%77ebhook_endpoints/${id}`, `/v1/webhook%5Fendpoints/${id}/`]) {
        const signature = captured(path)
        expect((await raw("GET", path, { signature })).status, path).toBe(200)
        expectCode(await raw("DELETE", path, { signature }), 409, "conflict")
      }
      const listed = "/v1/webhook_endpoints;x"
      const signature = captured(listed)
      expect((await raw("GET", listed, { signature })).status).toBe(200)
      expectCode(await raw("POST", listed, { signature }), 409, "conflict")
      expect((await send(server, merchant, "GET", `/v1/webhook_endpoints/${id}`)).status).toBe(200)
    })

    it("a query string added after signing is 401 invalid_signature", async () => {
      const signature = captured("/v1/webhook_endpoints")
      expect((await raw("GET", "/v1/webhook_endpoints", { signature })).status).toBe(200)
      expectCode(await raw("GET", "/v1/webhook_endpoints?limit=1", { signature }), 401, "invalid_signature")
    })

    it("GET and DELETE refuse a body (400 invalid_request), even signed; the endpoint stays", async () => {
      const id = await newEndpoint()
      const path = `/v1/webhook_endpoints/${id}`
      expectCode(await raw("GET", path, { body: "{}", signature: captured(path) }), 400, "invalid_request")
      expectCode(await raw("DELETE", path, { body: "{}", signature: captured(path, "{}") }), 400, "invalid_request")
      expect((await send(server, merchant, "GET", path)).status).toBe(200)
    })
  })

  // PostgreSQL's replay cache made to refuse response entries (a CHECK constraint), the way a store
  // failing mid-request would: the write is done by then, so its answer must still go out, signed.
  it.skipIf(storage.storage !== "postgres" || storage.redisUrl !== undefined)(
    "a response entry the cache fails to record is logged; the write's answer still goes out, signed",
    async () => {
      const sql = (statement: string) =>
        server.run(Effect.gen(function*() {
          yield* (yield* SqlClient.SqlClient).unsafe(statement)
        }) as Effect.Effect<void>)
      await sql("ALTER TABLE replay_signatures ADD CONSTRAINT test_no_responses CHECK (kind <> 'response') NOT VALID")
      try {
        const created = await send(server, merchant, "POST", "/v1/customers", { body: JSON.stringify({ name: "Cache Down" }) })
        expect(created.status).toBe(201)
        expect((await send(server, merchant, "GET", `/v1/customers/${created.json.id}`)).status).toBe(200)
      } finally {
        await sql("ALTER TABLE replay_signatures DROP CONSTRAINT test_no_responses")
      }
    }
  )

  describe("signing-secret rotation", () => {
    const v1Count = (header: string | null | undefined) => parseSignatureHeader(header ?? undefined)?.signatures.length

    const waitForDelivery = async (count: number) => {
      for (let i = 0; i < 200 && deliveries.length < count; i++) await new Promise((r) => setTimeout(r, 25))
      expect(deliveries.length).toBeGreaterThanOrEqual(count)
      return deliveries[count - 1]
    }

    it("during the overlap both secrets verify requests, answers and webhooks carry both; after it only the new one", async () => {
      const shop = await Effect.runPromise(server.accounts.create({ name: "rotating", mode: "test" }))
      const old: Credentials = shop
      await newEndpoint(shop)
      const overlapSeconds = 3
      const rolled = await Effect.runPromise(server.accounts.rollSigningSecret(shop.account_id, overlapSeconds))
      const fresh: Credentials = { secret_key: shop.secret_key, signing_secret: rolled.signing_secret }
      expect(fresh.signing_secret).not.toBe(old.signing_secret)
      const rolledAt = Date.now()

      // `send` checks the answer verifies under the secret it signed with: both do.
      const byOld = await send(server, old, "GET", "/v1/webhook_endpoints")
      const byNew = await send(server, fresh, "GET", "/v1/webhook_endpoints")
      expect([byOld.status, byNew.status]).toEqual([200, 200])
      expect(v1Count(byNew.headers.get("x-signature"))).toBe(2)

      const seen = deliveries.length
      await authorize(typedClient(server, fresh))
      const during = await waitForDelivery(seen + 1)
      expect(v1Count(during.signature)).toBe(2)
      for (const secret of [old.signing_secret, fresh.signing_secret]) {
        expect(verifySignature(secret, during.signature, during.path, during.body, nowSeconds())).toBe("valid")
      }

      await new Promise((r) => setTimeout(r, Math.max(0, rolledAt + overlapSeconds * 1000 + 200 - Date.now())))
      const refused = await raw("GET", "/v1/webhook_endpoints", { key: shop.secret_key, signature: captured("/v1/webhook_endpoints", "", nowSeconds(), old) })
      expectCode(refused, 401, "invalid_signature")
      const after = await send(server, fresh, "GET", "/v1/webhook_endpoints")
      expect(v1Count(after.headers.get("x-signature"))).toBe(1)

      const seenAfter = deliveries.length
      await authorize(typedClient(server, fresh))
      const later = await waitForDelivery(seenAfter + 1)
      expect(v1Count(later.signature)).toBe(1)
      expect(verifySignature(fresh.signing_secret, later.signature, later.path, later.body, nowSeconds())).toBe("valid")
      expect(verifySignature(old.signing_secret, later.signature, later.path, later.body, nowSeconds())).toBe("invalid")
    }, 30_000)

    it("an overlap beyond 30 days, or negative, is refused", async () => {
      const shop = await Effect.runPromise(server.accounts.create({ name: "rotating", mode: "test" }))
      for (const overlap of [-1, 31 * 86400, Number.NaN]) {
        const error = await Effect.runPromise(Effect.flip(server.accounts.rollSigningSecret(shop.account_id, overlap)))
        expect(error.code).toBe("validation_failed")
      }
    })
  })
}
