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
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { PublicUrl } from "@tender/domain"
import * as AccountPages from "./AccountPages.ts"
import * as Actions from "./Actions.ts"
import { STYLESHEET_PATH, stylesheet } from "./Assets.ts"
import * as AuditPage from "./AuditPage.ts"
import { LOGIN_PATH, makeAuth } from "./Auth.ts"
import { notFound, seeOther } from "./Layout.ts"
import * as LoginPages from "./LoginPages.ts"
import * as Sampler from "./Sampler.ts"
import * as SearchPages from "./SearchPages.ts"
import * as StoryPage from "./StoryPage.ts"
import * as WatchPage from "./WatchPage.ts"

export interface ConsoleOptions {
  /** How many proxies' X-Forwarded-* to trust (IpLimits): whether a request came over https. */
  readonly trustedProxies: number
}

const GET = "GET", POST = "POST"

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

const routes = (options: ConsoleOptions) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const auth = makeAuth({ publicUrl: yield* PublicUrl, trustedProxies: options.trustedProxies })
    yield* router.add(GET, LOGIN_PATH, LoginPages.showLogin(auth))
    yield* router.add(POST, LOGIN_PATH, LoginPages.submitLogin(auth))
    yield* router.add(POST, "/console/logout", LoginPages.logout(auth))
    yield* router.add(GET, "/console/enrol/:token", LoginPages.showEnrol(auth))
    yield* router.add(POST, "/console/enrol/:token", LoginPages.submitEnrol(auth))
    yield* router.add(GET, "/console/search", SearchPages.search(auth))
    yield* router.add(GET, "/console/find/:id", SearchPages.find(auth))
    yield* router.add(GET, "/console/orders/:id", StoryPage.story(auth))
    yield* router.add(GET, "/console/accounts", AccountPages.accounts(auth))
    yield* router.add(GET, "/console/accounts/:id", AccountPages.account(auth))
    yield* router.add(GET, "/console/audit", AuditPage.audit(auth))
    yield* router.add(GET, "/console/watch", WatchPage.watch(auth, yield* Sampler.Sampler))
    yield* router.add(GET, STYLESHEET_PATH, stylesheet)
    for (const { handler, path } of Actions.handlers(auth)) yield* router.add(POST, path as HttpRouter.PathInput, handler)
    // `/console` itself (the router's wildcard covers it), and any other path under it: the
    // console's own 404 page, not the API's JSON.
    yield* router.add("*", "/console/*", Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = new URL(request.url, "http://console").pathname
      if (request.method !== GET || (path !== "/console" && path !== "/console/")) return notFound()
      return Option.isSome(yield* auth.signedIn) ? seeOther("/console/search") : seeOther(LOGIN_PATH)
    }))
  }))

export const layer = (options: ConsoleOptions) => routes(options).pipe(Layer.provide(Sampler.layer))
