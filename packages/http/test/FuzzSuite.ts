/**
 * The fuzz suite (issue 12, "Done when"): requests generated from the OpenAPI document the server
 * serves, against every write route (POST/PUT/PATCH/DELETE, the browser SDK's `/v1/client/…` ones
 * included). Bodies start from each route's request schema, with plausible values where a field's
 * name says what it holds (so some requests get past validation and reach storage), then are
 * mutated: wrong types, huge strings, huge/negative/fractional/unsafe numbers, unicode and lone
 * surrogates, CR/LF/NUL, extra fields, missing fields, deep nesting, huge arrays, bodies that are
 * no object or no JSON at all. Path ids are real (seeded objects), random or hostile; queries and
 * headers are random. Every merchant request is signed, so it reaches validation.
 *
 * Issue 21, item 6, in two shapes of their own: a lone surrogate in every string field of a body
 * (and now and then in a key), and a field replaced by JSON nested thousands of levels deep (built
 * as text: a value that deep would overflow JSON.stringify itself). A body holding a lone surrogate
 * is sent twice, as a client retrying its create would.
 *
 * The verdict on each answer: never a status ≥ 500; every 4xx in the spec's envelope
 * `{code, message, request_id, errors?}` (the SDK's error object on `/v1/client/…`); every 400
 * `validation_failed` names a field in `errors[]`; every merchant answer verifies (`send`).
 *
 * Seeded: the seed is printed, and `FUZZ_SEED` replays a run; `FUZZ_CASES` overrides the count.
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TenderConfig } from "@tender/adapters/Config"
import { Effect } from "effect"
import { type Credentials, send } from "@tender/client/Testing"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"

type Merchant = Credentials & { readonly account_id: string; readonly publishable_key: string }
type Json = unknown
type JsonSchema = Record<string, any>

interface Route {
  readonly method: string
  readonly path: string
  readonly schema: JsonSchema | undefined
  readonly client: boolean
}

interface Case {
  /** Sent twice (a retry of the same request): its body holds a lone surrogate. */
  readonly retried: boolean
  readonly path: string
  readonly query: string
  /** The raw body text, or undefined for none. */
  readonly body: string | undefined
  readonly headers: Record<string, string>
}

interface Failure {
  readonly route: string
  readonly request: string
  readonly status: number
  readonly problem: string
  readonly answer: string
}

const DEFAULT_SEED = 20261126
const CLIENT_PREFIX = "/v1/client/"
const WRITE_METHODS = new Set(["post", "put", "patch", "delete"])

/** What the run uses, from the environment or the default: printed, so a failure can be replayed. */
export const fuzzSeed = (): number => {
  const given = process.env["FUZZ_SEED"]
  return given !== undefined && given !== "" ? Number(given) : DEFAULT_SEED
}

/** Every write route of the document, with its request body's schema ($refs resolved on use). */
export const writeRoutes = (document: JsonSchema): ReadonlyArray<Route> =>
  Object.entries<Record<string, any>>(document.paths).flatMap(([path, item]) =>
    Object.entries<any>(item)
      .filter(([method]) => WRITE_METHODS.has(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        schema: operation.requestBody?.content?.["application/json"]?.schema,
        client: path.startsWith(CLIENT_PREFIX)
      }))
  )

// ---------------------------------------------------------------------------------------------
// Values

/** The objects seeded before the run: their ids, tokens and references, by what a field holds. */
interface Seeds {
  readonly ids: Record<string, ReadonlyArray<string>>
  readonly cardToken: string
  readonly clientSecrets: ReadonlyArray<string>
  readonly references: ReadonlyArray<string>
}

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 })

/** Strings meant to hurt: control characters, unicode, lone surrogates, SQL and path metacharacters. */
const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 60 }),
  fc.constantFrom(
    "", " ", "\r\n", "a\r\nSet-Cookie: x=1", "https://shop.example/ok\r\nLocation: https://evil.example", "a\u0000b", "\u0000",
    "\t", "\u2028\u2029", "\ud800", "\udfff", "💳", "e\u0301", "'; DROP TABLE orders; --", "%00", "%0d%0a", "../../etc/passwd",
    "${jndi:ldap://x}", "<script>alert(1)</script>", "NaN", "Infinity", "-0", "1e9999", "0x10", "null", "true", "[]", "{}",
    "+010000-01-01T00:00:00Z", "-271821-04-20T00:00:00Z", "2024-02-30T00:00:00Z", "9999-12-31T23:59:59.999Z"
  ),
  fc.tuple(printable, fc.constantFrom("\r", "\n", "\u0000", "\u0085", "\ufeff"), printable).map(([a, c, b]) => a + c + b)
)

/**
 * A string past every documented bound (the longest is 2,048), now and then a much longer one; kept
 * short otherwise, since bytes on the wire are most of the suite's time.
 */
const hugeString = fc.tuple(
  fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 256, max: 4_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 4_000, max: 100_000 }) }),
  fc.constantFrom("a", "é", "9", "💳", " ", "\n")
).map(([n, c]) => c.repeat(n))

const hugeNumber = fc.constantFrom(
  1e308, -1e308, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_SAFE_INTEGER - 2, 2 ** 63, 2 ** 31, -(2 ** 31) - 1,
  -1, 0, -0, 0.5, 1.5, 1e-300, 123456789012345678901234567890, 99_999_999_999, 100_000_000_000
)

const numericString = fc.constantFrom(
  "0", "-1", "0.001", "10.005", "1e3", "99999999999999999999", "999999999999999", "9999999999999.99", "90071992547409.93",
  "00000000000000000000001", "1.", ".5", "1,000.00", " 10.00", "10.00 ", "١٠", "+10", "NaN", "Infinity"
)

const deepValue = fc.tuple(fc.integer({ min: 20, max: 1000 }), fc.boolean()).map(([depth, arrays]) => {
  let value: Json = "x"
  for (let i = 0; i < depth; i++) value = arrays ? [value] : { a: value }
  return value
})

const hugeArray = fc.tuple(fc.integer({ min: 101, max: 3000 }), fc.constantFrom<Json>("card", 1, { name: "x", quantity: 1, unit_amount: "1.00" }, null, "checkout.session.completed"))
  .map(([n, item]) => Array.from({ length: n }, () => item))

/** Anything at all in place of a value. */
const nasty: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 2, arbitrary: hugeString },
  { weight: 2, arbitrary: hugeNumber },
  { weight: 2, arbitrary: numericString },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.constantFrom<Json>(null, true, false, [], {}, [null], { "": "" }, JSON.parse("{\"__proto__\":{\"polluted\":1}}"), { constructor: { prototype: 1 } }) },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: hugeArray },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) }
)

/** Values that look right for a field, by its name: they take a request past its schema into the domain. */
const plausible = (name: string, seeds: Seeds): fc.Arbitrary<Json> | undefined => {
  const pick = (values: ReadonlyArray<string>) => (values.length > 0 ? fc.constantFrom(...values) : undefined)
  const id = (kind: string) => pick(seeds.ids[kind] ?? [])
  switch (name) {
    case "amount":
    case "unit_amount":
      return fc.oneof(fc.constantFrom("10.00", "1", "0.50", "25", "1000", "999999999999.99"), numericString)
    case "currency":
      return fc.constantFrom("USD", "EUR", "BRL", "JPY", "KWD", "MXN", "usd", "XXX")
    case "country":
      return fc.constantFrom("US", "BR", "DE", "MX", "IN", "AU", "us", "ZZ")
    case "code":
      return fc.constantFrom("card", "pix", "boleto", "paypal", "bank_transfer", "crypto", "oxxo", "upi", "mercadopago", "nope")
    case "url":
    case "success_url":
    case "cancel_url":
    case "return_url":
      return fc.constantFrom("https://shop.example/ok", "http://127.0.0.1:9/hook", "https://shop.example/" + "a".repeat(2100), "javascript:alert(1)")
    case "email":
    case "holder_email":
      return fc.constantFrom("ada@example.com", "a@b.co", "x".repeat(250) + "@b.co", "not-an-email")
    case "card_token":
    case "token":
      return fc.constantFrom(seeds.cardToken, "tok_" + "0".repeat(24))
    case "client_secret":
      return pick(seeds.clientSecrets)
    case "number":
      return fc.constantFrom("4242424242424242", "4000000000000002", "4000000000003220", "4242 4242 4242 4242", "1234")
    case "cvc":
      return fc.constantFrom("123", "1234", "12")
    case "exp_month":
      return fc.integer({ min: -1, max: 13 })
    case "exp_year":
      return fc.integer({ min: 2000, max: 2100 })
    case "ip":
      return fc.constantFrom("203.0.113.5", "2001:db8::1", "999.1.1.1")
    case "document_id":
      return fc.constantFrom("123.456.789-09", "12345678909", "GODE561231GR8")
    case "iban":
      return fc.constantFrom("DE89370400440532013000", "DE89 3704 0044 0532 0130 00")
    case "merchant_reference":
      return fc.oneof(pick(seeds.references) ?? printable, printable)
    case "order_id":
      return id("order")
    case "transaction_id":
      return id("transaction")
    case "customer_id":
      return id("customer")
    case "channel_id":
      return fc.constantFrom("ch_" + "0".repeat(24), "")
    case "created_from":
    case "created_to":
    case "expires_at":
      return fc.constantFrom("2026-01-01T00:00:00Z", new Date(Date.now() + 3_600_000).toISOString(), "+010000-01-01T00:00:00Z")
    case "limit":
      return fc.integer({ min: -5, max: 200 })
    case "quantity":
      return fc.integer({ min: -1, max: 2_000_000 })
    default:
      return undefined
  }
}

const resolver = (document: JsonSchema) => (schema: JsonSchema | undefined): JsonSchema | undefined => {
  let current = schema
  for (let hops = 0; current?.["$ref"] !== undefined && hops < 20; hops++) {
    const path = String(current["$ref"]).replace(/^#\//, "").split("/")
    current = path.reduce<any>((node, key) => node?.[key], document)
  }
  return current
}

/** A value of the schema, plausible where the field's name allows (null for an optional one sometimes). */
const fromSchema = (
  resolve: (s: JsonSchema | undefined) => JsonSchema | undefined,
  seeds: Seeds,
  given: JsonSchema | undefined,
  name: string,
  depth: number
): fc.Arbitrary<Json> => {
  const schema = resolve(given)
  if (schema === undefined || depth > 8) return fc.jsonValue({ maxDepth: 2 })
  const hinted = plausible(name, seeds)
  const own = ((): fc.Arbitrary<Json> => {
    if (Array.isArray(schema["enum"])) return fc.constantFrom(...schema["enum"])
    if (schema["const"] !== undefined) return fc.constant(schema["const"])
    const alternatives = schema["anyOf"] ?? schema["oneOf"]
    if (Array.isArray(alternatives)) {
      const concrete = alternatives.filter((s: JsonSchema) => resolve(s)?.["type"] !== "null")
      return fc.oneof(
        { weight: 9, arbitrary: fc.oneof(...concrete.map((s: JsonSchema) => fromSchema(resolve, seeds, s, name, depth + 1))) },
        { weight: 1, arbitrary: fc.constant(null) }
      )
    }
    switch (schema["type"]) {
      case "string":
        return fc.oneof(printable, fc.string({ maxLength: 20 }))
      case "integer":
        return fc.integer({ min: Math.max(schema["minimum"] ?? -1000, -1000), max: Math.min(schema["maximum"] ?? 1000, 1000) })
      case "number":
        return fc.double({ noNaN: true, noDefaultInfinity: true })
      case "boolean":
        return fc.boolean()
      case "array":
        return fc.array(fromSchema(resolve, seeds, schema["items"], name, depth + 1), { maxLength: 4 })
      case "object": {
        const properties: Record<string, JsonSchema> = schema["properties"] ?? {}
        const required = new Set<string>(schema["required"] ?? [])
        const keys = Object.keys(properties)
        if (keys.length === 0) return fc.dictionary(printable, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
        return fc.record(
          Object.fromEntries(keys.map((key) => [key, fromSchema(resolve, seeds, properties[key], key, depth + 1)])),
          // Required keys mostly present; optional ones half the time.
          { requiredKeys: keys.filter((k) => required.has(k)) }
        )
      }
      default:
        return fc.jsonValue({ maxDepth: 2 })
    }
  })()
  return hinted === undefined ? own : fc.oneof({ weight: 6, arbitrary: hinted }, { weight: 1, arbitrary: own })
}

// ---------------------------------------------------------------------------------------------
// Mutations

type Mutation = (value: Json, random: fc.Random) => Json

/** Every key path of a value's objects (arrays by index), the root included as []. */
const pathsOf = (value: Json, prefix: ReadonlyArray<string | number> = [], out: Array<ReadonlyArray<string | number>> = []) => {
  out.push(prefix)
  if (prefix.length > 6) return out
  if (Array.isArray(value)) value.slice(0, 5).forEach((v, i) => pathsOf(v, [...prefix, i], out))
  else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) pathsOf(v, [...prefix, k], out)
  return out
}

const setAt = (value: Json, path: ReadonlyArray<string | number>, replacement: (old: Json) => Json | undefined): Json => {
  if (path.length === 0) return replacement(value)
  const [head, ...rest] = path
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) }
  const next = setAt(copy[head!], rest, replacement)
  if (next === undefined) {
    if (Array.isArray(copy)) copy.splice(head as number, 1)
    else delete copy[head!]
  } else copy[head!] = next
  return copy
}

/** A value from `arbitrary`, drawn with the case's own random source (so the case stays reproducible). */
const draw = <A>(arbitrary: fc.Arbitrary<A>, random: fc.Random): A => arbitrary.generate(random, undefined).value

const choose = <A>(items: ReadonlyArray<A>, random: fc.Random): A => items[random.nextInt(0, items.length - 1)]!

const mutations: ReadonlyArray<Mutation> = [
  // a field (or the whole body) replaced by anything at all
  (value, random) => setAt(value, choose(pathsOf(value), random), () => draw(nasty, random)),
  (value, random) => setAt(value, choose(pathsOf(value), random), () => draw(nasty, random)),
  // a field removed (missing required)
  (value, random) => {
    const paths = pathsOf(value).filter((p) => p.length > 0)
    return paths.length === 0 ? value : setAt(value, choose(paths, random), () => undefined)
  },
  // extra fields, at the top or inside an object
  (value, random) => {
    const objects = pathsOf(value).filter((p) => {
      const at = p.reduce<any>((v, k) => v?.[k], value)
      return at !== null && typeof at === "object" && !Array.isArray(at)
    })
    if (objects.length === 0) return value
    return setAt(value, choose(objects, random), (old) => ({ ...(old as object), [draw(fc.oneof(printable, nastyString), random)]: draw(nasty, random) }))
  },
  // every string of the body past its bound, or carrying a line break
  (value, random) => {
    const filler = draw(fc.constantFrom("x".repeat(300), "y".repeat(2100), "\r\n", "\u0000"), random)
    // Down to the schema's own depth: a deep value an earlier mutation planted is left as it is.
    const walk = (v: Json, depth: number): Json =>
      depth > 8 ? v
      : typeof v === "string" ? (filler.length > 2 ? filler : v + filler + v)
      : Array.isArray(v) ? v.map((x) => walk(x, depth + 1))
      : v !== null && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, depth + 1)]))
      : v
    return walk(value, 0)
  }
]

/** Lone surrogates: high or low alone, or a pair in the wrong order. */
const loneSurrogate = fc.constantFrom("\ud800", "\udbff", "\udc00", "\udfff", "\udc00\ud800")

/** Stands for the deep text until the body is serialized (`deepText` replaces it). */
const DEEP = "\u0001deep\u0001"
const DEEP_JSON = JSON.stringify(DEEP)

/** JSON nested `depth` levels (arrays, objects or both alternating), written as text. */
const deepText = (depth: number, shape: "array" | "object" | "mixed"): string => {
  const open = (i: number) => shape === "array" || (shape === "mixed" && i % 2 === 0) ? "[" : "{\"a\":"
  const close = (i: number) => shape === "array" || (shape === "mixed" && i % 2 === 0) ? "]" : "}"
  let head = ""
  let tail = ""
  for (let i = 0; i < depth; i++) {
    head += open(i)
    tail = close(i) + tail
  }
  return `${head}"x"${tail}`
}

/** Item 6's shapes, applied by `bodyText` beside the other mutations. */
const itemSixMutations: ReadonlyArray<Mutation> = [
  // a lone surrogate in every string field, at its start, middle or end
  (value, random) => {
    const walk = (v: Json, depth: number): Json => {
      if (typeof v === "string") {
        const at = random.nextInt(0, v.length)
        return v.slice(0, at) + draw(loneSurrogate, random) + v.slice(at)
      }
      if (depth > 8 || v === null || typeof v !== "object") return v
      return Array.isArray(v) ? v.map((x) => walk(x, depth + 1)) : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, depth + 1)]))
    }
    return walk(value, 0)
  },
  // a lone surrogate in a key, beside the fields
  (value, random) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? { ...(value as object), [draw(printable, random) + draw(loneSurrogate, random)]: draw(fc.oneof(printable, nasty), random) }
      : value,
  // a field (or an item) replaced by JSON nested thousands of levels deep
  (value, random) => {
    const paths = pathsOf(value).filter((p) => p.length > 0)
    return paths.length === 0 ? { merchant_reference: DEEP } : setAt(value, choose(paths, random), () => DEEP)
  }
]

/** The body text: the value (mutated or not) as JSON, or something that is no JSON object at all. */
const bodyText = (value: Json, random: fc.Random): string => {
  // Over the 1 MiB body cap, rarely: each costs a megabyte on the wire.
  if (random.nextInt(0, 399) === 0) return JSON.stringify({ merchant_reference: "z".repeat(random.nextInt(1_048_000, 1_100_000)) })
  const roll = random.nextInt(0, 99)
  if (roll < 25) return JSON.stringify(value)
  if (roll < 92) {
    let mutated = value
    const times = random.nextInt(1, 3)
    for (let i = 0; i < times; i++) mutated = choose(mutations, random)(mutated, random)
    // A fifth of the mutated bodies carry one of item 6's shapes too.
    if (random.nextInt(0, 4) === 0) mutated = choose(itemSixMutations, random)(mutated, random)
    const text = JSON.stringify(mutated) ?? "null"
    if (!text.includes(DEEP_JSON)) return text
    const depth = random.nextInt(0, 3) === 0 ? random.nextInt(50_000, 200_000) : random.nextInt(1_000, 10_000)
    return text.replace(DEEP_JSON, deepText(depth, choose(["array", "object", "mixed"] as const, random)))
  }
  return draw(
    fc.oneof(
      fc.constantFrom("", "{", "{}}", "[1,2", "nul", "\"\\ud800\"", "{\"a\":1,\"a\":2}", "{\"__proto__\":{\"x\":1}}", " ", "\ufeff{}", "{\"a\":\"\\u0000\"}", "1e999"),
      fc.string({ unit: "binary", maxLength: 200 })
    ),
    random
  )
}

/** A path id: a seeded object's (any kind), random, hostile or long, encoded as a client would. */
const pathId = (seeds: Seeds, random: fc.Random): string => {
  const real = Object.values(seeds.ids).flat()
  const roll = random.nextInt(0, 9)
  if (roll < 4 && real.length > 0) return choose(real, random)
  const raw = draw(
    fc.oneof(
      printable,
      nastyString,
      fc.constantFrom("ord_", "ord_" + "A".repeat(64), "ord_" + "A".repeat(65), "we_00000000", "cs_" + "a".repeat(500), "..", ".", "%2e%2e"),
      hugeString.map((s) => s.slice(0, 5000))
    ),
    random
  )
  return encodeURIComponent(raw.replace(/[\ud800-\udfff]/g, "?")).slice(0, MAX_URL_PART).replace(/%[0-9A-F]?$/, "") || "x"
}

/**
 * Node's HTTP parser answers a request line and headers over 16 KiB itself (431, before any route
 * or middleware): the generated path, query and headers stay under it, each part at most this.
 */
const MAX_URL_PART = 4000

const queryString = (random: fc.Random): string => {
  if (random.nextInt(0, 9) < 7) return ""
  const pairs = draw(fc.array(fc.tuple(fc.oneof(printable, nastyString), fc.oneof(printable, nastyString, hugeString.map((s) => s.slice(0, 3000)))), { minLength: 1, maxLength: 4 }), random)
  const encode = (s: string) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, "?")).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return ("?" + pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join("&")).slice(0, MAX_URL_PART).replace(/%[0-9A-F]?$/, "")
}

/** Header values a client can send (fetch refuses line breaks and non-ASCII before they leave). */
const headerValue = fc.oneof(
  printable,
  fc.integer({ min: 100, max: MAX_URL_PART / 2 }).map((n) => "h".repeat(n))
)
const headerName = fc.oneof(
  fc.constantFrom(
    "idempotency-key", "accept-language", "x-request-id", "accept", "user-agent", "x-forwarded-for", "x-real-ip", "origin",
    "referer", "cookie", "content-encoding", "transfer-encoding-x", "x-tender-account", "tender-version", "content-type"
  ),
  fc.stringMatching(/^x-[a-z0-9-]{1,20}$/)
)
const CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", "APPLICATION/JSON", "*/*"]

const headers = (random: fc.Random): Record<string, string> => {
  if (random.nextInt(0, 9) < 6) return {}
  const pairs = draw(fc.array(fc.tuple(headerName, headerValue), { maxLength: 2 }), random)
  const out: Record<string, string> = Object.fromEntries(pairs)
  if (out["content-type"] !== undefined) out["content-type"] = choose(CONTENT_TYPES, random)
  return out
}

/**
 * One route's case: the body's value drawn from the schema, then the rest (path ids, query,
 * headers, mutations) with the same random source, so the seed alone reproduces every case.
 * Nothing shrinks: a failure is reported as sent.
 */
class CaseArbitrary extends fc.Arbitrary<Case> {
  readonly route: Route
  readonly seeds: Seeds
  readonly value: fc.Arbitrary<Json>
  constructor(route: Route, seeds: Seeds, value: fc.Arbitrary<Json>) {
    super()
    this.route = route
    this.seeds = seeds
    this.value = value
  }
  generate(random: fc.Random, biasFactor: number | undefined): fc.Value<Case> {
    const value = this.value.generate(random, biasFactor).value
    const path = this.route.path.replace(/\{[^}]+\}/g, () => pathId(this.seeds, random))
    // A bodiless route gets a body now and then too.
    const withBody = this.route.schema !== undefined || random.nextInt(0, 9) === 0
    const body = withBody ? bodyText(value, random) : undefined
    return new fc.Value<Case>({
      // JSON.stringify writes a lone surrogate as an escape (a well-formed pair stays as it is).
      retried: body !== undefined && /\\ud[89a-f][0-9a-f]{2}/i.test(body),
      path,
      query: queryString(random),
      body,
      headers: headers(random)
    }, undefined)
  }
  canShrinkWithoutContext(_value: unknown): _value is Case {
    return false
  }
  shrink(): fc.Stream<fc.Value<Case>> {
    return fc.Stream.nil<fc.Value<Case>>()
  }
}

const casesOf = (route: Route, document: JsonSchema, seeds: Seeds, count: number, seed: number): ReadonlyArray<Case> => {
  const value = route.schema === undefined ? fc.constant<Json>({}) : fromSchema(resolver(document), seeds, route.schema, "", 0)
  return fc.sample(new CaseArbitrary(route, seeds, value), { seed, numRuns: count })
}

// ---------------------------------------------------------------------------------------------
// The verdict

const isEnvelope = (json: any): boolean =>
  json !== null && typeof json === "object" && typeof json.code === "string" && json.code !== "" &&
  typeof json.message === "string" && typeof json.request_id === "string" && json.request_id !== "" &&
  (json.errors === undefined ||
    (Array.isArray(json.errors) && json.errors.every((e: any) => typeof e?.field === "string" && typeof e?.message === "string")))

const isClientError = (json: any): boolean =>
  json?.error !== undefined && typeof json.error.type === "string" && typeof json.error.code === "string" &&
  typeof json.error.message === "string" && typeof json.error.correlationId === "string"

/** What is wrong with an answer, or undefined. */
export const problemOf = (client: boolean, status: number, json: any): string | undefined => {
  if (status >= 500) return `status ${status}`
  if (status < 400) return undefined
  if (client) return isClientError(json) ? undefined : "4xx not in the SDK's error object"
  if (!isEnvelope(json)) return "4xx not in the spec's envelope {code, message, request_id, errors?}"
  if (status === 400 && json.code === "validation_failed" &&
    !(Array.isArray(json.errors) && json.errors.length > 0 && json.errors.every((e: any) => e.field !== ""))) {
    return "validation_failed without errors[] naming a field"
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------
// The suite

const seedObjects = async (server: TestServer, merchant: Merchant): Promise<Seeds> => {
  const post = async (path: string, body: unknown) => {
    const reply = await send(server, merchant, "POST", path, { body: JSON.stringify(body) })
    if (reply.status >= 300) throw new Error(`seeding ${path}: ${reply.status} ${reply.text}`)
    return reply.json
  }
  const urls = { success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" }
  const token = (await post("/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).token
  const customer = (await post("/v1/customers", { email: "ada@example.com", name: "Ada" })).id
  const paid = await post("/v1/payments", { amount: "30.00", currency: "USD", country: "US", merchant_reference: "fuzz-paid", collect_cvv: false, payment_method: { code: "card", details: { card_token: token } }, ...urls })
  const authorized = await post("/v1/payments", { amount: "30.00", currency: "USD", country: "US", merchant_reference: "fuzz-auth", collect_cvv: false, capture_method: "manual", payment_method: { code: "card", details: { card_token: token } }, ...urls })
  const collecting = await post("/v1/payments", { amount: "25.00", currency: "USD", country: "US", merchant_reference: "fuzz-collect", payment_method: { code: "card" }, ...urls })
  const pix = await post("/v1/payments", { amount: "10.00", currency: "BRL", country: "BR", merchant_reference: "fuzz-pix", payment_method: { code: "pix", details: { document_id: "12345678909" } }, customer: { ip: "203.0.113.5" }, ...urls })
  const session = await post("/v1/checkout/sessions", { amount: "12.00", currency: "USD", country: "US", merchant_reference: "fuzz-session", ...urls })
  const transfer = await post("/v1/transfers", { amount: "5.00", currency: "EUR", country: "DE", merchant_reference: "fuzz-transfer", payment_method: { code: "bank_transfer", details: { iban: "DE89370400440532013000", holder_name: "Ada" } } })
  // A loopback receiver that is not there: deliveries fail fast and stay retryable.
  const endpoint = await post("/v1/webhook_endpoints", { url: "http://127.0.0.1:9/hook" })
  const refund = await post("/v1/refunds", { order_id: paid.order_id, amount: "1.00" })
  return {
    ids: {
      order: [paid.order_id, authorized.order_id, collecting.order_id, pix.order_id, transfer.order_id],
      transaction: [paid.transaction_id, authorized.transaction_id, pix.transaction_id],
      customer: [customer],
      session: [session.id],
      transfer: [transfer.id],
      endpoint: [endpoint.id],
      refund: [refund.id]
    },
    cardToken: token,
    clientSecrets: [collecting.next_action?.client_secret].filter((s): s is string => typeof s === "string"),
    references: ["fuzz-paid", "fuzz-auth", "fuzz-collect", "fuzz-session", "fuzz-transfer"]
  }
}

/** Runs `work` over `items`, `width` at a time. */
const pool = async <A>(items: ReadonlyArray<A>, width: number, work: (item: A) => Promise<void>) => {
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++]!)
  }))
}

export const fuzzSuite = (storage: Pick<TenderConfig, "storage" | "dataDir">, defaultCases: number) => {
  const seed = fuzzSeed()
  const total = Number(process.env["FUZZ_CASES"] || defaultCases)
  let server: TestServer
  let merchant: Merchant

  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { perSecond: 1_000_000, burst: 1_000_000 } }, undefined, { ...storage })
    merchant = await Effect.runPromise(server.accounts.create({ name: "fuzz", mode: "test" }))
  })
  afterAll(() => server?.close())

  describe(`fuzz (${storage.storage}): ${total} requests generated from /v1/openapi.json, seed ${seed} (FUZZ_SEED to replay)`, () => {
    it("no write route answers ≥ 500, every 4xx is in the spec's envelope, every validation_failed names a field", async () => {
      console.log(`fuzz ${storage.storage}: seed ${seed}, ${total} cases (FUZZ_SEED=${seed} replays)`)
      // The document the server serves (public, unsigned), not the one this test could build itself.
      const document = await (await fetch(`${server.baseUrl}/v1/openapi.json`)).json()
      const routes = writeRoutes(document)
      expect(routes.length).toBeGreaterThan(20)
      const seeds = await seedObjects(server, merchant)
      const perRoute = Math.ceil(total / routes.length)
      const generating = Date.now()
      const cases = routes.flatMap((route, i) => casesOf(route, document, seeds, perRoute, seed + i).map((c) => ({ route, ...c })))

      const failures: Array<Failure> = []
      const statuses = new Map<number, number>()
      console.log(`fuzz ${storage.storage}: ${cases.length} cases generated in ${Date.now() - generating} ms`)
      const started = Date.now()
      let resets = 0
      await pool(cases, 8, async ({ route, path, query, body, headers, retried }) => {
        const target = path + query
        const described = `${route.method} ${target.slice(0, 300)} headers=${JSON.stringify(headers).slice(0, 200)} body=${(body ?? "∅").slice(0, 400)}`
        /** One exchange: the SDK's routes as a browser calls them, the merchant API's signed (and its answer verified). */
        const exchange = async (timestamp?: number): Promise<{ status: number; json: any; text: string }> => {
          if (!route.client) {
            return send(server, merchant, route.method, target, {
              ...(body !== undefined ? { body } : {}),
              ...(timestamp !== undefined ? { timestamp } : {}),
              headers,
              signal: AbortSignal.timeout(30_000)
            })
          }
          const origin = route.path === "/v1/client/card_tokens" ? new URL(server.baseUrl).origin : "https://shop.example"
          const response = await fetch(server.baseUrl + target, {
            method: route.method,
            headers: { "content-type": "application/json", ...headers, authorization: `Bearer ${merchant.publishable_key}`, origin },
            ...(body !== undefined ? { body } : {}),
            signal: AbortSignal.timeout(30_000)
          })
          const text = await response.text()
          let json: any
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          return { status: response.status, json, text }
        }
        // A kept-alive connection the server closed after refusing an earlier body (413) can be reset
        // under the next request: that is transport, not an answer, so the request goes once more (signed
        // anew). A reset this request itself causes happens again on the second try, and is a failure.
        const isReset = (error: unknown) => /ECONNRESET|other side closed|socket hang up/.test(String((error as any)?.cause ?? error))
        try {
          // A retry is signed a second earlier than now: the same write signed in the same second
          // would be refused as a replay (409) before its body were read.
          const now = Math.floor(Date.now() / 1000)
          const tries = retried ? [now, now - 1] : [undefined]
          for (const [i, timestamp] of tries.entries()) {
            const { status, json, text } = await exchange(timestamp).catch((error) => {
              if (!isReset(error)) throw error
              resets++
              return exchange(timestamp)
            })
            statuses.set(status, (statuses.get(status) ?? 0) + 1)
            const problem = problemOf(route.client, status, json)
            if (problem !== undefined) {
              failures.push({ route: `${route.method} ${route.path}`, request: (i > 0 ? "(retry) " : "") + described, status, problem, answer: text.slice(0, 500) })
            }
          }
        } catch (error) {
          failures.push({ route: `${route.method} ${route.path}`, request: described, status: 0, problem: `${String(error)} ${String((error as any)?.cause ?? "")}`.replaceAll(target, "<path>").slice(0, 500), answer: "" })
        }
      })
      const bytes = cases.reduce((sum, c) => sum + (c.body?.length ?? 0), 0)
      console.log(
        `fuzz ${storage.storage}: ${cases.length} requests (${Math.round(bytes / 1024)} KiB of bodies) over ${routes.length} routes in ${Date.now() - started} ms (${resets} connection resets resent); statuses ` +
          JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))
      )
      const byRoute = new Map<string, Array<Failure>>()
      for (const f of failures) byRoute.set(f.route, [...(byRoute.get(f.route) ?? []), f])
      const report = [...byRoute].map(([route, list]) =>
        `${route}: ${list.length} failing, e.g.\n` + list.slice(0, 3).map((f) => `  [${f.status}] ${f.problem}\n    ${f.request}\n    → ${f.answer}`).join("\n")
      ).join("\n")
      expect(failures.length, `seed ${seed}\n${report}`).toBe(0)
    }, 600_000)
  })
}
