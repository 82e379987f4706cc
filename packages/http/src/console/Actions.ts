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
import { HttpRouter, HttpServerRequest } from "effect/http"
import { Accounts, ConsoleReads, Money, Outflows, Payments, type PaymentStory, WebhookEndpointRepo, Webhooks } from "@tender/domain"
import { type ConsoleAction, isGranted, mayAct } from "@tender/domain/operators/Operator"
import { Operators } from "@tender/domain/operators/Operators"
import { html, money } from "../hosted/Html.ts"
import { type Auth, field, type Form, type SignedIn } from "./Auth.ts"
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
  /** Runs the action; succeeds with the notice to show. */
  readonly act: Effect.Effect<string, Refusal, ActionServices>
}

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

const orderFacts = (order: PaymentStory["order"]) => [
  ["Order amount", money(order.amount, order.currency)],
  ["Already captured", money(order.captured_amount, order.currency)],
  ["Already refunded", money(order.refunded_amount, order.currency)]
] as const

const storyOf = (id: string) => ConsoleReads.use((reads) => reads.story(id))

const capture: Resolve = (id, form) =>
  Effect.map(storyOf(id), Option.map(({ order }): Target => {
    const amount = amountField(form, order.currency)
    const final = field(form, "final") === "true"
    const minor = "minor" in amount ? amount.minor ?? order.amount - order.captured_amount : 0
    const shown = money(minor, order.currency)
    return {
      accountId: order.account_id,
      back: orderPage(order.id),
      facts: [["Amount", shown], ...orderFacts(order), ["Final", final ? "yes: the authorization closes" : "no: more can be captured later"]],
      fields: [["amount", field(form, "amount") ?? ""], ...(final ? [["final", "true"] as const] : [])],
      invalid: "invalid" in amount ? amount.invalid : undefined,
      detail: `capture ${shown}${final ? " (final)" : ""}`,
      act: Effect.as(
        Payments.use((p) => p.operator.capture(order.id, Money.toDecimalString(minor, order.currency), final)),
        `Captured ${shown}.`
      )
    }
  }))

const voidIt: Resolve = (id) =>
  Effect.map(storyOf(id), Option.map(({ order }): Target => ({
    accountId: order.account_id,
    back: orderPage(order.id),
    facts: [["Amount released", money(order.amount - order.captured_amount, order.currency)], ...orderFacts(order)],
    fields: [],
    detail: `void ${money(order.amount - order.captured_amount, order.currency)}`,
    act: Effect.as(Payments.use((p) => p.operator.void(order.id)), "Voided.")
  })))

const refund: Resolve = (id, form) =>
  Effect.map(storyOf(id), Option.map(({ order }): Target => {
    const amount = amountField(form, order.currency)
    const minor = "minor" in amount ? amount.minor ?? order.captured_amount - order.refunded_amount : 0
    const shown = money(minor, order.currency)
    return {
      accountId: order.account_id,
      back: orderPage(order.id),
      facts: [["Amount", shown], ...orderFacts(order)],
      fields: [["amount", field(form, "amount") ?? ""]],
      invalid: "invalid" in amount ? amount.invalid : undefined,
      detail: `refund ${shown}`,
      act: Effect.map(
        Outflows.use((o) => o.operator.refund(order.id, { amount: Money.toDecimalString(minor, order.currency) })),
        (view) => `Refund ${view.id} created.`
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
      act: Effect.as(Webhooks.use((w) => w.resendEvent(id, undefined)), "Event redelivered.")
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
        return "Endpoint disabled."
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
        to === "suspend" ? "Account suspended." : "Account activated."
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
      if (!mayAct(signed.operator.role, action)) return notAllowed(signed.viewer)
      const id = (yield* HttpRouter.params).id ?? ""
      const found = id.length === 0 || id.length > 128 ? Option.none<Target>() : yield* resolve(id, form)
      if (Option.isNone(found) || !isGranted(signed.operator.accounts, found.value.accountId)) return notFound(signed.viewer)
      const target = found.value
      if (target.invalid !== undefined) return auth.redirectWith(request, signed, target.back, { kind: "alert", text: target.invalid })
      if (field(form, "confirm") !== "yes") return confirmation(signed.viewer, action, new URL(request.url, "http://console").pathname, target)
      const outcome = yield* Effect.result(target.act)
      const succeeded = outcome._tag === "Success"
      yield* (yield* Operators).record({
        operator: signed.operator,
        action,
        target: id,
        account_id: target.accountId,
        outcome: succeeded ? "succeeded" : "failed",
        detail: succeeded ? target.detail : `${target.detail}: ${outcome.failure.code}: ${outcome.failure.message}`
      })
      return auth.redirectWith(request, signed, target.back, succeeded ? { kind: "status", text: outcome.success } : { kind: "alert", text: outcome.failure.message })
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
