/**
 * The audit log in the console (design26): who did what to which object, when, and how it ended,
 * newest first, limited to the entries of the accounts the operator is granted (the Operators use
 * case filters by the grant; an admin granted "all" sees every entry). `tender audit list` reads the
 * same log.
 */
import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { Operators } from "@tender/domain/operators/Operators"
import { html, utcTime } from "../hosted/Html.ts"
import type { Auth } from "./Auth.ts"
import { hasControl, MAX_OPERATOR_NAME, withoutControls } from "./Input.ts"
import { pageResponse } from "./Layout.ts"

const MAX_CURSOR = 200

export const audit = (auth: Auth) =>
  auth.page((signed, message) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const params = new URL(request.url, "http://console").searchParams
      const asked = (params.get("operator") ?? "").trim(), cursor = params.get("cursor") ?? ""
      // No operator's name is longer or holds a control (a NUL would fail in PostgreSQL), and no
      // cursor we made does: nobody's entries, without asking storage.
      const impossible = asked.length > MAX_OPERATOR_NAME || hasControl(asked) || cursor.length > MAX_CURSOR || hasControl(cursor)
      const operator = impossible ? withoutControls(asked.slice(0, MAX_OPERATOR_NAME)) : asked
      const listed = impossible ? undefined : yield* Effect.result((yield* Operators).audit({
        operator: operator === "" ? undefined : operator,
        accounts: signed.operator.accounts,
        limit: 50,
        cursor: cursor === "" ? undefined : cursor
      }))
      const body = listed === undefined
        ? html`<p role="status">No entries.</p>`
        : listed._tag === "Failure"
        ? html`<div class="alert" role="alert">${listed.failure.message}</div>`
        : listed.success.data.length === 0
        ? html`<p role="status">No entries.</p>`
        : html`<table><caption>Audit log${operator === "" ? "" : ` of ${operator}`}, newest first</caption><thead><tr><th scope="col">Time</th><th scope="col">Operator</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Account</th><th scope="col">Outcome</th><th scope="col">Detail</th></tr></thead><tbody>${
          listed.success.data.map((entry) =>
            html`<tr><td><time datetime="${entry.at}">${utcTime(entry.at)}</time></td><td>${entry.operator_name}</td><td>${entry.action}</td><td><code>${entry.target}</code></td><td>${
              entry.account_id ?? ""
            }</td><td>${entry.outcome}</td><td>${entry.detail}</td></tr>`
          )
        }</tbody></table>${
          listed.success.next_cursor !== null &&
          html`<p><a href="${`/console/audit?${new URLSearchParams({ ...(operator === "" ? {} : { operator }), cursor: listed.success.next_cursor }).toString()}`}">Next page</a></p>`
        }`
      return pageResponse({
        title: "Audit log",
        viewer: signed.viewer,
        message,
        body: html`<h1>Audit log</h1>
<form class="panel" method="get" action="/console/audit" role="search"><label for="operator">Operator</label><input id="operator" name="operator" value="${operator}"><button type="submit" class="primary">Filter</button></form>
${body}`
      })
    })
  )
