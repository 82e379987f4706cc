/**
 * Which paths exist (for 404 vs 405) and which need an API key, derived from the HttpApi value plus
 * the few routes served outside it.
 */
import { FindMyWay } from "effect/http"
import type { HttpApiGroup } from "effect/http-api"

export interface RouteTable {
  /** Methods served on a path; empty when the path is unknown. */
  methodsFor(path: string): ReadonlyArray<string>
  /**
   * `/v1/…` except the public OpenAPI document and the browser SDK's routes (`/v1/client/…`, their
   * own publishable-key auth: client/ClientRoutes.ts); hosted pages and docs are public.
   */
  requiresKey(path: string): boolean
  /**
   * The route template a request matches (`/v1/orders/:id`), as the router matches it; undefined
   * when none does. Metrics and traces label requests by it: a raw path would put ids in labels.
   */
  templateOf(method: string, url: string): string | undefined
}

const toRegExp = (pattern: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z0-9_]+/g, "[^/]+")}/?$`)

export const PUBLIC_API_PATHS = new Set(["/v1/openapi.json"])

const CLIENT_API_PREFIX = "/v1/client/"

/** Method and path of every endpoint of an HttpApi value (also the isolation matrix's list of routes to probe). */
export const endpointsOf = (api: { readonly groups: Record<string, unknown> }): ReadonlyArray<{ readonly method: string; readonly path: string }> =>
  (Object.values(api.groups) as ReadonlyArray<HttpApiGroup.Top>).flatMap((group) =>
    Object.values(group.endpoints).map((endpoint) => ({ method: endpoint.method, path: endpoint.path }))
  )

export const fromApi = (
  api: { readonly groups: Record<string, unknown> },
  extra: ReadonlyArray<{ readonly method: string; readonly path: string }>
): RouteTable => {
  const all = [...endpointsOf(api), ...extra]
  const routes = all.map((route) => ({ method: route.method, regexp: toRegExp(route.path) }))
  // The router's own matcher, configured as it is: one lookup per request, not a scan of patterns.
  const templates = FindMyWay.make<string>(ROUTER_CONFIG)
  const seen = new Set<string>()
  for (const route of all) {
    const key = `${route.method} ${route.path}`
    if (seen.has(key)) continue
    seen.add(key)
    templates.on(route.method, route.path as FindMyWay.PathInput, route.path)
  }
  return {
    templateOf: (method, url) => (templates.find(method, url) ?? (method === "HEAD" ? templates.find("GET", url) : undefined))?.handler,
    methodsFor: (path) => [...new Set(routes.filter((r) => r.regexp.test(path)).map((r) => r.method))],
    requiresKey: (path) => path.startsWith("/v1/") && !PUBLIC_API_PATHS.has(path) && !path.startsWith(CLIENT_API_PREFIX)
  }
}

/**
 * The router's options (Server.ts and the test server): paths match exactly as written, letter case
 * and doubled slashes included, so the path the gateway checks (`routedPath`) and the route that
 * serves it cannot disagree (by default `/v1/Webhook_endpoints//we_1` would reach a route the
 * gateway's checks do not recognise as taking writes).
 */
export const ROUTER_CONFIG = { caseSensitive: true, ignoreDuplicateSlashes: false } as const

/**
 * The path of a request URL as the router matches it (FindMyWay): an absolute-form target's scheme
 * and host dropped, cut at the first `?`, `;` or `#`, percent-escapes decoded except reserved
 * characters (decodeURI). The gateway decides on this path whether a key is needed and whether a
 * request writes or its path takes writes: on the raw path, a spelling the router accepts
 * (`/v1/%77ebhook_endpoints/we_1`, `/v1/webhook_endpoints;x`) would hide a path that takes writes.
 */
export const routedPath = (url: string): string => {
  const target = url.startsWith("/") ? url : url.replace(/^https?:\/\/.*?\//, "/")
  const cut = target.slice(1).search(/[?;#]/)
  let path = cut === -1 ? target : target.slice(0, cut + 1)
  try {
    path = decodeURI(path)
  } catch {
    // The router refuses it too (404): the raw path is as good as any for the checks.
  }
  // A trailing slash stays: the route table's patterns take one (`toRegExp`), and `/v1/` must still
  // read as an API path that needs a key.
  return path
}
