/**
 * The console's access (design26): the session cookie, CSRF, and the guards every page and action
 * runs behind.
 *
 * - Session: cookie `tender_console` holds the random token the Operators use case issued (only its
 *   hash is stored); `Path=/console; HttpOnly; SameSite=Strict`, `Secure` when the browser reached
 *   us over https (the public URL is https, or a trusted proxy says so in X-Forwarded-Proto: the
 *   header of an untrusted peer is anyone's to write). Operators.authenticate applies the idle and
 *   absolute timeouts and touches the session; logout deletes it, so a replayed cookie is refused.
 * - CSRF on every POST: the hidden field `csrf` must equal the session's token (constant-time), and an
 *   `Origin` header, when the browser sends one naming a host, must be this server's own (and
 *   `Sec-Fetch-Site`, when sent, same-origin: `originOk`). Login and enrolment have
 *   no session yet: their forms use a double-submit cookie `tender_console_csrf`.
 * - Notices after a redirect travel in a short-lived HttpOnly cookie (`tender_console_flash`) set by
 *   the server, never in the URL: no link can make the console print text of someone else's choosing.
 *   The cookie is MACed with the session's CSRF token, so one planted by a sibling host (cookie
 *   tossing) or left by another session is not shown.
 */
import { createHmac } from "node:crypto"
import { Effect, Option } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpServerRequest, HttpServerResponse, UrlParams } from "effect/http"
import type { ConsoleSession } from "@tender/domain/operators/Operator"
import { type OperatorView, Operators } from "@tender/domain/operators/Operators"
import { OperatorCredentials } from "@tender/domain/operators/OperatorPorts"
import { formBody } from "../hosted/Html.ts"
import { sameSecret } from "../SameSecret.ts"
import { DEFAULT_LANDING, safeNext } from "./Input.ts"
import { expiredForm, type Message, seeOther, type Viewer } from "./Layout.ts"

export const SESSION_COOKIE = "tender_console"
const LOGIN_CSRF_COOKIE = "tender_console_csrf"
const FLASH_COOKIE = "tender_console_flash"

export const LOGIN_PATH = "/console/login"

export interface AuthOptions {
  /** TENDER_PUBLIC_URL: an https one makes every cookie Secure, and its origin is the console's own. */
  readonly publicUrl: string
  /** How many proxies in front are trusted (IpLimits): only then is X-Forwarded-Proto believed. */
  readonly trustedProxies: number
}

/** A console form is a handful of fields; anything larger is not from our pages. */
const MAX_FORM_BYTES = ByteSize.bytes(16 * 1024)

export type Form = UrlParams.UrlParams

/** The login page's address, carrying a deep link (`next`) to land on after login when there is one. */
const loginPath = (next: string | undefined): string => {
  const landing = safeNext(next)
  return landing === undefined || landing === DEFAULT_LANDING ? LOGIN_PATH : `${LOGIN_PATH}?${new URLSearchParams({ next: landing }).toString()}`
}

/** The posted form, or an empty one when the body is not a form within the bound (its CSRF check then fails). */
export const readForm: Effect.Effect<Form, never, HttpServerRequest.HttpServerRequest> = Effect.flatMap(
  HttpServerRequest.HttpServerRequest,
  (request) => formBody(request, MAX_FORM_BYTES)
)

/** A form field, trimmed of nothing: `undefined` when absent. */
export const field = (form: Form, name: string): string | undefined => Option.getOrUndefined(UrlParams.getFirst(form, name))

const flashMac = (payload: string, key: string) => createHmac("sha256", key).update(payload).digest("base64url")

export interface SignedIn {
  readonly operator: OperatorView
  readonly session: ConsoleSession
  readonly token: string
  readonly viewer: Viewer
}

export const makeAuth = (options: AuthOptions) => {
  const publicOrigin = (() => {
    try {
      return new URL(options.publicUrl).origin
    } catch {
      return undefined
    }
  })()

  const isHttps = (request: HttpServerRequest.HttpServerRequest): boolean => {
    if (options.publicUrl.startsWith("https:")) return true
    if (options.trustedProxies <= 0) return false
    return (request.headers["x-forwarded-proto"] ?? "").split(",").some((proto) => proto.trim().toLowerCase() === "https")
  }

  const cookieOptions = (request: HttpServerRequest.HttpServerRequest, maxAgeSeconds?: number) => ({
    path: "/console",
    httpOnly: true,
    sameSite: "strict" as const,
    secure: isHttps(request),
    ...(maxAgeSeconds === undefined ? {} : { maxAge: `${maxAgeSeconds} seconds` as const })
  })

  /**
   * The post came from the console's own pages. An Origin naming a host must be ours. `Origin: null`
   * is what Chromium sends for our own forms, because the console's pages are `no-referrer`; then,
   * as when Origin is absent, Fetch Metadata decides where a browser says it is: same-origin, or
   * none (typed by the user), never another site's page. The CSRF token is checked in any case.
   */
  const originOk = (request: HttpServerRequest.HttpServerRequest): boolean => {
    const site = request.headers["sec-fetch-site"]
    if (site !== undefined && site !== "same-origin" && site !== "none") return false
    const origin = request.headers["origin"]
    if (origin === undefined || origin === "null") return true
    if (origin === publicOrigin) return true
    const host = request.headers["host"]
    return host !== undefined && origin === `${isHttps(request) ? "https" : "http"}://${host}`
  }

  /** The signed-in operator of this request's cookie, if its session is live. */
  const signedIn = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = request.cookies[SESSION_COOKIE]
    if (token === undefined || token.length === 0 || token.length > 200) return Option.none<SignedIn>()
    const found = yield* (yield* Operators).authenticate(token)
    return Option.map(found, ({ operator, session }): SignedIn => ({ operator, session, token, viewer: { operator, csrf: session.csrf_token } }))
  })

  /**
   * Signed out (or the session ended): to the login page; a page asked by GET is the deep link to
   * land on after login (`next`), a POST's target is not (its form is gone with the session).
   */
  const toLogin = (request: HttpServerRequest.HttpServerRequest) => {
    const location = request.method === "GET" ? loginPath(request.url) : LOGIN_PATH
    return request.cookies[SESSION_COOKIE] === undefined
      ? seeOther(location)
      : expireCookie(seeOther(location), SESSION_COOKIE, cookieOptions(request))
  }

  /** The message a redirect left for this session (Flash), if its MAC holds. */
  const takeFlash = (request: HttpServerRequest.HttpServerRequest, key: string): Message | undefined => {
    const [payload, mac] = (request.cookies[FLASH_COOKIE] ?? "").split(".")
    if (payload === undefined || !sameSecret(mac, flashMac(payload, key))) return undefined
    try {
      const parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { kind?: unknown; text?: unknown }
      if ((parsed.kind === "status" || parsed.kind === "alert") && typeof parsed.text === "string") {
        return { kind: parsed.kind, text: parsed.text.slice(0, 500) }
      }
    } catch {
      // Not ours after all: no message.
    }
    return undefined
  }

  /**
   * A page behind login: the handler gets the operator and any message a redirect left; without a
   * live session, a 303 to the login page.
   */
  const page = <R>(handler: (signed: SignedIn, message: Message | undefined) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const signed = yield* signedIn
      if (Option.isNone(signed)) return toLogin(request)
      const response = yield* handler(signed.value, takeFlash(request, signed.value.session.csrf_token))
      return request.cookies[FLASH_COOKIE] === undefined ? response : expireCookie(response, FLASH_COOKIE, cookieOptions(request))
    })

  /**
   * A POST behind login and CSRF: no session → 303 to login; a missing or wrong `csrf` field, or a
   * foreign Origin → 403 and nothing runs.
   */
  const action = <R>(handler: (signed: SignedIn, form: Form) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const signed = yield* signedIn
      if (Option.isNone(signed)) return toLogin(request)
      const form = yield* readForm
      if (!originOk(request) || !sameSecret(field(form, "csrf"), signed.value.session.csrf_token)) return expiredForm(signed.value.viewer)
      return yield* handler(signed.value, form)
    })

  /** Login and enrolment forms: the double-submit cookie's value, made when absent. */
  const loginCsrf = (request: HttpServerRequest.HttpServerRequest) => {
    const cookie = request.cookies[LOGIN_CSRF_COOKIE]
    return cookie === undefined ? OperatorCredentials.use((c) => c.newToken()) : Effect.succeed(cookie)
  }

  const withLoginCsrf = (response: HttpServerResponse.HttpServerResponse, request: HttpServerRequest.HttpServerRequest, token: string) =>
    request.cookies[LOGIN_CSRF_COOKIE] === token ? response : setCookie(response, LOGIN_CSRF_COOKIE, token, cookieOptions(request))

  /** A login or enrolment POST: its field matches its cookie and its Origin is ours. */
  const loginFormOk = (request: HttpServerRequest.HttpServerRequest, form: Form) =>
    originOk(request) && sameSecret(field(form, "csrf"), request.cookies[LOGIN_CSRF_COOKIE])

  /** A redirect that leaves a message for this session's next page. */
  const redirectWith = (request: HttpServerRequest.HttpServerRequest, signed: SignedIn, location: string, message: Message) => {
    const payload = Buffer.from(JSON.stringify(message)).toString("base64url")
    return setCookie(seeOther(location), FLASH_COOKIE, `${payload}.${flashMac(payload, signed.session.csrf_token)}`, cookieOptions(request, 60))
  }

  return { isHttps, cookieOptions, originOk, signedIn, page, action, loginCsrf, withLoginCsrf, loginFormOk, redirectWith, toLogin }
}

export type Auth = ReturnType<typeof makeAuth>

const setCookie = (response: HttpServerResponse.HttpServerResponse, name: string, value: string, options: Parameters<typeof HttpServerResponse.setCookieUnsafe>[3]) =>
  HttpServerResponse.setCookieUnsafe(response, name, value, options)

const expireCookie = (response: HttpServerResponse.HttpServerResponse, name: string, options: Parameters<typeof HttpServerResponse.expireCookieUnsafe>[2]) =>
  HttpServerResponse.expireCookieUnsafe(response, name, options)
