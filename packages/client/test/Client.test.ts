/**
 * The typed client over a real server (memory storage): signed round trips through the Promise
 * facade and the Effect client, responses that do not verify, the API's error envelopes, and that
 * the client has a method for every operation of the served OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import type { CustomerId } from "@tender/api/Ids"
import { Api } from "@tender/api/Api"
import { startTestServer, type TestServer } from "@tender/http/testing/TestServer"
import { createTenderClient, TenderApiError, TenderClient, type TenderPromiseClient, UnverifiedResponse } from "../src/index.ts"

let server: TestServer
let credentials: { secretKey: string; signingSecret: string }
let tender: TenderPromiseClient
let seq = 0
const ref = (label: string) => `${label}-${Date.now()}-${++seq}`

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } })
  const account = await Effect.runPromise(server.accounts.create({ name: "client", mode: "test" }))
  credentials = { secretKey: account.secret_key, signingSecret: account.signing_secret }
  tender = createTenderClient({ baseUrl: server.baseUrl, ...credentials })
})
afterAll(() => server.close())

const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected a rejection")
}

describe("round trips through the Promise facade (signed requests, verified responses)", () => {
  it("lists payment methods, vaults a card, pays, and reads the order and transaction back", async () => {
    const methods = await tender.paymentMethods.list({ query: { country: "US", currency: "USD" } })
    expect(methods.data.map((m) => m.code)).toContain("card")

    const card = await tender.testHelpers.createCardToken({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
    expect(card.token).toMatch(/^tok_/)

    const merchant_reference = ref("client-pay")
    const payment = await tender.payments.create({
      amount: "12.50",
      currency: "USD",
      country: "US",
      merchant_reference,
      payment_method: { code: "card", details: { card_token: card.token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
    })
    expect(payment).toMatchObject({ status: "completed", amount: 12.5, merchant_reference })

    const order = await tender.orders.get({ params: { id: payment.order_id } })
    expect(order).toMatchObject({ id: payment.order_id, merchant_reference })
    expect(await tender.orders.byReference({ params: { merchant_reference } })).toMatchObject({ id: payment.order_id })
    const transaction = await tender.transactions.get({ params: { id: payment.transaction_id } })
    expect(transaction).toMatchObject({ id: payment.transaction_id, order_id: payment.order_id })
  })

  it("creates and reads a customer, and calls an endpoint that takes no arguments", async () => {
    const customer = await tender.customers.create({ email: "ada@example.com", name: "Ada Lovelace" })
    expect(customer.id).toMatch(/^cus_/)
    expect(await tender.customers.get({ params: { id: customer.id } })).toEqual(customer)
    expect(await tender.webhookEndpoints.list()).toEqual({ data: [] })
  })

  it("a webhook endpoint's whole life (POST, GET, POST update, DELETE) and a query string signed as sent", async () => {
    const created = await tender.webhookEndpoints.create({ url: "http://127.0.0.1:9/hooks", enabled_events: ["payment.succeeded"] })
    const updated = await tender.webhookEndpoints.update({ params: { id: created.id }, payload: { description: "orders", status: "disabled" } })
    expect(updated).toMatchObject({ id: created.id, description: "orders", status: "disabled" })
    expect(await tender.webhookEndpoints.get({ params: { id: created.id } })).toEqual(updated)
    expect(await tender.webhookEndpoints.delete({ params: { id: created.id } })).toEqual({ id: created.id, deleted: true })
    // Query parameters (one encoded from a number) are part of what is signed and verified.
    expect(await tender.webhookDeliveries.list({ query: { endpoint_id: created.id, status: "failed", limit: 5 } }))
      .toMatchObject({ data: [] })
  })

  it("the Effect client is the same API, typed end to end", async () => {
    const customer = await Effect.runPromise(Effect.gen(function*() {
      const client = yield* TenderClient.make({ baseUrl: server.baseUrl, ...credentials })
      const created = yield* client.customers.create({ payload: { name: "Grace Hopper" } })
      // The Effect client keeps the API's branded id types.
      return yield* client.customers.get({ params: { id: created.id as CustomerId } })
    }))
    expect(customer).toMatchObject({ name: "Grace Hopper", email: null })
  })
})

describe("a response that does not verify is rejected, not read", () => {
  /** A fetch that lets `change` rewrite each answer before the client sees it. */
  const intercepting = (change: (body: Uint8Array, headers: Headers) => void): typeof fetch => async (input, init) => {
    const response = await fetch(input, init)
    const body = new Uint8Array(await response.arrayBuffer())
    const headers = new Headers(response.headers)
    change(body, headers)
    return new Response(body, { status: response.status, headers })
  }

  it("one flipped byte of the body: UnverifiedResponse (invalid), also from the Effect client", async () => {
    const flipOne = intercepting((body) => {
      // The first lowercase letter (inside a key or string): still valid JSON after the flip.
      const at = body.findIndex((byte) => byte >= 0x61 && byte <= 0x7a)
      body[at] -= 0x20
    })
    const tampered = createTenderClient({ baseUrl: server.baseUrl, ...credentials, fetch: flipOne })
    const error = await rejection(tampered.paymentMethods.list({ query: { country: "US", currency: "USD" } }))
    expect(error).toBeInstanceOf(UnverifiedResponse)
    expect(error).toMatchObject({ _tag: "UnverifiedResponse", status: 200, verdict: "invalid", requestId: expect.stringMatching(/^req_/) })

    const failure = await Effect.runPromise(Effect.gen(function*() {
      const client = yield* TenderClient.make({ baseUrl: server.baseUrl, ...credentials, fetch: flipOne })
      return yield* Effect.flip(client.webhookEndpoints.list())
    }))
    expect(failure).toMatchObject({ _tag: "UnverifiedResponse", verdict: "invalid" })
  })

  it("no signature header, or a malformed one: UnverifiedResponse (missing / malformed)", async () => {
    const stripped = createTenderClient({
      baseUrl: server.baseUrl,
      ...credentials,
      fetch: intercepting((_, headers) => headers.delete("x-signature"))
    })
    expect(await rejection(stripped.webhookEndpoints.list())).toMatchObject({ _tag: "UnverifiedResponse", verdict: "missing" })
    const garbled = createTenderClient({
      baseUrl: server.baseUrl,
      ...credentials,
      fetch: intercepting((_, headers) => headers.set("x-signature", "v1=nothex"))
    })
    expect(await rejection(garbled.webhookEndpoints.list())).toMatchObject({ _tag: "UnverifiedResponse", verdict: "malformed" })
  })

  it("a client with the wrong signing secret cannot trust the server's answer (its 401 included)", async () => {
    const wrong = createTenderClient({ baseUrl: server.baseUrl, secretKey: credentials.secretKey, signingSecret: "whsec_wrong" })
    expect(await rejection(wrong.webhookEndpoints.list())).toMatchObject({ _tag: "UnverifiedResponse", status: 401, verdict: "invalid" })
  })

  it("an unknown secret key: the 401 cannot be signed (no account), so it is UnverifiedResponse (missing)", async () => {
    const unknown = createTenderClient({ baseUrl: server.baseUrl, secretKey: "sk_test_unknown000000000000", signingSecret: "whsec_x" })
    expect(await rejection(unknown.webhookEndpoints.list())).toMatchObject({ _tag: "UnverifiedResponse", status: 401, verdict: "missing" })
  })
})

describe("error answers reject with the API's envelope as TenderApiError", () => {
  it("404 customer_not_found", async () => {
    const error = await rejection(tender.customers.get({ params: { id: "cus_doesnotexist0000" } }))
    expect(error).toBeInstanceOf(TenderApiError)
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({ status: 404, code: "customer_not_found", request_id: expect.stringMatching(/^req_/) })
  })

  it("400 validation_failed names every offending field in errors[]", async () => {
    const error = await rejection(tender.customers.create({ email: "not-an-email", phone: "call me" })) as TenderApiError
    expect(error).toMatchObject({ status: 400, code: "validation_failed" })
    expect(error.errors?.map((e) => e.field).sort()).toEqual(["email", "phone"])
    expect(error.message).toBe(error.message.trim())
  })

  it("409 duplicate_merchant_reference_id on a retried create", async () => {
    const card = await tender.testHelpers.createCardToken({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
    const body = { amount: "5.00", currency: "USD", country: "US", merchant_reference: ref("dup"), payment_method: { code: "card", details: { card_token: card.token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } } }
    await tender.payments.create(body)
    expect(await rejection(tender.payments.create(body))).toMatchObject({ status: 409, code: "duplicate_merchant_reference_id" })
  })
})

describe("the client covers the OpenAPI document", () => {
  it("every operation of GET /v1/openapi.json is a method of both clients, and nothing else is", async () => {
    const document = await (await fetch(`${server.baseUrl}/v1/openapi.json`)).json() as {
      paths: Record<string, Record<string, { operationId: string }>>
    }
    // The browser SDK's routes are listed too, but they are the customer's browser's (tender.js calls
    // them with a publishable key and a client secret, unsigned), not the merchant server's: this
    // client signs with the secret key and has no business calling them.
    const isBrowsers = (path: string) => path.startsWith("/v1/client/")
    expect(Object.keys(document.paths).filter(isBrowsers).length).toBeGreaterThan(0)
    const operations = Object.entries(document.paths).filter(([path]) => !isBrowsers(path)).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ id: op.operationId, route: `${method.toUpperCase()} ${path}` }))
    )
    expect(operations.length).toBeGreaterThan(30)

    const effectClient = await Effect.runPromise(TenderClient.make({ baseUrl: server.baseUrl, ...credentials })) as unknown as Record<string, Record<string, unknown>>
    const facade = tender as unknown as Record<string, Record<string, unknown>>
    const methodsOf = (client: Record<string, Record<string, unknown>>) =>
      Object.entries(client).flatMap(([group, methods]) =>
        Object.entries(methods).filter(([, f]) => typeof f === "function").map(([name]) => `${group}.${name}`)
      ).sort()
    const ids = operations.map((o) => o.id).sort()
    expect(methodsOf(facade)).toEqual(ids)
    expect(methodsOf(effectClient)).toEqual(ids)

    // Each method calls the document's route: compare method and path template per operation.
    const routes = Object.values(Api.groups).flatMap((group) =>
      Object.values(group.endpoints).map((e) => ({
        id: `${group.identifier}.${e.identifier}`,
        route: `${e.method} ${e.path.replace(/:(\w+)/g, "{$1}")}`
      }))
    )
    expect(routes.sort((a, b) => a.id.localeCompare(b.id))).toEqual(operations.sort((a, b) => a.id.localeCompare(b.id)))
  })
})
