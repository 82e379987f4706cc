/**
 * Accounts (design26): the accounts the operator is granted, and one account's facts and webhook
 * endpoints, with the admin's buttons (suspend or activate, disable an endpoint). Another account is
 * the unknown id's 404. Never a key or signing secret: only the fields listed here are printed.
 */
import { Effect, Option } from "effect"
import { Accounts, Webhooks } from "@tender/domain"
import { isGranted } from "@tender/domain/operators/Operator"
import { facts, html, utcTime } from "../hosted/Html.ts"
import { accountStatusForm, disableEndpointForm } from "./ActionForms.ts"
import type { Auth } from "./Auth.ts"
import { routeId } from "./Input.ts"
import { notFound, pageResponse } from "./Layout.ts"

export const accounts = (auth: Auth) =>
  auth.page((signed, message) =>
    Effect.gen(function*() {
      const all = yield* (yield* Accounts).list()
      const granted = all.filter((account) => isGranted(signed.operator.accounts, account.id))
      return pageResponse({
        title: "Accounts",
        viewer: signed.viewer,
        message,
        body: html`<h1>Accounts</h1>${
          granted.length === 0
            ? html`<p>No accounts are granted to you.</p>`
            : html`<table><caption>Accounts you are granted</caption><thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Mode</th><th scope="col">Status</th><th scope="col"><span class="muted">Action</span></th></tr></thead><tbody>${
              granted.map((account) =>
                html`<tr><td><a href="${`/console/accounts/${encodeURIComponent(account.id)}`}">${account.id}</a></td><td>${account.name}</td><td>${account.mode}</td><td>${account.status}</td><td>${
                  accountStatusForm(signed.viewer, account)
                }</td></tr>`
              )
            }</tbody></table>`
        }`
      })
    })
  )

export const account = (auth: Auth) =>
  auth.page((signed, message) =>
    Effect.gen(function*() {
      const id = yield* routeId
      const found = id === undefined || !isGranted(signed.operator.accounts, id)
        ? Option.none()
        : yield* Effect.option((yield* Accounts).get(id))
      if (Option.isNone(found)) return notFound(signed.viewer)
      const acct = found.value
      const endpoints = (yield* (yield* Webhooks).listEndpoints(acct)).data
      return pageResponse({
        title: `Account ${acct.id}`,
        viewer: signed.viewer,
        message,
        body: html`<h1>Account ${acct.name}</h1>
${
          facts([
            ["Id", acct.id],
            ["Mode", acct.mode],
            ["Status", acct.status],
            ["Created", utcTime(acct.created_at)]
          ])
        }
${accountStatusForm(signed.viewer, acct)}
<h2>Webhook endpoints</h2>
${
          endpoints.length === 0
            ? html`<p class="muted">No webhook endpoints.</p>`
            : html`<table><caption>Webhook endpoints of ${acct.id}</caption><thead><tr><th scope="col">Id</th><th scope="col">URL</th><th scope="col">Status</th><th scope="col">Events</th><th scope="col"><span class="muted">Action</span></th></tr></thead><tbody>${
              endpoints.map((endpoint) =>
                html`<tr><td><code>${endpoint.id}</code></td><td>${endpoint.url}</td><td>${endpoint.status}</td><td>${endpoint.enabled_events.join(", ")}</td><td>${
                  disableEndpointForm(signed.viewer, endpoint)
                }</td></tr>`
              )
            }</tbody></table>`
        }`
      })
    })
  )
