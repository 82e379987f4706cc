/**
 * The operator console's page frame (issue 26, design: UI contract): one `<h1>`, the skip link, the
 * console's navigation with the signed-in operator and the logout form, the notice or alert a
 * redirect carried, and the response with the console's strict headers.
 *
 * Nothing inline: the stylesheet is an asset (`/console/assets/console.css`), no page runs a
 * script, and the CSP says so (`style-src 'self'`, `script-src 'self'`), so an injected attribute
 * or tag could neither style nor script the page.
 */
import { HttpServerResponse } from "effect/http"
import type { OperatorView } from "@tender/domain/operators/Operators"
import { type Html, html, type Part } from "../hosted/Html.ts"
import { STYLESHEET_HREF } from "./Assets.ts"

/** design26: the console's policy. `form-action 'self'`: every form posts back to the console. */
export const CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "script-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'"
].join("; ")

/** The headers of every console response (pages, redirects, assets' errors). */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY"
}

/** Who is signed in, for the navigation and every form's CSRF field. */
export interface Viewer {
  readonly operator: OperatorView
  readonly csrf: string
}

/** A message a redirect carried (Flash.ts): a notice (role="status") or an alert (role="alert"). */
export interface Message {
  readonly kind: "status" | "alert"
  readonly text: string
}

export interface ConsolePage {
  readonly title: string
  readonly body: Html
  /** Absent on the login, enrolment and error pages seen signed out. */
  readonly viewer?: Viewer | undefined
  readonly message?: Message | undefined
}

/** The hidden field every console POST carries. */
export const csrfField = (token: string): Html => html`<input type="hidden" name="csrf" value="${token}">`

const NAV_LINKS: ReadonlyArray<readonly [href: string, label: string]> = [
  ["/console/search", "Search"],
  ["/console/accounts", "Accounts"],
  ["/console/audit", "Audit log"],
  ["/console/watch", "Watch"]
]

const nav = (viewer: Viewer): Html =>
  html`<nav aria-label="Console"><ul class="nav">${
    NAV_LINKS.map(([href, label]) => html`<li><a href="${href}">${label}</a></li>`)
  }</ul><form class="signout" method="post" action="/console/logout">${csrfField(viewer.csrf)}<span>Signed in as ${viewer.operator.name} (${viewer.operator.role})</span> <button type="submit" class="link">Log out</button></form></nav>`

const messageBox = (message: Message | undefined): Part =>
  message !== undefined && html`<div class="${message.kind === "alert" ? "alert" : "notice"}" role="${message.kind}">${message.text}</div>`

export const render = (options: ConsolePage): Html =>
  html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>${options.title} · Tender console</title>
<link rel="stylesheet" href="${STYLESHEET_HREF}">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><span class="brand">Tender console</span>${options.viewer !== undefined && nav(options.viewer)}</header>
<main id="main">
${messageBox(options.message)}${options.body}
</main>
</body>
</html>
`

export const respond = (document: Html, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(document.value, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: { ...SECURITY_HEADERS, "cache-control": "no-store" }
  })

export const pageResponse = (options: ConsolePage, status = 200) => respond(render(options), status)

/** 303 to a console path (every redirect of the console is to itself). */
export const seeOther = (location: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.redirect(location, { status: 303, headers: { ...SECURITY_HEADERS, "cache-control": "no-store" } })

/** design26: an unknown id and another account's object get this same page. */
export const notFound = (viewer?: Viewer) =>
  pageResponse({ title: "Not found", viewer, body: html`<h1>Not found</h1><p>Nothing here, or nothing you may see. <a href="/console/search">Search</a></p>` }, 404)

export const notAllowed = (viewer: Viewer | undefined, reason = "Your role does not allow this action.") =>
  pageResponse({ title: "Not allowed", viewer, body: html`<h1>Not allowed</h1><p>${reason} Nothing was changed.</p>` }, 403)

/**
 * Anything the console did not expect (a storage failure, a defect): its own page with its own
 * headers, never the API's JSON envelope; Console.ts logs the cause.
 */
export const serverError = () =>
  pageResponse({ title: "Something went wrong", body: html`<h1>Something went wrong</h1><p>The console could not answer this request; the failure was logged. Check the object's page before trying again. <a href="/console/search">Search</a></p>` }, 500)

/** A method the path does not take (HEAD is answered like GET). */
export const methodNotAllowed = (allow: ReadonlyArray<string>) =>
  HttpServerResponse.setHeader(
    pageResponse({ title: "Method not allowed", body: html`<h1>Method not allowed</h1><p>This address takes ${allow.join(", ")}.</p>` }, 405),
    "allow",
    allow.join(", ")
  )

/** A time of day, UTC (`09:30`), from an ISO timestamp or epoch milliseconds. */
export const hhmm = (time: string | number): string => new Date(time).toISOString().slice(11, 16)

/** design26: a POST whose CSRF token or Origin does not match. */
export const expiredForm = (viewer?: Viewer) =>
  notAllowed(viewer, "This form has expired or did not come from the console.")
