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

  it("declares servers and requires the secret key and the signature on every operation", () => {
    expect(document.servers?.length).toBeGreaterThan(0)
    const schemes = document.components.securitySchemes as Record<string, any>
    expect(schemes.bearer).toMatchObject({ type: "http", scheme: "Bearer" })
    expect(schemes.signature).toMatchObject({ type: "apiKey", in: "header", name: "X-Signature" })
    expect(schemes.signature.description).toContain("HMAC-SHA256")
    const operations = Object.values(document.paths).flatMap((item) => Object.values(item as object)) as Array<any>
    expect(operations.length).toBeGreaterThan(30)
    for (const op of operations) {
      expect(op.security, op.operationId).toEqual([{ bearer: [], signature: [] }])
      expect(op.summary, op.operationId).toBeTruthy()
    }
    for (const tag of document.tags) expect(tag.description, tag.name).toBeTruthy()
  })
})
