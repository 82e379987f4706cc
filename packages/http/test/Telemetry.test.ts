/**
 * Logs and traces of a serving process (issue 13, item 5), over real HTTP on memory storage:
 * JSON logs carry level, message, timestamp and the request's id, and never a card number, CVC,
 * key or token (a payment with a card in the body, and a defect whose message holds them, scanned);
 * with an OTLP endpoint, the server's spans reach a real local OTLP/HTTP (JSON) receiver carrying
 * the request id and the route template, and no card number in any attribute.
 */
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { type Credentials, send } from "@tender/client/Testing"
import * as Telemetry from "@tender/adapters/Telemetry"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type TenderPromiseClient, typedClient } from "./support/Typed.ts"

const CARD = "4242424242424242"
const CVC = "737"

/** A route whose defect message holds everything that must never be logged (a careless library's error). */
const Boom = Layer.effectDiscard(Effect.gen(function*() {
  const router = yield* HttpRouter.HttpRouter
  yield* router.add("GET", "/boom", Effect.die(new Error(`card ${CARD} (4242 4242 4242 4242) cvc: ${CVC} key sk_test_abcdef123 secret whsec_0123abcd token tok_abc123`)))
}))

/** A merchant-initiated card charge, the card number and CVC in a request body (the test helper's tokenization). */
const charge = async (tender: TenderPromiseClient) => {
  const token = (await tender.testHelpers.createCardToken({ number: CARD, exp_month: 12, exp_year: 2035, cvc: CVC, holder_name: "Ada" })).token
  return tender.payments.create({
    amount: "25.00",
    currency: "USD",
    country: "US",
    merchant_reference: `tel-${Date.now()}-${Math.random()}`,
    payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
  })
}

describe("redact", () => {
  it.each([
    ["a plain card number", `charging ${CARD}`, "charging [card number]"],
    ["a spaced one", "card 4242 4242 4242 4242 ok", "card [card number] ok"],
    ["a dashed amex", "3782-822463-10005", "[card number]"],
    ["a JSON CVC", `{"cvc":"${CVC}"}`, `{"cvc":"[cvc]"}`],
    ["a CVC in JSON escaped again (an object logged on a JSON line)", JSON.stringify({ message: JSON.stringify({ cvc: CVC }) }), '{"message":"{\\"cvc\\":\\"[cvc]\\"}"}'],
    ["a client secret", "ord_4f3a_secret_0a1b2c3d4e5f", "ord_4f3a_secret_[redacted]"],
    ["keys, secrets, tokens, bearer", "sk_live_abc whsec_12ab tok_9z Bearer xyz", "sk_live_[redacted] whsec_[redacted] tok_[redacted] Bearer [redacted]"]
  ])("masks %s", (_label, input, output) => {
    expect(Telemetry.redact(input)).toBe(output)
  })

  it.each([
    ["a millisecond timestamp", "at 1764172800000"],
    ["a number failing the Luhn check", "order 4242424242424241"],
    ["an amount and an id", "amount 2500 ord_4f3a"]
  ])("leaves %s", (_label, input) => {
    expect(Telemetry.redact(input)).toBe(input)
  })
})

describe("JSON logs", () => {
  const lines: Array<string> = []
  let server: TestServer
  let merchant: Credentials & { account_id: string }

  beforeAll(async () => {
    server = await startTestServer({}, Boom, { storage: "memory", dataDir: ".tender-test" }, Telemetry.loggerLayer({ logFormat: "json", write: (line) => void lines.push(line) }))
    merchant = await Effect.runPromise(server.accounts.create({ name: "logs", mode: "test" }))
  })
  afterAll(() => server?.close())

  it("one JSON object a line, with level, message, timestamp and the request id; no card data, keys or secrets", async () => {
    const payment = await charge(typedClient(server, merchant))
    expect(payment.status).toBe("completed")
    const boom = await fetch(`${server.baseUrl}/boom`)
    expect(boom.status).toBe(500)
    const requestId = boom.headers.get("x-request-id")

    await expect.poll(() => lines.length).toBeGreaterThan(0)
    const entries = lines.map((line) => {
      expect(line.endsWith("\n") && !line.slice(0, -1).includes("\n")).toBe(true)
      return JSON.parse(line) as Record<string, unknown>
    })
    const failure = entries.find((entry) => entry.request_id === requestId)
    expect(failure).toMatchObject({ level: "error", message: "Unhandled failure", path: "/boom" })
    expect(new Date(String(failure!.timestamp)).toISOString()).toBe(failure!.timestamp)
    expect(String(failure!.cause)).toContain("[card number]")

    const all = lines.join("")
    for (const secret of [CARD, "4242 4242 4242 4242", `cvc: ${CVC}`, "sk_test_abcdef123", "whsec_0123abcd", "tok_abc123", merchant.secret_key, merchant.signing_secret]) {
      expect(all).not.toContain(secret)
    }
  })
})

describe("OTLP traces", () => {
  const bodies: Array<string> = []
  let receiver: Server
  let server: TestServer
  let merchant: Credentials & { account_id: string }

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += String(chunk)))
      request.on("end", () => {
        if (request.url === "/v1/traces") bodies.push(body)
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const endpoint = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`
    server = await startTestServer({}, undefined, { storage: "memory", dataDir: ".tender-test" },
      Telemetry.tracerLayer({ otlpEndpoint: endpoint, otlpProtocol: "http/json", serviceName: "tender-test", exportIntervalMs: 100 }))
    merchant = await Effect.runPromise(server.accounts.create({ name: "traces", mode: "test" }))
  })
  afterAll(async () => {
    await server?.close()
    receiver?.close()
  })

  type Attribute = { key: string; value: { stringValue?: string; intValue?: string | number } }
  type Span = { name: string; attributes: Array<Attribute> }
  const spans = () =>
    bodies.flatMap((body) => {
      const data = JSON.parse(body) as { resourceSpans: Array<{ resource: { attributes: Array<Attribute> }; scopeSpans: Array<{ spans: Array<Span> }> }> }
      return data.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((span) => ({ ...span, resource: r.resource }))))
    })
  const attribute = (span: Span, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue

  it("each request's server span carries its request id and route template; no card number anywhere", async () => {
    const payment = await charge(typedClient(server, merchant))
    const read = await send(server, merchant, "GET", `/v1/orders/${payment.order_id}`)
    expect(read.status).toBe(200)
    const requestId = read.headers.get("x-request-id")
    expect(requestId).toMatch(/^req_/)

    await expect.poll(() => spans().find((span) => attribute(span, "tender.request_id") === requestId), { timeout: 10_000 }).toBeDefined()
    const span = spans().find((s) => attribute(s, "tender.request_id") === requestId)!
    expect(attribute(span, "http.route")).toBe("/v1/orders/:id")
    expect(span.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue).toBe("tender-test")
    // The charge's request made a span too (the card went in a body before it).
    expect(spans().some((s) => attribute(s, "http.route") === "/v1/payments")).toBe(true)
    const all = bodies.join("")
    for (const secret of [CARD, "4242 4242 4242 4242", merchant.secret_key, merchant.signing_secret]) expect(all).not.toContain(secret)
  })
})
