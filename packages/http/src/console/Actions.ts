/**
 * Acting from the console (design26): capture, void, refund, redeliver an event, disable a webhook
 * endpoint, suspend or activate an account. Each goes through the use case the API and CLI use
 * (Payments.operator, Outflows.operator, Webhooks, Accounts), in two steps: a POST without
 * `confirm=yes` answers a confirmation page listing the amounts; with it, the action runs, its audit
 * entry is recorded (outcome and detail), and a 303 leads back to the object's page with a notice.
 *
 * Checked here, server-side, whatever a page showed: the role may do the action (Operator.mayAct,
 * else 403 and nothing runs), and the target's account is granted (else the same 404 as an unknown
 * id). A refusal of the domain is the object's page with its message as an alert, audited as failed.
 */
import { Effect, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { Accounts, ConsoleReads, Money, Outflows, Payments, type PaymentStory, WebhookEndpointRepo, Webhooks } from "@tender/domain"
import { type ConsoleAction, isGranted, mayAct } from "@tender/domain/operators/Operator"
import { Operators } from "@tender/domain/operators/Operators"
import { html, money } from "../hosted/Html.ts"
import { type Auth, field, type Form, type SignedIn } from "./Auth.ts"
import { routeId } from "./Input.ts"
import { csrfField, notAllowed, notFound, pageResponse, type Viewer } from "./Layout.ts"

/** What an action's failure carries: every error of the domain's vocabulary has both. */
interface Refusal {
  readonly code: string
  readonly message: string
}

/** One resolved request to act: where it belongs, what to confirm, and what to run. */
interface Target {
  readonly accountId: string
  /** The object's page, where the action ends up. */
  readonly back: string
  readonly facts: ReadonlyArray<readonly [string, string]>
  /** The posted fields the confirmation form sends again. */
  readonly fields: ReadonlyArray<readonly [string, string]>
  /** An input problem found before anything runs: an alert on the object's page, no audit entry. */
  readonly invalid?: string | undefined
  /** What was asked, for the audit log (`capture 10.00 USD (final)`). */
  readonly detail: string
  /** Runs the action; succeeds with the notice to show and, when it made something (a refund), its id for the audit. */
  readonly act: Effect.Effect<Done, Refusal, ActionServices>
  /** A refusal in the operator's terms, when the domain's own wording would not do (minor units). */
  readonly explain?: ((refusal: Refusal) => Effect.Effect<string | undefined, never, ConsoleReads>) | undefined
}

interface Done {
  readonly notice: string
  readonly made?: string | undefined
}

const done = (notice: string): Done => ({ notice })

type ActionServices = Payments | Outflows | Webhooks | Accounts

type Resolve = (id: string, form: Form) => Effect.Effect<Option.Option<Target>, never, ConsoleReads | WebhookEndpointRepo | Accounts>

const TITLES: Readonly<Record<ConsoleAction, string>> = {
  capture: "Confirm capture",
  void: "Confirm void",
  refund: "Confirm refund",
  redeliver_event: "Confirm redelivery",
  disable_webhook_endpoint: "Confirm disabling",
  suspend_account: "Confirm suspension",
  activate_account: "Confirm activation"
}

export const orderPage = (id: string) => `/console/orders/${encodeURIComponent(id)}`
export const accountPage = (id: string) => `/console/accounts/${encodeURIComponent(id)}`

/** A decimal amount of the order's currency, exact to its exponent; empty → undefined (the whole remainder). */
const amountField = (form: Form, currency: string): { readonly minor: number | undefined } | { readonly invalid: string } => {
  const raw = (field(form, "amount") ?? "").trim()
  if (raw === "") return { minor: undefined }
  const parsed = raw.length > 32 ? undefined : Money.parseAmount(raw, currency)
  if (parsed === undefined || "error" in parsed) {
    return { invalid: `Amount must be a positive decimal in ${currency} with at most ${Money.exponent(currency)} decimals, such as ${Money.toDecimalString(1000, currency)}.` }
  }
  return { minor: parsed.minor }
}

/**
 * The amount an action confirms: the posted decimal, or `remainder` when none was posted; as minor
 * units, the decimal the confirmation carries (the figure shown is the figure that runs), and as shown.
 */
const confirmedAmount = (form: Form, currency: string, remainder: number) => {
  const amount = amountField(form, currency)
  const minor = "minor" in amount ? amount.minor ?? remainder : 0
  return {
    decimal: Money.toDecimalString(minor, currency),
    shown: money(minor, currency),
    invalid: "invalid" in amount ? amount.invalid : undefined
  }
}

const orderFacts = (order: PaymentStory["order"]) => [
  ["Order amount", money(order.amount, order.currency)],
  ["Already captured", money(order.captured_amount, order.currency)],
  ["Already refunded", money(order.refunded_amount, order.currency)]
] as const

const storyOf = (id: string) => ConsoleReads.use((reads) => reads.story(id))

/**
 * The capture refusal whose domain wording counts minor units (review M3), in decimals of the
 * order's currency, read again now: what is left to capture may have moved since the page.
 * Every other refusal keeps the domain's own message.
 */
const explainCapture = (orderId: string) => (refusal: Refusal) =>
  refusal.code !== "capture_amount_exceeds_remaining"
    ? Effect.succeed(undefined)
    : Effect.map(storyOf(orderId), Option.match({
      onNone: () => undefined,
      onSome: ({ order }) =>
        `The capture amount exceeds the uncaptured remainder (${money(order.amount - order.captured_amount, order.currency)}, less any capture still in flight).`
    }))

const capture: Resolve = (id, form) =>
  Effect.map(storyOf(id), Option.map(({ order }): Target => {
    const { decimal, invalid, shown } = confirmedAmount(form, order.currency, order.amount - order.captured_amount)
    const final = field(form, "final") === "true"
    return {
      accountId: order.account_id,
      back: orderPage(order.id),
      facts: [["Amount", shown], ...orderFacts(order), ["Final", final ? "yes: the authorization closes" : "no: more can be captured later"]],
      // The amount shown, not the one posted: a defaulted amount is confirmed as the figure the
      // page listed, and that figure is what runs (the domain refuses it if it no longer fits).
      fields: [["amount", decimal], ...(final ? [["final", "true"] as const] : [])],
      invalid,
      detail: `capture ${shown}${final ? " (final)" : ""}`,
      act: Effect.as(Payments.use((p) => p.operator.capture(order.id, decimal, final)), done(`Captured ${shown}.`)),
      explain: explainCapture(order.id)
    }
  }))

const voidIt: Resolve = (id) =>
  Effect.map(storyOf(id), Option.map(({ order }): Target => ({
    accountId: order.account_id,
    back: orderPage(order.id),
    facts: [["Amount released", money(order.amount - order.captured_amount, order.currency)], ...orderFacts(order)],
    fields: [],
    detail: `void ${money(order.amount - order.captured_amount, order.currency)}`,
    act: Effect.as(Payments.use((p) => p.operator.void(order.id)), done("Voided."))
  })))

const refund: Resolve = (id, form) =>
  Effect.map(storyOf(id), Option.map(({ order }): Target => {
    const { decimal, invalid, shown } = confirmedAmount(form, order.currency, order.captured_amount - order.refunded_amount)
    return {
      accountId: order.account_id,
      back: orderPage(order.id),
      facts: [["Amount", shown], ...orderFacts(order)],
      // Empty meant "the whole remainder": the confirmation carries the remainder it showed, so a
      // refund made meanwhile cannot turn the confirmed figure into a larger or smaller one.
      fields: [["amount", decimal]],
      invalid,
      detail: `refund ${shown}`,
      act: Effect.map(
        Outflows.use((o) => o.operator.refund(order.id, { amount: decimal })),
        (view): Done => ({ notice: `Refund ${view.id} created.`, made: view.id })
      )
    }
  }))

const redeliver: Resolve = (id) =>
  Effect.gen(function*() {
    const found = yield* (yield* ConsoleReads).locate(id)
    if (Option.isNone(found) || found.value.kind !== "event") return Option.none()
    const { account_id, order_id } = found.value
    return Option.some<Target>({
      accountId: account_id,
      back: order_id === null ? accountPage(account_id) : orderPage(order_id),
      facts: [["Event", id], ["Sent to", "every enabled endpoint of the account subscribed to its type"]],
      fields: [],
      detail: `redeliver ${id}`,
      act: Effect.as(Webhooks.use((w) => w.resendEvent(id, undefined)), done("Event redelivered."))
    })
  })

const disable: Resolve = (id) =>
  Effect.gen(function*() {
    const found = yield* (yield* WebhookEndpointRepo).findAny(id)
    if (Option.isNone(found)) return Option.none()
    const endpoint = found.value
    return Option.some<Target>({
      accountId: endpoint.account_id,
      back: accountPage(endpoint.account_id),
      facts: [["Endpoint", endpoint.id], ["URL", endpoint.url], ["Status now", endpoint.status]],
      fields: [],
      detail: `disable ${endpoint.url}`,
      act: Effect.gen(function*() {
        const account = yield* (yield* Accounts).get(endpoint.account_id)
        yield* (yield* Webhooks).updateEndpoint(account, endpoint.id, { status: "disabled" })
        return done("Endpoint disabled.")
      })
    })
  })

const accountStatus = (to: "suspend" | "activate"): Resolve => (id) =>
  Effect.gen(function*() {
    const found = yield* Effect.option((yield* Accounts).get(id))
    return Option.map(found, (account): Target => ({
      accountId: account.id,
      back: accountPage(account.id),
      facts: [["Account", `${account.name} (${account.id})`], ["Status now", account.status], [
        "Effect",
        to === "suspend" ? "the account's API writes are refused until it is activated" : "the account's API writes are accepted again"
      ]],
      fields: [],
      detail: `${to} ${account.id}`,
      act: Effect.as(
        Accounts.use((a) => to === "suspend" ? a.suspend(account.id) : a.activate(account.id)),
        done(to === "suspend" ? "Account suspended." : "Account activated.")
      )
    }))
  })

const confirmation = (viewer: Viewer, action: ConsoleAction, path: string, target: Target) =>
  pageResponse({
    title: TITLES[action],
    viewer,
    body: html`<h1>${TITLES[action]}</h1>
<ul class="confirm">${target.facts.map(([label, value]) => html`<li>${label}: ${value}</li>`)}</ul>
<form method="post" action="${path}">${csrfField(viewer.csrf)}${
      target.fields.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)
    }<input type="hidden" name="confirm" value="yes">
<button type="submit" class="${action === "capture" || action === "activate_account" || action === "redeliver_event" ? "primary" : "danger"}">Confirm</button>
<a class="button neutral" href="${target.back}">Cancel</a>
</form>`
  })

const perform = (auth: Auth, action: ConsoleAction, resolve: Resolve) =>
  auth.action((signed: SignedIn, form) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const operators = yield* Operators
      const id = yield* routeId
      // Not an id of any kind: no object, nothing to read (a NUL would fail in PostgreSQL) or audit.
      if (id === undefined) return mayAct(signed.operator.role, action) ? notFound(signed.viewer) : notAllowed(signed.viewer)
      const found = yield* resolve(id, form)
      const granted = Option.isSome(found) && isGranted(signed.operator.accounts, found.value.accountId)
      // A refused attempt is audited (review M4) under the object's account, so whoever is granted
      // that account reads who tried; the answers stay as before (403 for the role whether or not the
      // object exists, 404 for another account's object), so the log tells the operator nothing.
      const refused = (detail: string) =>
        operators.record({
          operator: signed.operator,
          action,
          target: id,
          account_id: Option.isSome(found) ? found.value.accountId : null,
          outcome: "failed",
          detail
        })
      if (!mayAct(signed.operator.role, action)) {
        yield* refused(`refused: the ${signed.operator.role} role may not ${action}`)
        return notAllowed(signed.viewer)
      }
      if (Option.isNone(found)) return notFound(signed.viewer)
      if (!granted) {
        yield* refused("refused: the account is not granted")
        return notFound(signed.viewer)
      }
      const target = found.value
      if (target.invalid !== undefined) return auth.redirectWith(request, signed, target.back, { kind: "alert", text: target.invalid })
      if (field(form, "confirm") !== "yes") return confirmation(signed.viewer, action, new URL(request.url, "http://console").pathname, target)
      const outcome = yield* Effect.result(target.act)
      if (outcome._tag === "Success") {
        const { made, notice } = outcome.success
        yield* operators.record({
          operator: signed.operator,
          action,
          target: id,
          account_id: target.accountId,
          outcome: "succeeded",
          detail: made === undefined ? target.detail : `${target.detail}: ${made}`
        })
        return auth.redirectWith(request, signed, target.back, { kind: "status", text: notice })
      }
      const refusal = outcome.failure
      const text = (target.explain === undefined ? undefined : yield* target.explain(refusal)) ?? refusal.message
      yield* operators.record({
        operator: signed.operator,
        action,
        target: id,
        account_id: target.accountId,
        outcome: "failed",
        detail: `${target.detail}: ${refusal.code}: ${text}`
      })
      return auth.redirectWith(request, signed, target.back, { kind: "alert", text })
    })
  )

/** The action routes: path → action and how its target resolves. */
export const ACTION_ROUTES: ReadonlyArray<{ readonly path: string; readonly action: ConsoleAction; readonly resolve: Resolve }> = [
  { path: "/console/orders/:id/capture", action: "capture", resolve: capture },
  { path: "/console/orders/:id/void", action: "void", resolve: voidIt },
  { path: "/console/orders/:id/refund", action: "refund", resolve: refund },
  { path: "/console/events/:id/redeliver", action: "redeliver_event", resolve: redeliver },
  { path: "/console/webhook_endpoints/:id/disable", action: "disable_webhook_endpoint", resolve: disable },
  { path: "/console/accounts/:id/suspend", action: "suspend_account", resolve: accountStatus("suspend") },
  { path: "/console/accounts/:id/activate", action: "activate_account", resolve: accountStatus("activate") }
]

export const handlers = (auth: Auth) => ACTION_ROUTES.map((route) => ({ path: route.path, handler: perform(auth, route.action, route.resolve) }))
