/**
 * The OpenAPI document as a real server serves it (GET /v1/openapi.json): redocly (recommended) and
 * Spectral (spectral:oas + OWASP, packages/http/openapi/spectral.yaml) each run once, over the served
 * document and a broken copy that shows each still catches a problem; then its shape.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RATE_LIMIT_HEADERS } from "@tender/api/DocumentedAnswers"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type LintProblem, lintOpenApi } from "../scripts/lint-openapi.ts"

let server: TestServer
let document: any
let problems: ReadonlyArray<LintProblem>

/** The served document with one problem for each linter: no summary (redocly), an unbounded string (Spectral). */
const broken = (served: any) => {
  const copy = structuredClone(served)
  delete copy.paths["/v1/payments"].post.summary
  delete copy.paths["/v1/payments"].post.requestBody.content["application/json"].schema.properties.merchant_reference.anyOf[0].maxLength
  return copy
}

beforeAll(async () => {
  server = await startTestServer()
  document = await (await fetch(`${server.baseUrl}/v1/openapi.json`)).json()
  problems = await lintOpenApi([document, broken(document)])
}, 60_000)
afterAll(() => server?.close())

describe("the OpenAPI document", () => {
  it("passes redocly lint (recommended rules) beyond the accepted warnings, and Spectral with the OWASP ruleset: no problem at all", () => {
    expect(problems.filter((p) => p.document === 0)).toEqual([])
  })

  it("still catches a problem: an operation without a summary (redocly), a string without maxLength (Spectral)", () => {
    const found = problems.filter((p) => p.document === 1)
    expect(found).toContainEqual(expect.objectContaining({ linter: "redocly", ruleId: "operation-summary", severity: "error" }))
    expect(found).toContainEqual(expect.objectContaining({
      linter: "spectral",
      ruleId: "owasp:api4:2023-string-limit",
      severity: "error",
      pointer: "#/paths/~1v1~1payments/post/requestBody/content/application~1json/schema/properties/merchant_reference/anyOf/0"
    }))
  })

  /** Every operation, with its path: the browser SDK's (`/v1/client/…`) apart from the merchant API's. */
  const operations = () =>
    Object.entries<object>(document.paths).flatMap(([path, item]) => Object.entries<any>(item).map(([method, op]) => ({ path, method, op })))
  const isClient = (path: string) => path.startsWith("/v1/client/")

  it("says the servers' environment and audience", () => {
    expect(document.servers).toHaveLength(1)
    expect(document.servers[0]).toMatchObject({ url: "{origin}", "x-internal": false })
    expect(document.servers[0].description).toMatch(/production/)
  })

  it("documents on every operation what the gateway answers: 429 with Retry-After, the rate-limit headers, 405, and 413/415 where a body is read", () => {
    const ops = operations()
    expect(ops.length).toBeGreaterThan(40)
    for (const { path, method, op } of ops) {
      const at = `${method} ${path}`
      // The merchant API's envelope (a class per status), or the SDK's error object on its routes.
      const errorBody = isClient(path) ? /^#\/components\/schemas\/ClientError$/ : /^#\/components\/schemas\/\w+Encoded$/
      const refusal = (status: string) => op.responses[status]?.content?.["application/json"]?.schema?.$ref
      expect(op.responses["429"]?.headers?.["Retry-After"], at).toEqual({ $ref: "#/components/headers/Retry-After" })
      expect(op.responses["405"]?.headers?.["Allow"], at).toBeDefined()
      // The router answers a wrong method before any route reads the request: the envelope, on the SDK's routes too.
      expect(refusal("405"), at).toBe("#/components/schemas/ErrorEnvelope")
      for (const status of ["429", "500"]) expect(refusal(status), `${at} ${status}`).toMatch(errorBody)
      for (const status of ["413", "415"]) {
        if (method === "get") expect(op.responses[status], at).toBeUndefined()
        else expect(refusal(status), `${at} ${status}`).toMatch(errorBody)
      }
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (!/^[24]/.test(status)) continue
        for (const name of RATE_LIMIT_HEADERS) expect(response.headers?.[name], `${at} ${status} ${name}`).toEqual({ $ref: `#/components/headers/${name}` })
      }
    }
    const headers = document.components.headers
    for (const name of [...RATE_LIMIT_HEADERS, "Retry-After"]) expect(headers[name].schema).toMatchObject({ type: "integer", format: "int64", minimum: 0 })
  })

  it("the router's 405 is as documented: the envelope and Allow, on the browser SDK's routes too", async () => {
    const reply = await fetch(`${server.baseUrl}/v1/client/pay`, { method: "PUT" })
    expect(reply.status).toBe(405)
    expect(reply.headers.get("allow")).toContain("POST")
    const body = await reply.json()
    expect(Object.keys(body).sort()).toEqual(["code", "message", "request_id"])
    expect(body.code).toBe("method_not_allowed")
    expect(document.paths["/v1/client/pay"].post.responses["405"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ErrorEnvelope" })
  })

  it("declares the optional empty body clients send to session cancel and delivery retry", () => {
    for (const path of ["/v1/checkout/sessions/{id}/cancel", "/v1/webhook_deliveries/{id}/retry"]) {
      const body = document.paths[path].post.requestBody
      expect(body.required, path).toBe(false)
      expect(body.content["application/json"].schema).toMatchObject({ type: "object", maxProperties: 0 })
    }
  })

  it("declares servers and requires the secret key and the signature on every merchant API operation", () => {
    expect(document.servers?.length).toBeGreaterThan(0)
    const schemes = document.components.securitySchemes as Record<string, any>
    expect(schemes.bearer).toMatchObject({ type: "http", scheme: "Bearer" })
    expect(schemes.signature).toMatchObject({ type: "apiKey", in: "header", name: "X-Signature" })
    expect(schemes.signature.description).toContain("HMAC-SHA256")
    const merchant = operations().filter((o) => !isClient(o.path))
    expect(merchant.length).toBeGreaterThan(30)
    for (const { op } of merchant) {
      expect(op.security, op.operationId).toEqual([{ bearer: [], signature: [] }])
      expect(op.summary, op.operationId).toBeTruthy()
    }
    for (const tag of document.tags) expect(tag.description, tag.name).toBeTruthy()
  })

  it("lists the browser SDK's /v1/client routes under the publishable key, with their bodies and answers from the routes' Schemas", () => {
    const client = operations().filter((o) => isClient(o.path))
    expect(client.map((o) => `${o.path} ${o.op.operationId}`).sort()).toEqual([
      "/v1/client/card_tokens client.cardTokens",
      "/v1/client/pay client.pay",
      "/v1/client/payment_status client.paymentStatus",
      "/v1/client/session client.session"
    ])
    const schemes = document.components.securitySchemes as Record<string, any>
    expect(schemes.publishableKey).toMatchObject({ type: "http", scheme: "Bearer" })
    expect(schemes.publishableKey.description).toContain("client_secret")
    const tag = document.tags.find((t: { name: string }) => t.name === "browserSdk")
    expect(tag?.description).toContain("publishable key")
    const schemas = document.components.schemas as Record<string, any>
    for (const { op } of client) {
      expect(op.security, op.operationId).toEqual([{ publishableKey: [] }])
      expect(op.tags).toEqual(["browserSdk"])
      expect(op.summary, op.operationId).toBeTruthy()
      expect(op.requestBody.content["application/json"].schema.required, op.operationId).toContain("client_secret")
      expect(op.responses["401"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ClientError" })
    }
    const pay = document.paths["/v1/client/pay"]!.post as any
    expect(pay.requestBody.content["application/json"].schema.properties.return_url).toMatchObject({ type: "string", format: "uri", maxLength: 2048 })
    expect(pay.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ClientPayResult" })
    expect(schemas.ClientPayResult.properties.display_mode.enum).toEqual(["inline", "popup", "redirect"])
    expect((document.paths["/v1/client/card_tokens"]!.post as any).responses["201"]).toBeDefined()
    expect(schemas.ClientError.properties.error.properties.type.enum).toEqual(["validation_error", "authentication_error", "api_error"])
  })
})
