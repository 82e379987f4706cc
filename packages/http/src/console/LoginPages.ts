/**
 * Signing in and out (design26): the login page, the enrolment page a one-time link opens
 * (`tender operators add` prints it), and logout. The Operators use case decides; these pages only
 * carry its answers, with one wording for a wrong name, password or code so a name cannot be probed.
 */
import { Effect, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Operators } from "@tender/domain/operators/Operators"
import { html, qrImage } from "../hosted/Html.ts"
import { type Auth, field, LOGIN_PATH, readForm, SESSION_COOKIE } from "./Auth.ts"
import { DEFAULT_LANDING, hasControl, MAX_OPERATOR_NAME, safeNext } from "./Input.ts"
import { csrfField, expiredForm, hhmm, type Message, notFound, pageResponse, seeOther } from "./Layout.ts"

const loginForm = (csrf: string, name: string, next: string | undefined, message: Message | undefined) =>
  pageResponse({
    title: "Log in",
    message,
    body: html`<div class="narrow"><h1>Log in to the Tender console</h1>
<form class="panel" method="post" action="${LOGIN_PATH}">${csrfField(csrf)}${next !== undefined && html`<input type="hidden" name="next" value="${next}">`}
<label for="name">Name</label><input id="name" name="name" autocomplete="username" required value="${name}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<label for="code">Authenticator code</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required>
<button type="submit" class="primary">Log in</button>
</form></div>`
  })

export const showLogin = (auth: Auth) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = new URL(request.url, "http://console").searchParams
    // The deep link a signed-out operator opened (Auth.toLogin), checked again when the form comes back.
    const next = safeNext(params.get("next"))
    // Already signed in: straight on.
    if (Option.isSome(yield* auth.signedIn)) return seeOther(next ?? DEFAULT_LANDING)
    const csrf = yield* auth.loginCsrf(request)
    const enrolled = params.get("enrolled") === "1"
    const message: Message | undefined = enrolled ? { kind: "status", text: "Enrolment complete: log in with your new password and a code." } : undefined
    return auth.withLoginCsrf(loginForm(csrf, "", next, message), request, csrf)
  })

export const submitLogin = (auth: Auth) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const form = yield* readForm
    if (!auth.loginFormOk(request, form)) return expiredForm()
    const csrf = yield* auth.loginCsrf(request)
    const next = safeNext(field(form, "next"))
    const name = field(form, "name") ?? "", password = field(form, "password") ?? "", code = field(form, "code") ?? ""
    const wrong = (shownName: string) => loginForm(csrf, shownName, next, { kind: "alert", text: "Name, password or code is wrong." })
    // No operator's name is that long or holds a control (a NUL would fail in PostgreSQL): the
    // usual answer, without asking the use case. The password is only hashed, never stored as sent.
    if (name.length > MAX_OPERATOR_NAME || hasControl(name) || hasControl(code) || code.length > 32) return wrong("")
    const result = yield* (yield* Operators).login(name, password, code)
    switch (result._tag) {
      case "LoggedIn":
        return HttpServerResponse.setCookieUnsafe(seeOther(next ?? DEFAULT_LANDING), SESSION_COOKIE, result.session_token, auth.cookieOptions(request))
      case "Locked":
        return loginForm(csrf, name, next, { kind: "alert", text: `Too many failed attempts: try again after ${hhmm(result.until)} UTC.` })
      case "Refused":
        return wrong(name)
    }
  })

export const logout = (auth: Auth) =>
  auth.action((signed) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      yield* (yield* Operators).logout(signed.token)
      return HttpServerResponse.expireCookieUnsafe(seeOther(LOGIN_PATH), SESSION_COOKIE, auth.cookieOptions(request))
    })
  )

/** The otpauth:// URI authenticator apps scan (Key Uri Format). */
const otpauth = (name: string, secret: string) =>
  `otpauth://totp/${encodeURIComponent(`Tender:${name}`)}?secret=${secret}&issuer=Tender&algorithm=SHA1&digits=6&period=30`

const enrolForm = (token: string, csrf: string, operator: { readonly name: string; readonly role: string }, secret: string, message: Message | undefined) =>
  pageResponse({
    title: "Enrol",
    message,
    body: html`<div class="narrow"><h1>Enrol as ${operator.name}</h1>
<p>You are enrolling as a console ${operator.role}. Add this key to an authenticator app (scan the code or type the key), then choose a password of at least 12 characters.</p>
${qrImage(otpauth(operator.name, secret), "QR code of the authenticator key")}
<p>Key: <code id="totp-secret" class="secret">${secret}</code></p>
<form class="panel" method="post" action="${`/console/enrol/${encodeURIComponent(token)}`}">${csrfField(csrf)}
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="12" required>
<label for="password_confirm">Repeat the password</label><input id="password_confirm" name="password_confirm" type="password" autocomplete="new-password" minlength="12" required>
<label for="code">Authenticator code</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required>
<button type="submit" class="primary">Finish enrolment</button>
</form></div>`
  })

const enrolment = Effect.gen(function*() {
  const token = (yield* HttpRouter.params).token ?? ""
  const found = token.length === 0 || token.length > 200 ? Option.none() : yield* (yield* Operators).enrolment(token)
  return { token, found }
})

export const showEnrol = (auth: Auth) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { found, token } = yield* enrolment
    if (Option.isNone(found)) return notFound()
    const csrf = yield* auth.loginCsrf(request)
    return auth.withLoginCsrf(enrolForm(token, csrf, found.value.operator, found.value.totp_secret, undefined), request, csrf)
  })

export const submitEnrol = (auth: Auth) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { found, token } = yield* enrolment
    if (Option.isNone(found)) return notFound()
    const form = yield* readForm
    if (!auth.loginFormOk(request, form)) return expiredForm()
    const csrf = yield* auth.loginCsrf(request)
    const again = (text: string) => enrolForm(token, csrf, found.value.operator, found.value.totp_secret, { kind: "alert", text })
    const password = field(form, "password") ?? ""
    if (password !== (field(form, "password_confirm") ?? "")) return again("The two passwords differ: type the same password twice.")
    const enrolled = yield* Effect.result((yield* Operators).enrol(token, password, field(form, "code") ?? ""))
    if (enrolled._tag === "Success") return seeOther(`${LOGIN_PATH}?enrolled=1`)
    const error = enrolled.failure
    if (error._tag === "NotFound") return notFound()
    // Two tabs (or two clicks) finished the same link at once and the other won: the operator's
    // version moved on. Its wording is the repository's, not one for the person at the form.
    if (error._tag === "Conflict") {
      return pageResponse({
        title: "Enrol",
        message: { kind: "alert", text: "This link was just used; log in." },
        body: html`<div class="narrow"><h1>Enrolment</h1><p><a href="${LOGIN_PATH}">Log in</a></p></div>`
      })
    }
    const detail = error.errors?.map((e) => e.message).join(" ") ?? ""
    return again(detail.length > 0 ? `${error.message} ${detail}` : error.message)
  })
