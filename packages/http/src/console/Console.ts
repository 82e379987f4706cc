/**
 * The operator console at `/console` (issue 26; design26's UI contract): its routes, mounted by
 * Server.app only when the console is on (`TENDER_CONSOLE=true` or `tender serve --console`); off,
 * no console path exists (the gateway's 404, as for any unknown path).
 *
 * Outside /v1 and keyless: it never reads an Authorization header or a merchant key. The gateway's
 * per-IP bucket of public routes applies to it (a brake on guessing passwords, beside the lock-out).
 * Sign-in is the Operators use case's; what a page reads is ConsoleReads' (search, story, locate);
 * what an action does is the same use case the API and CLI call (Actions.ts).
 */
import { Cause, Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { PublicUrl } from "@tender/domain"
import * as AccountPages from "./AccountPages.ts"
import * as Actions from "./Actions.ts"
import { STYLESHEET_PATH, stylesheet } from "./Assets.ts"
import * as AuditPage from "./AuditPage.ts"
import { LOGIN_PATH, makeAuth } from "./Auth.ts"
import { methodNotAllowed, notFound, seeOther, serverError } from "./Layout.ts"
import * as LoginPages from "./LoginPages.ts"
import * as Sampler from "./Sampler.ts"
import * as SearchPages from "./SearchPages.ts"
import * as StoryPage from "./StoryPage.ts"
import * as WatchPage from "./WatchPage.ts"

export interface ConsoleOptions {
  /** How many proxies' X-Forwarded-* to trust (IpLimits): whether a request came over https. */
  readonly trustedProxies: number
}

const GET = "GET" as const, POST = "POST" as const

/** Every console route, for the gateway's route table when the console is on (404 vs 405, metrics' route labels). */
export const CONSOLE_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  { method: GET, path: "/console" },
  { method: GET, path: LOGIN_PATH },
  { method: POST, path: LOGIN_PATH },
  { method: POST, path: "/console/logout" },
  { method: GET, path: "/console/enrol/:token" },
  { method: POST, path: "/console/enrol/:token" },
  { method: GET, path: "/console/search" },
  { method: GET, path: "/console/find/:id" },
  { method: GET, path: "/console/orders/:id" },
  { method: GET, path: "/console/accounts" },
  { method: GET, path: "/console/accounts/:id" },
  { method: GET, path: "/console/audit" },
  { method: GET, path: "/console/watch" },
  { method: GET, path: STYLESHEET_PATH },
  ...Actions.ACTION_ROUTES.map((route) => ({ method: POST, path: route.path }))
]

/** Each route's path as a pattern: a `:param` is one segment. */
const TEMPLATES = CONSOLE_ROUTES.map((route) => ({
  method: route.method,
  pattern: new RegExp(`^${route.path.replace(/[.]/g, "\\.").replace(/:[a-z]+/g, "[^/]+")}$`)
}))

/** The methods a console path takes (HEAD wherever GET is), for a 405's Allow; none → not a console path. */
const allowedOn = (path: string): ReadonlyArray<string> => {
  const methods = new Set(TEMPLATES.filter((route) => route.pattern.test(path)).map((route) => route.method))
  if (methods.has(GET)) methods.add("HEAD")
  return [...methods]
}

/**
 * Whatever a console handler did not expect (a storage failure, a defect) is the console's own 500
 * page, with the console's headers, and logged: without this the gateway would answer the API's
 * JSON envelope, without the CSP.
 */
const guarded = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.catchCause(handler, (cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.failCause(cause)
      : Effect.as(Effect.logError("Console request failed", cause), serverError()))

const routes = (options: ConsoleOptions) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const auth = makeAuth({ publicUrl: yield* PublicUrl, trustedProxies: options.trustedProxies })
    const page = <E, R>(path: HttpRouter.PathInput, handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      router.add(GET, path, guarded(handler))
    const post = <E, R>(path: HttpRouter.PathInput, handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      router.add(POST, path, guarded(handler))
    yield* page(LOGIN_PATH, LoginPages.showLogin(auth))
    yield* post(LOGIN_PATH, LoginPages.submitLogin(auth))
    yield* post("/console/logout", LoginPages.logout(auth))
    yield* page("/console/enrol/:token", LoginPages.showEnrol(auth))
    yield* post("/console/enrol/:token", LoginPages.submitEnrol(auth))
    yield* page("/console/search", SearchPages.search(auth))
    yield* page("/console/find/:id", SearchPages.find(auth))
    yield* page("/console/orders/:id", StoryPage.story(auth))
    yield* page("/console/accounts", AccountPages.accounts(auth))
    yield* page("/console/accounts/:id", AccountPages.account(auth))
    yield* page("/console/audit", AuditPage.audit(auth))
    yield* page("/console/watch", WatchPage.watch(auth, yield* Sampler.Sampler))
    yield* page(STYLESHEET_PATH, stylesheet)
    for (const { handler, path } of Actions.handlers(auth)) yield* post(path as HttpRouter.PathInput, handler)
    // `/console` itself (the router's wildcard covers it), and any other path or method under it:
    // the console's own pages (404, 405 with Allow), not the API's JSON. Every method but HEAD: the
    // router answers a HEAD no route takes with the GET route of its path, so a page answers HEAD
    // as GET (Node sends no body for HEAD), and an unknown path's HEAD reaches this GET catch-all.
    const rest = guarded(Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = new URL(request.url, "http://console").pathname
      const method = request.method === "HEAD" ? GET : request.method
      if (path === "/console" || path === "/console/") {
        if (method !== GET) return methodNotAllowed([GET, "HEAD"])
        return Option.isSome(yield* auth.signedIn) ? seeOther("/console/search") : seeOther(LOGIN_PATH)
      }
      const allowed = allowedOn(path)
      return allowed.length === 0 || allowed.includes(method) ? notFound() : methodNotAllowed(allowed)
    }))
    for (const method of [GET, POST, "PUT", "PATCH", "DELETE", "OPTIONS", "QUERY"] as const) yield* router.add(method, "/console/*", rest)
  }))

export const layer = (options: ConsoleOptions) => routes(options).pipe(Layer.provide(Sampler.layer))
