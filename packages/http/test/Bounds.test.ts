/**
 * Input bounds (issue 12, item 3; issue 25, item 4; docs/decisions.md, "Input bounds" and "OpenAPI
 * document and the OWASP rules"), read off the OpenAPI document the server serves: every string,
 * list and integer a merchant write route accepts declares its maximum, and a value one past it is
 * `validation_failed` naming that field — the document's bounds are the ones the server enforces. A
 * new field without a bound fails the first test; the third sends, for every bounded field of every
 * route, a body with that one field over its bound.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Limits } from "@tender/domain"
import { Effect } from "effect"
import { type Credentials, send } from "@tender/client/Testing"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { writeRoutes } from "./FuzzSuite.ts"

type JsonSchema = Record<string, any>

interface Field {
  /** As `errors[].field` names it: `a.b`, `items[0].c`. */
  readonly name: string
  /** Where the value goes in a body: keys, and 0 for the first item of a list. */
  readonly at: ReadonlyArray<string | 0>
  readonly schema: JsonSchema
}

let server: TestServer
let merchant: Credentials
let document: JsonSchema

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { perSecond: 100_000, burst: 100_000 } })
  merchant = await Effect.runPromise(server.accounts.create({ name: "bounds", mode: "test" }))
  document = await (await fetch(`${server.baseUrl}/v1/openapi.json`)).json()
})
afterAll(() => server?.close())

const resolve = (schema: JsonSchema | undefined): JsonSchema | undefined =>
  schema?.["$ref"] === undefined
    ? schema
    : resolve(String(schema["$ref"]).replace(/^#\//, "").split("/").reduce<any>((node, key) => node?.[key], document))

/** The schema's alternatives other than null (an optional field is `anyOf [T, null]`). */
const concrete = (schema: JsonSchema | undefined): ReadonlyArray<JsonSchema> => {
  const s = resolve(schema)
  if (s === undefined) return []
  const alternatives = s["anyOf"] ?? s["oneOf"]
  return Array.isArray(alternatives) ? alternatives.flatMap(concrete).filter((a) => a["type"] !== "null") : [s]
}

/** Every string, list and integer inside a body schema, with where it sits. */
const fieldsOf = (schema: JsonSchema | undefined, name = "", at: ReadonlyArray<string | 0> = []): ReadonlyArray<Field> =>
  concrete(schema).flatMap((s) => {
    switch (s["type"]) {
      case "string":
        return s["enum"] === undefined ? [{ name, at, schema: s }] : []
      case "integer":
        return [{ name, at, schema: s }]
      case "array":
        return [{ name, at, schema: s }, ...fieldsOf(s["items"], `${name}[0]`, [...at, 0])]
      case "object":
        return Object.entries<JsonSchema>(s["properties"] ?? {}).flatMap(([key, property]) =>
          fieldsOf(property, name === "" ? key : `${name}.${key}`, [...at, key])
        )
      default:
        return []
    }
  })

/** The least value of a schema that passes its shape (required fields only), for the items of a list. */
const minimal = (schema: JsonSchema | undefined): unknown => {
  const s = concrete(schema)[0]
  if (s === undefined) return null
  if (s["enum"] !== undefined) return s["enum"][0]
  switch (s["type"]) {
    case "string":
      return "x"
    case "integer":
    case "number":
      return 1
    case "boolean":
      return true
    case "array":
      return []
    case "object":
      return Object.fromEntries((s["required"] ?? []).map((key: string) => [key, minimal(s["properties"][key])]))
    default:
      return {}
  }
}

/** The field's maximum as the document states it: maxLength, maxItems or maximum. */
const boundOf = (schema: JsonSchema): number | undefined =>
  schema["type"] === "string" ? schema["maxLength"] : schema["type"] === "array" ? schema["maxItems"] : schema["maximum"]

/** A value one past the field's bound: a character, an item or one more. */
const pastBound = (schema: JsonSchema, max: number): unknown =>
  schema["type"] === "string" ? "x".repeat(max + 1)
  : schema["type"] === "array" ? Array.from({ length: max + 1 }, () => minimal(schema["items"]))
  : max + 1

const place = (at: ReadonlyArray<string | 0>, value: unknown): unknown => {
  if (at.length === 0) return value
  const [head, ...rest] = at
  return head === 0 ? [place(rest, value)] : { [head!]: place(rest, value) }
}

const idPrefix = (path: string) =>
  path.includes("/checkout/sessions/") ? "cs" : path.includes("/webhook_endpoints/") ? "we" : path.includes("/webhook_deliveries/") ? "wd" : "ord"

/** The merchant API's write routes with a body (the SDK's routes answer in their own error object). */
const bodyRoutes = () => writeRoutes(document).filter((r) => !r.client && r.schema !== undefined && fieldsOf(r.schema).length > 0)

describe("input bounds (issue 12, item 3)", () => {
  it("every string, list and integer of every merchant write route's body declares its maximum in /v1/openapi.json", () => {
    const routes = bodyRoutes()
    expect(routes.length).toBeGreaterThan(15)
    const unbounded = routes.flatMap((route) =>
      fieldsOf(route.schema)
        .filter((f) => boundOf(f.schema) === undefined)
        .map((f) => `${route.method} ${route.path} ${f.name}`)
    )
    expect(unbounded).toEqual([])
  })

  it("the document shows the documented limits where they apply", () => {
    const payment = document.paths["/v1/payments"].post.requestBody.content["application/json"].schema
    const field = (name: string) => fieldsOf(payment).find((f) => f.name === name)?.schema
    expect(field("merchant_reference")?.["maxLength"]).toBe(Limits.MAX_REFERENCE)
    expect(field("success_url")?.["maxLength"]).toBe(Limits.MAX_URL)
    expect(field("customer.email")?.["maxLength"]).toBe(Limits.MAX_EMAIL)
    expect(field("customer.name")?.["maxLength"]).toBe(Limits.MAX_NAME)
    const session = document.paths["/v1/checkout/sessions"].post.requestBody.content["application/json"].schema
    expect(fieldsOf(session).find((f) => f.name === "line_items")?.schema["maxItems"]).toBe(Limits.MAX_LINE_ITEMS)
    const refund = document.paths["/v1/refunds"].post.requestBody.content["application/json"].schema
    expect(fieldsOf(refund).find((f) => f.name === "reason")?.schema["maxLength"]).toBe(Limits.MAX_DESCRIPTION)
    // Integers: their own range where the API has one, else JSON's safe integers; each with its format.
    expect(fieldsOf(session).find((f) => f.name === "line_items[0].quantity")?.schema).toMatchObject({ minimum: 1, maximum: Limits.MAX_QUANTITY, format: "int32" })
    const search = document.paths["/v1/orders/search"].post.requestBody.content["application/json"].schema
    expect(fieldsOf(search).find((f) => f.name === "limit")?.schema).toMatchObject({ minimum: 1, maximum: Limits.MAX_PAGE, format: "int32" })
    expect(fieldsOf(session).find((f) => f.name === "max_payment_attempts")?.schema).toMatchObject({ maximum: Number.MAX_SAFE_INTEGER, format: "int64" })
  })

  it("a query's bound too: one past the deliveries list's limit is validation_failed naming it", async () => {
    const limit = document.paths["/v1/webhook_deliveries"].get.parameters.find((p: JsonSchema) => p["name"] === "limit")
    expect(limit.schema["maxLength"]).toBe(Limits.MAX_CODE)
    for (const value of [String(Limits.MAX_PAGE + 1), "9".repeat(Limits.MAX_CODE + 1)]) {
      const reply = await send(server, merchant, "GET", `/v1/webhook_deliveries?limit=${value}`)
      expect(reply.status, value).toBe(400)
      expect(reply.json?.code).toBe("validation_failed")
      expect(reply.json?.errors.map((e: { field: string }) => e.field)).toContain("limit")
    }
  })

  it("answers hold to the envelope's bounds too: a 415 quoting a 3,000-character Content-Type is cut to the documented maxLength", async () => {
    const documented = document.components.schemas["ErrorEnvelope"].properties.message.maxLength
    expect(documented).toBe(Limits.MAX_MESSAGE)
    const reply = await send(server, merchant, "POST", "/v1/payments", { body: "x", headers: { "content-type": `text/${"p".repeat(3000)}` } })
    expect(reply.status).toBe(415)
    expect(reply.json?.code).toBe("unsupported_media_type")
    expect(reply.json?.message.length).toBe(documented)
  })

  it("one past a field's bound is 400 validation_failed naming that field, on every route", async () => {
    const misses: Array<string> = []
    let checked = 0
    for (const route of bodyRoutes()) {
      for (const field of fieldsOf(route.schema)) {
        const max = boundOf(field.schema)
        if (max === undefined) continue
        const value = pastBound(field.schema, max)
        // Path ids that match their pattern, so the body is what is judged.
        const path = route.path.replace(/\{[^}]+\}/g, `${idPrefix(route.path)}_AAAAAAAAAAAAAAAAAAAAAAAA`)
        const reply = await send(server, merchant, route.method, path, { body: JSON.stringify(place(field.at, value)) })
        checked++
        const named = (reply.json?.errors ?? []).some((e: { field: string }) => e.field === field.name)
        if (reply.status !== 400 || reply.json?.code !== "validation_failed" || !named) {
          misses.push(`${route.method} ${route.path} ${field.name} (${max + 1}) → ${reply.status} ${reply.text.slice(0, 300)}`)
        }
      }
    }
    expect(checked).toBeGreaterThan(100)
    expect(misses).toEqual([])
  })
})
