/**
 * Find (design26): the search form over every kind an operator looks for, its results table with
 * paging, and deep links by id (`/console/find/<id>`). What is searched is the operator's grant:
 * rows of other accounts never come back, and a deep link to one is the same 404 as an unknown id.
 */
import { Effect, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { ConsoleReads, ConsoleSearch, type ConsoleRow, Search, SEARCH_KINDS } from "@tender/domain"
import { isGranted } from "@tender/domain/operators/Operator"
import { type Html, html, money, utcTime } from "../hosted/Html.ts"
import type { Auth } from "./Auth.ts"
import { hasControl, routeId, withoutControls } from "./Input.ts"
import { notFound, pageResponse, seeOther, type Viewer } from "./Layout.ts"

/** The form's fields, their labels, and how each is entered. */
const FIELDS = [
  ["q", "Id", "text"],
  ["reference", "Reference", "text"],
  ["amount", "Amount", "text"],
  ["currency", "Currency", "text"],
  ["status", "Status", "text"],
  ["method", "Method", "text"],
  ["channel", "Channel", "text"],
  // Text, not type=date: Chromium's date field is three stops for the Tab key, and a time is allowed too.
  ["from", "From", "text"],
  ["to", "To", "text"],
  ["last4", "Last four", "text"]
] as const

const LABELS: Readonly<Record<string, string>> = Object.fromEntries([["kind", "Kind"], ["cursor", "Next page"], ["limit", "Limit"], ...FIELDS.map(([name, label]) => [name, label])])

type FormValues = Readonly<Record<string, string>>

const searchForm = (values: FormValues) =>
  html`<form class="panel" method="get" action="/console/search" role="search">
<div class="filters">
<div><label for="kind">Kind</label><select id="kind" name="kind">${
    SEARCH_KINDS.map((kind) => html`<option value="${kind}"${(values.kind ?? "orders") === kind ? html` selected` : ""}>${kind}</option>`)
  }</select></div>
${
    FIELDS.map(([name, label, type]) =>
      html`<div><label for="f-${name}">${label}</label><input id="f-${name}" name="${name}" type="${type}" value="${values[name] ?? ""}"${
        name === "last4" ? html` inputmode="numeric"` : ""
      }${name === "from" || name === "to" ? html` aria-describedby="dates-hint"` : ""}></div>`
    )
  }
</div>
<p id="dates-hint" class="muted">From and To: a day (YYYY-MM-DD, UTC; To includes the whole day) or an ISO 8601 time. Amount: a decimal with its Currency.</p>
<button type="submit" class="primary">Search</button> <a href="/console/search">Clear</a>
</form>`

/** Where a row's id leads: its order's story, or (customers) the deep link. */
const rowHref = (row: ConsoleRow) => row.order_id !== null ? `/console/orders/${encodeURIComponent(row.order_id)}` : `/console/find/${encodeURIComponent(row.id)}`

const resultsTable = (kind: string, rows: ReadonlyArray<ConsoleRow>): Html =>
  html`<table><caption>${kind} found (${rows.length} on this page)</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Created</th><th scope="col">Account</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Method</th><th scope="col">Channel</th><th scope="col">Reference</th><th scope="col">Last four</th>${
    kind === "customers" ? html`<th scope="col">Customer</th>` : ""
  }</tr></thead>
<tbody>${
    rows.map((row) =>
      html`<tr><td><a href="${rowHref(row)}">${row.id}</a></td><td>${utcTime(row.created_at)}</td><td>${row.account_id}</td><td>${row.status ?? ""}</td><td class="num">${
        row.amount !== null && row.currency !== null ? money(row.amount, row.currency) : ""
      }</td><td>${row.method ?? ""}</td><td>${row.channel ?? ""}</td><td>${row.reference ?? ""}</td><td>${row.last4 ?? ""}</td>${
        kind === "customers" ? html`<td>${row.label ?? ""}</td>` : ""
      }</tr>`
    )
  }</tbody></table>`

const nextHref = (values: FormValues, cursor: string) => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(values)) if (name !== "cursor" && value !== "") params.set(name, value)
  params.set("cursor", cursor)
  return `/console/search?${params.toString()}`
}

const KNOWN = new Set(["kind", "cursor", ...FIELDS.map(([name]) => name)])

/** Longer than any value a filter can match (an id, a reference, a cursor): the form is a page, not a place to paste a book. */
const MAX_VALUE = 200

/** A value no search can use, named by its field's label: refused before anything reads, never cut to fit. */
const unusable = (name: string, value: string): string | undefined =>
  value.length > MAX_VALUE
    ? `${LABELS[name] ?? name}: at most ${MAX_VALUE} characters.`
    : hasControl(value)
    ? `${LABELS[name] ?? name}: must not contain control characters.`
    : undefined

export const search = (auth: Auth) =>
  auth.page((signed, message) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const params = new URL(request.url, "http://console").searchParams
      const values: Record<string, string> = {}
      let problem: string | undefined
      for (const name of KNOWN) {
        const value = params.get(name)
        if (value === null) continue
        problem ??= unusable(name, value)
        // What the form shows again is bounded too, and without controls (HTML has no place for a NUL).
        values[name] = withoutControls(value.slice(0, MAX_VALUE))
      }
      const asked = [...params.keys()].some((name) => KNOWN.has(name))
      return pageResponse({
        title: "Search",
        viewer: signed.viewer,
        message,
        body: html`<h1>Search</h1>${searchForm(values)}${
          problem !== undefined ? alert(problem) : asked ? yield* results(signed.operator.accounts, values) : ""
        }`
      })
    })
  )

const alert = (text: string) => html`<div class="alert" role="alert">${text}</div>`

const results = (grant: Viewer["operator"]["accounts"], values: FormValues) =>
  Effect.gen(function*() {
    const query = ConsoleSearch.decodeConsoleSearch(values, grant)
    if (!("kind" in query && "limit" in query)) {
      const problem = query.errors?.[0]
      const label = problem === undefined ? undefined : LABELS[problem.field] ?? problem.field
      const text = problem === undefined || label === undefined ? query.message : `${label}: ${problem.message}`
      return alert(text)
    }
    const page = yield* (yield* ConsoleReads).search(query)
    if (page.data.length === 0) return html`<p role="status">No results.</p>`
    const last = page.data[page.data.length - 1]
    return html`${resultsTable(query.kind, page.data)}${
      page.has_more && last !== undefined && html`<p><a href="${nextHref(values, Search.encodeCursor(last))}">Next page</a></p>`
    }`
  })

/** GET /console/find/:id: the object's page, or the 404 page for an unknown id or another account's. */
export const find = (auth: Auth) =>
  auth.page((signed) =>
    Effect.gen(function*() {
      const id = yield* routeId
      if (id === undefined) return notFound(signed.viewer)
      const found = yield* (yield* ConsoleReads).locate(id)
      if (Option.isNone(found) || !isGranted(signed.operator.accounts, found.value.account_id)) return notFound(signed.viewer)
      const { kind, order_id } = found.value
      if (order_id !== null) return seeOther(`/console/orders/${encodeURIComponent(order_id)}`)
      // An object with no payment of its own (a customer, a transfer): the search row that shows it.
      const searchKind = kind === "event" ? undefined : kind
      return searchKind === undefined
        ? notFound(signed.viewer)
        : seeOther(`/console/search?kind=${searchKind}&q=${encodeURIComponent(id)}`)
    })
  )

