import { describe, expect, it } from "vitest"
import { OpenApi } from "effect/http-api"
import { Api } from "../src/Api.ts"
import { lintOpenApi } from "../scripts/lint-openapi.ts"

describe("the OpenAPI document", () => {
  const document = OpenApi.fromApi(Api)

  it("passes redocly lint (recommended rules) with no problems beyond the accepted ones", () => {
    expect(lintOpenApi(document)).toEqual([])
  })

  it("still catches a problem: an operation without a summary is an error", () => {
    const broken = structuredClone(document) as any
    delete broken.paths["/v1/payments"].post.summary
    expect(lintOpenApi(broken)).toContainEqual(expect.objectContaining({ ruleId: "operation-summary", severity: "error" }))
  })

  /** Every operation, with its path: the browser SDK's (`/v1/client/…`) apart from the merchant API's. */
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.values(item as object).map((op) => ({ path, op: op as any }))
  )
  const isClient = (path: string) => path.startsWith("/v1/client/")

  it("declares servers and requires the secret key and the signature on every merchant API operation", () => {
    expect(document.servers?.length).toBeGreaterThan(0)
    const schemes = document.components.securitySchemes as Record<string, any>
    expect(schemes.bearer).toMatchObject({ type: "http", scheme: "Bearer" })
    expect(schemes.signature).toMatchObject({ type: "apiKey", in: "header", name: "X-Signature" })
    expect(schemes.signature.description).toContain("HMAC-SHA256")
    const merchant = operations.filter((o) => !isClient(o.path))
    expect(merchant.length).toBeGreaterThan(30)
    for (const { op } of merchant) {
      expect(op.security, op.operationId).toEqual([{ bearer: [], signature: [] }])
      expect(op.summary, op.operationId).toBeTruthy()
    }
    for (const tag of document.tags) expect(tag.description, tag.name).toBeTruthy()
  })

  it("lists the browser SDK's /v1/client routes under the publishable key, with their bodies and answers from the routes' Schemas", () => {
    const client = operations.filter((o) => isClient(o.path))
    expect(client.map((o) => `${o.path} ${o.op.operationId}`).sort()).toEqual([
      "/v1/client/card_tokens client.cardTokens",
      "/v1/client/pay client.pay",
      "/v1/client/payment_status client.paymentStatus",
      "/v1/client/session client.session"
    ])
    const schemes = document.components.securitySchemes as Record<string, any>
    expect(schemes.publishableKey).toMatchObject({ type: "http", scheme: "Bearer" })
    expect(schemes.publishableKey.description).toContain("client_secret")
    const tag = document.tags.find((t) => t.name === "browserSdk")
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
