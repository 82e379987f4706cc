/**
 * The payment's story (design26): one page per order with its summary, the card's non-sensitive
 * facts, the timeline of its transactions (decline codes, provider references, routing, 3-D Secure)
 * with the 3-D Secure steps its events tell,
 * its refunds and payouts, and every event with each webhook delivery and each attempt (status,
 * latency, the receiver's answer, the next retry); then the actions this operator may take.
 *
 * The story (ConsoleReads) carries no card number, CVC, client secret or signing secret, so none
 * can reach the page. An order of an account the operator is not granted is the unknown id's 404.
 */
import { Effect, Option } from "effect"
import { type CardFacts, ConsoleReads, type PaymentStory, type StoryAttempt, type StoryEvent, type StoryTransaction } from "@tender/domain"
import { isGranted } from "@tender/domain/operators/Operator"
import { facts, type Html, html, methodName, money, utcTime } from "../hosted/Html.ts"
import { orderActionForms, redeliverForm } from "./ActionForms.ts"
import type { Auth } from "./Auth.ts"
import { routeId } from "./Input.ts"
import { notFound, pageResponse, type Viewer } from "./Layout.ts"

const BAD = new Set(["failed", "canceled", "returned", "declined"])
const GOOD = new Set(["completed", "succeeded", "authorized"])

const tone = (status: string) => BAD.has(status) ? "bad" : GOOD.has(status) ? "good" : ""

const cardFacts = (card: CardFacts | null): Html =>
  card === null
    ? html`<p class="muted">No card on this payment.</p>`
    : facts([
      ["Brand", card.brand],
      ["Last four", card.last4],
      ["Expires", card.exp_month !== null && card.exp_year !== null ? `${String(card.exp_month).padStart(2, "0")}/${card.exp_year}` : null],
      ["Funding", card.funding],
      ["Country", card.country]
    ])

const transactionItem = (txn: StoryTransaction): Html =>
  html`<li class="${tone(txn.status)}"><strong>${txn.kind} · ${txn.status}</strong> · ${money(txn.amount, txn.currency)} · <time datetime="${txn.created_at}">${
    utcTime(txn.created_at)
  }</time>${
    facts([
      ["Transaction", txn.id],
      ["Parent", txn.parent_transaction_id],
      ["Decline code", txn.decline_code],
      ["Provider", txn.provider],
      ["Channel", txn.channel_id],
      ["Provider reference", txn.provider_transaction_id],
      ["Routing", txn.routing],
      ["3-D Secure", txn.three_ds],
      ["Updated", utcTime(txn.updated_at)]
    ])
  }</li>`

/** The receiver's answer: its body when one was kept, the transport's error, else what its status says. */
const answerOf = (attempt: StoryAttempt): Html => {
  if (attempt.response !== null && attempt.response !== "") return html`<pre class="code">${attempt.response}</pre>`
  if (attempt.error !== null) return html`Error: ${attempt.error}`
  if (attempt.status_code === null) return html`No answer`
  return html`HTTP ${attempt.status_code}${attempt.status_code >= 200 && attempt.status_code < 300 ? " (accepted)" : " (refused: retried)"}`
}

const eventItem = (viewer: Viewer, event: StoryEvent): Html =>
  html`<li><strong>${event.type}</strong> · <code>${event.id}</code> · <time datetime="${event.created_at}">${utcTime(event.created_at)}</time> ${
    redeliverForm(viewer, event.id)
  }${
    event.deliveries.length === 0
      ? html`<p class="muted">No webhook delivery (no endpoint subscribed).</p>`
      : event.deliveries.map((delivery) =>
        html`<h3>Delivery <code>${delivery.id}</code> to ${delivery.endpoint_url}: ${delivery.status}${
          delivery.next_attempt_at !== null ? html` · next retry ${utcTime(delivery.next_attempt_at)}` : ""
        }</h3>${
          delivery.attempts.length === 0
            ? html`<p class="muted">Not attempted yet.</p>`
            : html`<table><caption>Attempts of ${delivery.id}</caption><thead><tr><th scope="col">Time</th><th scope="col" class="num">Status code</th><th scope="col" class="num">Latency ms</th><th scope="col">Receiver's answer</th></tr></thead><tbody>${
              delivery.attempts.map((attempt) =>
                html`<tr><td>${utcTime(attempt.at)}</td><td class="num">${attempt.status_code ?? "none"}</td><td class="num">${attempt.latency_ms ?? ""}</td><td>${
                  answerOf(attempt)
                }</td></tr>`
              )
            }</tbody></table>`
        }`
      )
  }</li>`

const outflowsTable = (story: PaymentStory): Html =>
  story.outflows.length === 0
    ? html`<p class="muted">No refunds or payouts.</p>`
    : html`<table><caption>Refunds and payouts of ${story.order.id}</caption><thead><tr><th scope="col">Kind</th><th scope="col">Id</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Created</th><th scope="col">Transaction</th></tr></thead><tbody>${
      story.outflows.map((o) =>
        html`<tr><td>${o.kind}</td><td><code>${o.id}</code></td><td>${o.status}</td><td class="num">${money(o.amount, o.currency)}</td><td>${utcTime(o.created_at)}</td><td>${
          o.transaction_id ?? ""
        }</td></tr>`
      )
    }</tbody></table>`

/** The 3-D Secure steps the order's events tell (each challenge asked, then its result); nothing without 3-D Secure. */
const threeDsSteps = (story: PaymentStory): Html =>
  story.three_ds_steps.length === 0
    ? html``
    : html`<h3>3-D Secure steps</h3><ol class="steps">${
      story.three_ds_steps.map((s) => html`<li><time datetime="${s.at}">${utcTime(s.at)}</time> · ${s.step}</li>`)
    }</ol>`

const renderStory = (viewer: Viewer, story: PaymentStory): Html => {
  const { order } = story
  // The card of the latest attempt that had one: what the merchant's customer last paid with.
  const card = [...story.transactions].reverse().find((txn) => txn.card !== null)?.card ?? null
  return html`<h1>Payment ${order.id}</h1>
<h2>Summary</h2>
${
    facts([
      ["Status", order.status],
      ["Amount", money(order.amount, order.currency)],
      ["Captured", money(order.captured_amount, order.currency)],
      ["Refunded", money(order.refunded_amount, order.currency)],
      ["Method", methodName(order.payment_method)],
      ["Capture", order.capture_method],
      ["Merchant reference", order.merchant_reference],
      ["Account", html`<a href="${`/console/accounts/${encodeURIComponent(order.account_id)}`}">${order.account_id}</a>`],
      ["Processing profile", order.processing_profile],
      ["Mode", order.livemode ? "live" : "test"],
      ["Created", utcTime(order.created_at)],
      ["Updated", utcTime(order.updated_at)]
    ])
  }
<h2>Card</h2>
${cardFacts(card)}
<h2>Timeline</h2>
${story.transactions.length === 0 ? html`<p class="muted">No attempt yet.</p>` : html`<ol class="timeline">${story.transactions.map(transactionItem)}</ol>`}
${threeDsSteps(story)}
<h2>Refunds and payouts</h2>
${outflowsTable(story)}
<h2>Events and webhook deliveries</h2>
${story.events.length === 0 ? html`<p class="muted">No events.</p>` : html`<ol class="timeline">${story.events.map((event) => eventItem(viewer, event))}</ol>`}
${orderActionForms(viewer, order)}`
}

export const story = (auth: Auth) =>
  auth.page((signed, message) =>
    Effect.gen(function*() {
      const id = yield* routeId
      if (id === undefined) return notFound(signed.viewer)
      const reads = yield* ConsoleReads
      // Where it belongs first (one small read), the whole story only when it is the operator's to see.
      const located = yield* reads.locate(id)
      if (Option.isNone(located) || located.value.kind !== "orders" || !isGranted(signed.operator.accounts, located.value.account_id)) return notFound(signed.viewer)
      const found = yield* reads.story(id)
      if (Option.isNone(found) || !isGranted(signed.operator.accounts, found.value.order.account_id)) return notFound(signed.viewer)
      return pageResponse({ title: `Payment ${found.value.order.id}`, viewer: signed.viewer, message, body: renderStory(signed.viewer, found.value) })
    })
  )
