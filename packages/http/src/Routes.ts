/**
 * Which paths exist (for 404 vs 405) and which need an API key, derived from the HttpApi value plus
 * the few routes served outside it.
 */
import type { HttpApiGroup } from "effect/http-api"

export interface RouteTable {
  /** Methods served on a path; empty when the path is unknown. */
  methodsFor(path: string): ReadonlyArray<string>
  /**
   * `/v1/…` except the public OpenAPI document and the browser SDK's routes (`/v1/client/…`, their
   * own publishable-key auth: client/ClientRoutes.ts); hosted pages and docs are public.
   */
  requiresKey(path: string): boolean
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
  const routes = [...endpointsOf(api), ...extra].map((route) => ({ method: route.method, regexp: toRegExp(route.path) }))
  return {
    methodsFor: (path) => [...new Set(routes.filter((r) => r.regexp.test(path)).map((r) => r.method))],
    requiresKey: (path) => path.startsWith("/v1/") && !PUBLIC_API_PATHS.has(path) && !path.startsWith(CLIENT_API_PREFIX)
  }
}
