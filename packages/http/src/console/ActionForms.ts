/**
 * The action forms the console's object pages show (design26): only the buttons the operator's role
 * may use (Operator.mayAct) and the object's state allows. Showing is a courtesy: Actions.ts checks
 * role, grant and the domain decides, whatever a page showed.
 */
import { Money, type PaymentStory } from "@tender/domain"
import { mayAct } from "@tender/domain/operators/Operator"
import { type Html, html, money } from "../hosted/Html.ts"
import { accountPage, orderPage } from "./Actions.ts"
import { csrfField, type Viewer } from "./Layout.ts"

/** Capture and void while an authorization holds an uncaptured amount; refund while something captured is not refunded. */
const orderActions = (order: PaymentStory["order"]) => ({
  capture: order.status === "authorized" && order.captured_amount < order.amount,
  void: order.status === "authorized" && order.captured_amount < order.amount,
  refund: order.captured_amount > order.refunded_amount
})

/** The Actions section of a story page: only the buttons this role may use and the order's state allows; none → nothing. */
export const orderActionForms = (viewer: Viewer, order: PaymentStory["order"]): Html | undefined => {
  const role = viewer.operator.role
  const state = orderActions(order)
  const base = orderPage(order.id)
  const forms: Array<Html> = []
  if (mayAct(role, "capture") && state.capture) {
    forms.push(html`<form method="post" action="${base}/capture">${csrfField(viewer.csrf)}
<h3>Capture</h3>
<label for="capture-amount">Amount (${order.currency})</label><input id="capture-amount" name="amount" inputmode="decimal" value="${
      Money.toDecimalString(order.amount - order.captured_amount, order.currency)
    }">
<label class="check"><input type="checkbox" name="final" value="true">Final capture (close the authorization)</label>
<button type="submit" class="primary">Capture</button></form>`)
  }
  if (mayAct(role, "void") && state.void) {
    forms.push(html`<form method="post" action="${base}/void">${csrfField(viewer.csrf)}<h3>Void</h3><p class="muted">Releases ${
      money(order.amount - order.captured_amount, order.currency)
    }.</p><button type="submit" class="danger">Void</button></form>`)
  }
  if (mayAct(role, "refund") && state.refund) {
    forms.push(html`<form method="post" action="${base}/refund">${csrfField(viewer.csrf)}
<h3>Refund</h3>
<label for="refund-amount">Amount (${order.currency}, empty: all of ${money(order.captured_amount - order.refunded_amount, order.currency)})</label><input id="refund-amount" name="amount" inputmode="decimal">
<button type="submit" class="danger">Refund</button></form>`)
  }
  if (!mayAct(role, "capture") && !mayAct(role, "void") && !mayAct(role, "refund")) return undefined
  return html`<h2>Actions</h2><div class="actions">${forms.length === 0 ? html`<p class="muted">Nothing to do in the order's state (${order.status}).</p>` : forms}</div>`
}

/** The redeliver button of an event (operator and admin). */
export const redeliverForm = (viewer: Viewer, eventId: string): Html | undefined =>
  mayAct(viewer.operator.role, "redeliver_event")
    ? html`<form class="inline" method="post" action="${`/console/events/${encodeURIComponent(eventId)}/redeliver`}">${csrfField(viewer.csrf)}<button type="submit" class="neutral">Redeliver</button></form>`
    : undefined

/** Suspend or Activate (admin), by the account's status. */
export const accountStatusForm = (viewer: Viewer, account: { readonly id: string; readonly status: string }): Html | undefined => {
  if (!mayAct(viewer.operator.role, "suspend_account")) return undefined
  const suspend = account.status === "active"
  return html`<form class="inline" method="post" action="${accountPage(account.id)}/${suspend ? "suspend" : "activate"}">${csrfField(viewer.csrf)}<button type="submit" class="${
    suspend ? "danger" : "primary"
  }">${suspend ? "Suspend" : "Activate"}</button></form>`
}

export const disableEndpointForm = (viewer: Viewer, endpoint: { readonly id: string; readonly status: string }): Html | undefined =>
  mayAct(viewer.operator.role, "disable_webhook_endpoint") && endpoint.status !== "disabled"
    ? html`<form class="inline" method="post" action="${`/console/webhook_endpoints/${encodeURIComponent(endpoint.id)}/disable`}">${
      csrfField(viewer.csrf)
    }<button type="submit" class="danger">Disable</button></form>`
    : undefined
