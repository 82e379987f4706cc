/**
 * Every response a test server sends on `/v1/…` is checked against the OpenAPI document the server
 * serves (`/v1/openapi.json`, `OpenApi.fromApi(Api)`, the same value): the operation (path and
 * method) must be in it, the status declared for that operation, the headers it declares required
 * sent, and the body valid against the schema declared for that status (OpenAPI 3.1 schemas are JSON Schema 2020-12: ajv's 2020 build,
 * formats from ajv-formats, `$ref`s resolved inside the document). What the document does not
 * describe is recorded in `undescribed`; Tender's own test files fail on any (vitest setup file
 * `packages/http/test/support/ResponseCheckSetup.ts`), so the API suites' traffic is the sample
 * and nothing runs twice (docs/decisions.md, "Responses checked against the document").
 *
 * Not judged: routes outside the API (hosted pages, SDK assets, probes, /metrics, /docs, provider
 * notifications and returns, and the document itself), and CORS preflights of the SDK's routes
 * (browser machinery the document does not list as operations). A request to a path or method the
 * document lacks is undescribed unless the gateway refused it as such (404 `not_found`, 405
 * `method_not_allowed`) or before routing (UNROUTED_STATUSES), in the spec's envelope.
 *
 * This module is light to import (the setup file loads it in every test file); the document, ajv
 * and its compiled validators are built once per test file, on the first response.
 */
import type { IncomingMessage, ServerResponse } from "node:http"

export interface Undescribed {
  /** `METHOD path`, the path as the router reads it (query left out). */
  readonly request: string
  readonly operationId: string | undefined
  readonly status: number
  readonly problem: string
}

/** What the test servers of this file (this module instance) answered that the document does not describe. */
export const undescribed: Array<Undescribed> = []

/** Checks not yet done (the checker compiles on first use): `settled` waits for them. */
const pending = new Set<Promise<void>>()

/** Resolves once every answer served so far has been checked, so that none lands after the file's verdict. */
export const settled = async (): Promise<void> => {
  while (pending.size > 0) await Promise.all([...pending])
}

/**
 * Refusals of a request the document has no operation for that say so (404, 405) or that the
 * gateway gives before routing (Gateway.ts: key, allowlist, rate limit, content type, body size,
 * signature, replay, body checks): nothing undescribed was served.
 */
const UNROUTED_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 404, 405, 409, 413, 415, 429])

const OUTSIDE_THE_DOCUMENT: ReadonlySet<string> = new Set(["/v1/openapi.json"])

interface Header {
  readonly required?: boolean
  readonly $ref?: string
}

interface Operation {
  readonly operationId: string | undefined
  readonly responses: Record<string, {
    readonly content?: Record<string, { readonly schema?: unknown }>
    readonly headers?: Record<string, Header>
  }>
  readonly pointer: string
}

interface Route {
  readonly pattern: RegExp
  /** Literal segments, as the router prefers them: `/v1/checkout/sessions/by-reference/{ref}` over `…/sessions/{id}/cancel`. */
  readonly literals: number
  readonly methods: ReadonlyMap<string, Operation>
}

export interface Checker {
  readonly check: (answer: {
    readonly method: string
    readonly path: string
    readonly status: number
    readonly contentType: string | undefined
    /** Every header sent, by lower-case name. */
    readonly headerNames: ReadonlySet<string>
    readonly body: Buffer
  }) => Undescribed | undefined
}

const escapePointer = (segment: string) => segment.replaceAll("~", "~0").replaceAll("/", "~1")

const DOCUMENT_ID = "https://tender.invalid/v1/openapi.json"

/** A checker over `document` (an OpenAPI 3.1 document as served). */
export const makeChecker = async (document: {
  readonly paths: Record<string, Record<string, unknown>>
  readonly components?: object | undefined
}): Promise<Checker> => {
  const { Ajv2020 } = await import("ajv/dist/2020.js")
  const { default: addFormats } = await import("ajv-formats")
  // strict off: OpenAPI keywords beside JSON Schema's (description, example, discriminator) are not errors.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
  ;(addFormats as unknown as (ajv: unknown) => void)(ajv)
  ajv.addSchema({ ...document, $id: DOCUMENT_ID })

  const routes: Array<Route> = Object.entries(document.paths).map(([template, item]) => {
    const segments = template.split("/")
    const pattern = new RegExp(
      "^" + segments.map((s) => /^\{[^}]+\}$/.test(s) ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("/") + "/?$"
    )
    const methods = new Map<string, Operation>()
    for (const [method, op] of Object.entries(item)) {
      const operation = op as { operationId?: string; responses?: Operation["responses"] }
      if (operation.responses === undefined) continue
      methods.set(method.toUpperCase(), {
        operationId: operation.operationId,
        responses: operation.responses,
        pointer: `#/paths/${escapePointer(template)}/${method}`
      })
    }
    return { pattern, literals: segments.filter((s) => !s.startsWith("{")).length, methods }
  })

  const components = document.components as { readonly headers?: Record<string, Header> } | undefined
  const headerAt = (header: Header): Header | undefined =>
    header.$ref === undefined ? header : components?.headers?.[header.$ref.replace("#/components/headers/", "")]

  const validators = new Map<string, ReturnType<typeof ajv.getSchema>>()
  const validatorAt = (pointer: string) => {
    if (!validators.has(pointer)) validators.set(pointer, ajv.getSchema(`${DOCUMENT_ID}${pointer}`))
    return validators.get(pointer)
  }

  /** The spec's envelope, or on `/v1/client/…` the SDK's error object (the gateway's own refusals there are envelopes). */
  const isErrorShape = (path: string, json: unknown) =>
    typeof json === "object" && json !== null && (
      (typeof (json as { code?: unknown }).code === "string" && typeof (json as { request_id?: unknown }).request_id === "string") ||
      (path.startsWith("/v1/client/") && typeof (json as { error?: { code?: unknown } }).error?.code === "string")
    )

  return {
    check: ({ method, path, status, contentType, headerNames, body }) => {
      if (!path.startsWith("/v1/") || OUTSIDE_THE_DOCUMENT.has(path)) return undefined
      const request = `${method} ${path}`
      let json: unknown
      let parsed = false
      if (body.length > 0 && /^application\/json\s*(;|$)/i.test(contentType ?? "")) {
        try {
          json = JSON.parse(body.toString("utf8"))
          parsed = true
        } catch {
          // judged below: a declared JSON body that does not parse
        }
      }
      const matches = routes.filter((r) => r.pattern.test(path)).sort((a, b) => b.literals - a.literals)
      const route = matches.find((r) => r.methods.has(method)) ?? matches[0]
      const operation = route?.methods.get(method)
      if (operation === undefined) {
        if (method === "OPTIONS" && route !== undefined && status === 204) return undefined
        if (UNROUTED_STATUSES.has(status) && isErrorShape(path, json)) return undefined
        return { request, operationId: undefined, status, problem: `${route === undefined ? "path" : "method"} not in the document` }
      }
      const statusKey = [String(status), `${String(status)[0]}XX`, "default"].find((key) => operation.responses[key] !== undefined)
      const declared = statusKey === undefined ? undefined : operation.responses[statusKey]
      if (statusKey === undefined || declared === undefined) {
        return { request, operationId: operation.operationId, status, problem: "status not declared for this operation" }
      }
      // Headers the document says are always sent (e.g. a 429's rate-limit headers) must be.
      const missing = Object.entries(declared.headers ?? {})
        .filter(([name, header]) => headerAt(header)?.required === true && !headerNames.has(name.toLowerCase()))
        .map(([name]) => name)
      if (missing.length > 0) {
        return { request, operationId: operation.operationId, status, problem: `declared header(s) not sent: ${missing.join(", ")}` }
      }
      const content = declared.content ?? {}
      const mediaTypes = Object.keys(content)
      if (mediaTypes.length === 0) {
        return body.length === 0 ? undefined : { request, operationId: operation.operationId, status, problem: "a body where the document declares none" }
      }
      if (method === "HEAD") return undefined
      const media = mediaTypes.find((m) => (contentType ?? "").toLowerCase().startsWith(m.toLowerCase()))
      if (media === undefined) {
        return { request, operationId: operation.operationId, status, problem: `content type ${contentType ?? "none"} not declared (${mediaTypes.join(", ")})` }
      }
      if (content[media]?.schema === undefined || !media.includes("json")) return undefined
      if (!parsed) return { request, operationId: operation.operationId, status, problem: "the body is not JSON" }
      const validate = validatorAt(`${operation.pointer}/responses/${escapePointer(statusKey)}/content/${escapePointer(media)}/schema`)
      if (validate === undefined) return { request, operationId: operation.operationId, status, problem: "the declared schema does not compile" }
      if (validate(json)) return undefined
      const problems = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}${e.params && "additionalProperty" in e.params ? ` (${String(e.params.additionalProperty)})` : ""}`)
      return { request, operationId: operation.operationId, status, problem: `body does not match the declared schema: ${problems.join("; ")}` }
    }
  }
}

/**
 * Taps a Node HTTP server: every response's method, path, status, content type and body bytes are
 * handed to `checker` once it ends. Installed before the server's own handler (which writes the
 * response later), so every write passes through.
 */
export const tap = (checker: Promise<Checker>, options: {
  /** False when the server has routes of the test's own, which the document cannot list. */
  readonly judgeUnknownOperations: boolean
  /** The path the router matches (Routes.routedPath: `/v1/%77ebhook_endpoints;x` is a webhook endpoints path). */
  readonly pathOf: (url: string) => string
}) => (request: IncomingMessage, response: ServerResponse) => {
  const path = options.pathOf(request.url ?? "/")
  if (!path.startsWith("/v1/")) return
  const chunks: Array<Buffer> = []
  const collect = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === "function") return
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk, typeof encoding === "string" ? encoding as BufferEncoding : "utf8") : Buffer.from(chunk as Uint8Array))
  }
  // Headers given to writeHead are sent without being kept where getHeader looks: read them there.
  const sent = new Map<string, string>()
  const writeHead = response.writeHead.bind(response) as (...args: Array<unknown>) => ServerResponse
  response.writeHead = ((...args: Array<unknown>) => {
    const headers = args.find((arg) => typeof arg === "object" && arg !== null)
    const entries: Array<[unknown, unknown]> = Array.isArray(headers)
      ? headers.flatMap((h, i) => i % 2 === 0 ? [[h, headers[i + 1]] as [unknown, unknown]] : [])
      : Object.entries(headers ?? {})
    for (const [name, value] of entries) sent.set(String(name).toLowerCase(), String(value))
    return writeHead(...args)
  }) as typeof response.writeHead
  const write = response.write.bind(response) as (...args: Array<unknown>) => boolean
  const end = response.end.bind(response) as (...args: Array<unknown>) => ServerResponse
  response.write = ((...args: Array<unknown>) => {
    collect(args[0], args[1])
    return write(...args)
  }) as typeof response.write
  response.end = ((...args: Array<unknown>) => {
    collect(args[0], args[1])
    return end(...args)
  }) as typeof response.end
  response.once("finish", () => {
    const answer = {
      method: request.method ?? "GET",
      path,
      status: response.statusCode,
      contentType: sent.get("content-type") ?? response.getHeader("content-type")?.toString(),
      headerNames: new Set([...sent.keys(), ...response.getHeaderNames()]),
      body: Buffer.concat(chunks)
    }
    const check = checker.then((c) => {
      const found = c.check(answer)
      if (found !== undefined && (found.operationId !== undefined || options.judgeUnknownOperations)) undescribed.push(found)
    }).finally(() => pending.delete(check))
    pending.add(check)
  })
}

/** The problems found, one line per operation, status and problem: how often, and one request that met it. */
export const report = (found: ReadonlyArray<Undescribed>): string => {
  const lines = new Map<string, { count: number; example: string }>()
  for (const u of found) {
    const key = `${u.operationId ?? "(no operation)"} ${u.status}: ${u.problem}`
    const line = lines.get(key) ?? { count: 0, example: u.request.length > 120 ? `${u.request.slice(0, 120)}…` : u.request }
    line.count++
    lines.set(key, line)
  }
  return [...lines].map(([key, { count, example }]) => `${key} (×${count}, e.g. ${example})`).join("\n")
}
