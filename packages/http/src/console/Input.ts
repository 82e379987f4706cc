/**
 * What the console takes from a URL or a form before anything reads storage (review B2): an id of
 * one of Tender's kinds, text without control characters, and a `next` path that stays in the
 * console. PostgreSQL refuses a NUL byte outright (a failure, not an empty answer), so junk must
 * stop here, where it still means "no such object" or "wrong input".
 */
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import { ID_PREFIXES } from "@tender/api/Ids"
import { hasControl } from "@tender/domain/kernel/Text"

/** Longer than any id Tender makes (prefix + at most 64), short enough to never burden a query. */
const MAX_ID = 128

const ID = new RegExp(`^(?:${Object.values(ID_PREFIXES).join("|")})_[A-Za-z0-9]+$`)

/** An id of a known kind (`ord_…`, `acct_…`, …): anything else names no object. */
const isId = (id: string): boolean => id.length <= MAX_ID && ID.test(id)

/** The route's `:id` when it is an id, else undefined (the caller's 404 page). */
export const routeId: Effect.Effect<string | undefined, never, HttpRouter.RouteContext> = Effect.map(
  HttpRouter.params,
  (params) => {
    const id = params.id ?? ""
    return isId(id) ? id : undefined
  }
)

/** Longer than any operator's name: a longer one (login, the audit's filter) names nobody. */
export const MAX_OPERATOR_NAME = 200

// No name, reference or filter the console knows holds a control (C0, DEL or C1): the domain's test.
export { hasControl }

/** The text with its controls dropped: for showing a refused value again, never for using it. */
export const withoutControls = (text: string): string => text.replace(/\p{Cc}/gu, "")

/** Where a signed-out operator goes after login when no deep link was asked. */
export const DEFAULT_LANDING = "/console/search"

/**
 * A `next` path after login: a path of the console (`/console/…`) on this origin, never `//host`,
 * a backslash (browsers read `/\host` as `//host`) or a control; anything else → undefined.
 */
export const safeNext = (next: string | undefined | null): string | undefined => {
  if (next === undefined || next === null || next.length > 2000 || !next.startsWith("/console/")) return undefined
  if (next.includes("\\") || next.startsWith("//") || hasControl(next)) return undefined
  // What a browser makes of it must still be this origin's console.
  const resolved = new URL(next, "http://console.invalid")
  return resolved.origin === "http://console.invalid" && resolved.pathname.startsWith("/console/") ? next : undefined
}
