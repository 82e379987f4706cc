/**
 * A wire-level fake of the Stripe API (PaymentIntents, Refunds, PaymentIntent search), a real HTTP
 * server on 127.0.0.1 that the official `stripe` SDK talks to unchanged (its host/port/protocol
 * options). It follows Stripe's published API reference where our adapter depends on it: form
 * encoding with bracket keys, object shapes, status codes and `{error: {type, code, decline_code,
 * message, param}}` bodies, the Idempotency-Key layer (a saved result is replayed, another endpoint
 * or other parameters under the same key answer 400 `idempotency_error`; calls run one at a time,
 * so Stripe's 409 for a key still executing never arises), Stripe's test card numbers, a 3-D
 * Secure challenge page, and signed webhooks.
 *
 * State lives in memory. Faults make the ambiguous cases reproducible: per call kind, `timeout`
 * (apply, never answer), `5xx` (answer 500 without applying, saved under the key as Stripe saves
 * 500s) and `applyThenDrop` (apply, then destroy the socket; a replay under the same key is
 * dropped the same way); `refuse()` stops listening, so connections are refused, until `accept()`.
 * The switch, the listener and these controls are every fake's (../fake/FakeServer.ts).
 *
 * Raw card numbers reach it (payment_method_data[card][number]); it keeps only brand, last4,
 * country and expiry, as Stripe's PaymentMethod objects show them, what the number's test card
 * does, and a digest of each idempotent request's parameters.
 */
import { Card as CardRules } from "@tender/domain"
import { createHash, randomBytes } from "node:crypto"
import * as http from "node:http"
import { answerUnless, controls, type Fault, faultSwitch, outbox, readBody, serveLocal } from "../fake/FakeServer.ts"
import { canonical, decode, type FormObject, type FormValue } from "./StripeForm.ts"
import { signatureHeader } from "./StripeSignature.ts"

export type CallKind = "create" | "update" | "capture" | "cancel" | "retrieve" | "search" | "refund" | "refund_retrieve" | "refund_list"
export type { Fault }

type CardOutcome =
  | { readonly _tag: "Approve"; readonly refund: "succeeded" | "pending" }
  | { readonly _tag: "Decline"; readonly code: string; readonly decline_code: string | undefined; readonly message: string }
  | { readonly _tag: "Challenge" }

interface TestCard {
  readonly country: string
  readonly outcome: CardOutcome
}

const approve: CardOutcome = { _tag: "Approve", refund: "succeeded" }
const declined = (decline_code: string, message: string): CardOutcome => ({ _tag: "Decline", code: "card_declined", decline_code, message })

/** Stripe's test cards (docs.stripe.com/testing) the fake knows; any other Luhn-valid number approves as a US card. */
export const TEST_CARDS: Readonly<Record<string, TestCard>> = {
  "4242424242424242": { country: "US", outcome: approve },
  "4000056655665556": { country: "US", outcome: approve },
  "5555555555554444": { country: "US", outcome: approve },
  "4000000760000002": { country: "BR", outcome: approve },
  "4000001240000000": { country: "CA", outcome: approve },
  "4000000000007726": { country: "US", outcome: { _tag: "Approve", refund: "pending" } },
  "4000000000000002": { country: "US", outcome: declined("generic_decline", "Your card was declined.") },
  "4000000000009995": { country: "US", outcome: declined("insufficient_funds", "Your card has insufficient funds.") },
  "4000000000009987": { country: "US", outcome: declined("lost_card", "Your card was declined.") },
  "4000000000009979": { country: "US", outcome: declined("stolen_card", "Your card was declined.") },
  "4000000000000069": { country: "US", outcome: { _tag: "Decline", code: "expired_card", decline_code: "expired_card", message: "Your card has expired." } },
  "4000000000000127": { country: "US", outcome: { _tag: "Decline", code: "incorrect_cvc", decline_code: "incorrect_cvc", message: "Your card's security code is incorrect." } },
  "4000000000000119": { country: "US", outcome: { _tag: "Decline", code: "processing_error", decline_code: "processing_error", message: "An error occurred while processing your card. Try again in a little bit." } },
  "4000000000003220": { country: "US", outcome: { _tag: "Challenge" } }
}

const STORED_CREDENTIAL_USAGES = ["installment", "recurring", "unscheduled"]

interface Card { readonly brand: string; readonly last4: string; readonly country: string; readonly exp_month: number; readonly exp_year: number; readonly funding: string }

/** What confirming with the card does, decided from its number once, so the number itself is not kept. */
type Confirmation = CardOutcome | { readonly _tag: "IncorrectNumber" }

interface Intent {
  readonly id: string
  readonly created: number
  readonly amount: number
  readonly currency: string
  readonly capture_method: string
  readonly client_secret: string
  readonly return_url: string | null
  readonly multicapture_requested: boolean
  /** `off_session` as given (a merchant-initiated charge), and its `stored_credential_usage`. */
  readonly off_session: boolean
  readonly stored_credential_usage: string | null
  /** How the card confirms (null without a card). */
  confirmation: Confirmation | null
  status: string
  amount_capturable: number
  amount_received: number
  metadata: Record<string, string>
  description: string | null
  card: Card | null
  payment_method: string | null
  latest_charge: string | null
  last_payment_error: Record<string, unknown> | null
  next_action: Record<string, unknown> | null
  canceled_at: number | null
  cancellation_reason: string | null
}

interface Charge {
  readonly id: string
  readonly created: number
  readonly payment_intent: string
  readonly amount: number
  readonly currency: string
  readonly card: Card
  readonly multicapture: boolean
  /** Stripe's 4000000000007726: refunds stay pending. */
  readonly refunds: "succeeded" | "pending"
  status: "succeeded" | "failed"
  captured: boolean
  amount_captured: number
  amount_refunded: number
  failure_code: string | null
  failure_message: string | null
  outcome: Record<string, unknown>
}

interface Refund {
  readonly id: string
  readonly created: number
  readonly amount: number
  readonly currency: string
  readonly payment_intent: string
  readonly charge: string
  readonly metadata: Record<string, string>
  readonly reason: string | null
  status: "succeeded" | "pending"
}

/** A saved idempotent result; the parameters only as a digest (they may hold a card number). */
interface Saved { readonly endpoint: string; readonly params: string; readonly response: Reply }

const digestOf = (params: FormObject) => createHash("sha256").update(canonical(params)).digest("hex")
interface Reply { readonly status: number; readonly body: unknown }

export interface StripeFakeOptions {
  /** The secret key the fake accepts (Bearer); default any `sk_test_…` key. */
  readonly apiKey?: string | undefined
  /** Where signed events are POSTed, and the endpoint's signing secret. */
  readonly webhook?: { readonly url: string; readonly secret: string } | undefined
}

export interface StripeFakeEvent { readonly id: string; readonly type: string; readonly payload: string }

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`
const nowSeconds = () => Math.floor(Date.now() / 1000)

class StripeHttpError {
  readonly status: number
  readonly error: Record<string, unknown>
  /** Whether the idempotency layer saves it (the endpoint began executing) or not (validation). */
  readonly saved: boolean
  constructor(status: number, error: Record<string, unknown>, saved: boolean) {
    this.status = status
    this.error = error
    this.saved = saved
  }
}
const invalid = (message: string, extra: Record<string, unknown> = {}, saved = true) =>
  new StripeHttpError(400, { type: "invalid_request_error", message, ...extra }, saved)
const missing = (param: string, saved = false) => invalid(`Missing required param: ${param}.`, { code: "parameter_missing", param }, saved)
const notFound = (kind: string, value: string, param: string) =>
  new StripeHttpError(404, { type: "invalid_request_error", code: "resource_missing", param, message: `No such ${kind}: '${value}'` }, true)

const str = (value: FormValue | undefined): string | undefined => (typeof value === "string" ? value : undefined)
const obj = (value: FormValue | undefined): FormObject | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as FormObject : undefined
const positiveInt = (value: FormValue | undefined, param: string): number | undefined => {
  const text = str(value)
  if (text === undefined) return undefined
  if (!/^\d+$/.test(text) || Number(text) <= 0) throw invalid(`Invalid positive integer`, { code: "parameter_invalid_integer", param }, false)
  return Number(text)
}

/** Merges metadata as Stripe does: an empty value unsets the key. */
const mergeMetadata = (current: Record<string, string>, update: FormObject | undefined) => {
  const next = { ...current }
  for (const [key, value] of Object.entries(update ?? {})) {
    if (typeof value !== "string") throw invalid("Invalid metadata", { param: `metadata[${key}]` }, false)
    if (value === "") delete next[key]
    else next[key] = value
  }
  if (Object.keys(next).length > 50) throw invalid("Metadata can have at most 50 keys.", { param: "metadata" }, false)
  return next
}

export const start = async (options: StripeFakeOptions = {}) => {
  const intents = new Map<string, Intent>()
  const charges = new Map<string, Charge>()
  const refunds = new Map<string, Refund>()
  const idempotency = new Map<string, Saved>()
  const faults = faultSwitch<CallKind>()
  const events: Array<StripeFakeEvent> = []
  const sent = outbox()
  let base = ""

  // ---- object views (what the API returns) ----

  const paymentMethodDetails = (card: Card, multicapture: boolean) => ({
    type: "card",
    card: {
      brand: card.brand,
      country: card.country,
      exp_month: card.exp_month,
      exp_year: card.exp_year,
      funding: card.funding,
      last4: card.last4,
      multicapture: { status: multicapture ? "available" : "unavailable" },
      network: card.brand
    }
  })

  const chargeView = (charge: Charge) => ({
    id: charge.id,
    object: "charge",
    amount: charge.amount,
    amount_captured: charge.amount_captured,
    amount_refunded: charge.amount_refunded,
    captured: charge.captured,
    created: charge.created,
    currency: charge.currency,
    failure_code: charge.failure_code,
    failure_message: charge.failure_message,
    livemode: false,
    outcome: charge.outcome,
    paid: charge.status === "succeeded",
    payment_intent: charge.payment_intent,
    payment_method_details: paymentMethodDetails(charge.card, charge.multicapture),
    refunded: charge.amount_refunded > 0 && charge.amount_refunded >= charge.amount_captured,
    status: charge.status
  })

  const paymentMethodView = (intent: Intent) =>
    intent.card === null ? null : {
      id: intent.payment_method,
      object: "payment_method",
      type: "card",
      card: paymentMethodDetails(intent.card, false).card
    }

  const intentView = (intent: Intent, expand: ReadonlyArray<string> = []) => ({
    id: intent.id,
    object: "payment_intent",
    amount: intent.amount,
    amount_capturable: intent.amount_capturable,
    amount_received: intent.amount_received,
    canceled_at: intent.canceled_at,
    cancellation_reason: intent.cancellation_reason,
    capture_method: intent.capture_method,
    client_secret: intent.client_secret,
    confirmation_method: "automatic",
    created: intent.created,
    currency: intent.currency,
    description: intent.description,
    last_payment_error: intent.last_payment_error,
    latest_charge: intent.latest_charge !== null && expand.includes("latest_charge")
      ? chargeView(charges.get(intent.latest_charge)!)
      : intent.latest_charge,
    livemode: false,
    metadata: intent.metadata,
    next_action: intent.next_action,
    payment_method: intent.payment_method,
    payment_method_options: {
      card: {
        request_multicapture: intent.multicapture_requested ? "if_available" : "never",
        ...(intent.stored_credential_usage === null ? {} : { stored_credential_usage: intent.stored_credential_usage })
      }
    },
    // Not part of Stripe's PaymentIntent object (it is a confirm parameter): kept so tests can see what arrived.
    off_session: intent.off_session,
    payment_method_types: ["card"],
    status: intent.status
  })

  const refundView = (refund: Refund) => ({
    id: refund.id,
    object: "refund",
    amount: refund.amount,
    charge: refund.charge,
    created: refund.created,
    currency: refund.currency,
    metadata: refund.metadata,
    payment_intent: refund.payment_intent,
    reason: refund.reason,
    status: refund.status
  })

  // ---- webhooks ----

  const emit = (type: string, object: unknown) => {
    const event = { id: id("evt"), object: "event", api_version: "2026-10-28.endive", created: nowSeconds(), data: { object }, livemode: false, pending_webhooks: 1, type }
    const payload = JSON.stringify(event, null, 2)
    events.push({ id: event.id, type, payload })
    const webhook = options.webhook
    if (webhook === undefined) return
    sent.post(webhook.url, { "stripe-signature": signatureHeader(payload, webhook.secret, nowSeconds()) }, payload)
  }

  // ---- operations ----

  const intentOf = (value: string, param: string) => {
    const intent = intents.get(value)
    if (intent === undefined) throw notFound("payment_intent", value, param)
    return intent
  }

  const cardOf = (data: FormObject): { readonly card: Card; readonly confirmation: Confirmation } => {
    const card = obj(data["card"])
    const number = str(card?.["number"])?.replace(/\s+/g, "")
    if (number === undefined) throw missing("payment_method_data[card][number]")
    const exp_month = positiveInt(card?.["exp_month"], "payment_method_data[card][exp_month]")
    const exp_year = positiveInt(card?.["exp_year"], "payment_method_data[card][exp_year]")
    if (exp_month === undefined) throw missing("payment_method_data[card][exp_month]")
    if (exp_year === undefined) throw missing("payment_method_data[card][exp_year]")
    const brand = CardRules.detectBrand(number)
    return {
      card: { brand, last4: CardRules.last4Of(number), country: TEST_CARDS[number]?.country ?? "US", exp_month, exp_year, funding: CardRules.fundingOf(number) },
      confirmation: CardRules.luhnValid(number) ? TEST_CARDS[number]?.outcome ?? approve : { _tag: "IncorrectNumber" }
    }
  }

  /** Charges the intent's card; moves the intent to its next status. */
  const chargeCard = (intent: Intent, outcome: CardOutcome): StripeHttpError | undefined => {
    const card = intent.card!
    if (outcome._tag === "Challenge") {
      intent.status = "requires_action"
      intent.next_action = intent.return_url === null
        ? { type: "use_stripe_sdk", use_stripe_sdk: { type: "three_d_secure_redirect", stripe_js: `${base}/3ds/${intent.id}` } }
        : { type: "redirect_to_url", redirect_to_url: { url: `${base}/3ds/${intent.id}?client_secret=${intent.client_secret}`, return_url: intent.return_url } }
      return undefined
    }
    const charge: Charge = {
      id: id("ch"),
      created: nowSeconds(),
      payment_intent: intent.id,
      amount: intent.amount,
      currency: intent.currency,
      card,
      multicapture: intent.multicapture_requested && intent.capture_method === "manual",
      refunds: outcome._tag === "Approve" ? outcome.refund : "succeeded",
      status: outcome._tag === "Approve" ? "succeeded" : "failed",
      captured: false,
      amount_captured: 0,
      amount_refunded: 0,
      failure_code: outcome._tag === "Decline" ? outcome.code : null,
      failure_message: outcome._tag === "Decline" ? outcome.message : null,
      outcome: outcome._tag === "Approve"
        ? { network_status: "approved_by_network", type: "authorized", reason: null, seller_message: "Payment complete." }
        : { network_status: "declined_by_network", type: "issuer_declined", reason: outcome.decline_code ?? null, seller_message: "The bank did not return any further details with this decline." }
    }
    charges.set(charge.id, charge)
    intent.latest_charge = charge.id
    intent.next_action = null
    if (outcome._tag === "Decline") {
      intent.status = "requires_payment_method"
      const error = {
        type: "card_error",
        code: outcome.code,
        ...(outcome.decline_code === undefined ? {} : { decline_code: outcome.decline_code }),
        message: outcome.message,
        charge: charge.id,
        doc_url: `https://stripe.com/docs/error-codes/${outcome.code.replace(/_/g, "-")}`,
        payment_method: paymentMethodView(intent)
      }
      intent.last_payment_error = error
      emit("payment_intent.payment_failed", intentView(intent))
      return new StripeHttpError(402, { ...error, payment_intent: intentView(intent) }, true)
    }
    intent.last_payment_error = null
    if (intent.capture_method === "manual") {
      intent.status = "requires_capture"
      intent.amount_capturable = intent.amount
      emit("payment_intent.amount_capturable_updated", intentView(intent))
    } else {
      intent.status = "succeeded"
      intent.amount_received = intent.amount
      charge.captured = true
      charge.amount_captured = intent.amount
      emit("payment_intent.succeeded", intentView(intent))
    }
    return undefined
  }

  const create = (params: FormObject): Reply => {
    const amount = positiveInt(params["amount"], "amount")
    if (amount === undefined) throw missing("amount")
    const currency = str(params["currency"])
    if (currency === undefined) throw missing("currency")
    if (!/^[a-z]{3}$/.test(currency)) throw invalid(`Invalid currency: ${currency}.`, { param: "currency" }, false)
    const capture_method = str(params["capture_method"]) ?? "automatic_async"
    if (!["automatic", "automatic_async", "manual"].includes(capture_method)) throw invalid("Invalid capture_method", { param: "capture_method" }, false)
    const confirm = str(params["confirm"]) === "true"
    const data = obj(params["payment_method_data"])
    if (confirm && data === undefined) throw missing("payment_method_data")
    if (data !== undefined && str(data["type"]) !== "card") throw invalid("The fake supports payment_method_data[type]=card only.", { param: "payment_method_data[type]" }, false)
    const given = data === undefined ? null : cardOf(data)
    const card = given?.card ?? null
    const cardOptions = obj(obj(params["payment_method_options"])?.["card"])
    const multicapture = str(cardOptions?.["request_multicapture"])
    // Stripe's values for the type of an off-session payment (docs.stripe.com/api/payment_intents/create).
    const usage = str(cardOptions?.["stored_credential_usage"])
    if (usage !== undefined && !STORED_CREDENTIAL_USAGES.includes(usage)) {
      throw invalid(
        `Invalid payment_method_options[card][stored_credential_usage]: must be one of ${STORED_CREDENTIAL_USAGES.join(", ")}`,
        { param: "payment_method_options[card][stored_credential_usage]" },
        false
      )
    }
    const offSession = str(params["off_session"])
    if (offSession !== undefined && !["true", "false", "one_off", "recurring"].includes(offSession)) {
      throw invalid("Invalid off_session: must be a boolean", { param: "off_session" }, false)
    }
    const intent: Intent = {
      id: id("pi"),
      created: nowSeconds(),
      amount,
      currency,
      capture_method,
      client_secret: "",
      return_url: str(params["return_url"]) ?? null,
      multicapture_requested: multicapture === "if_available",
      off_session: offSession !== undefined && offSession !== "false",
      stored_credential_usage: usage ?? null,
      confirmation: given?.confirmation ?? null,
      status: card === null ? "requires_payment_method" : "requires_confirmation",
      amount_capturable: 0,
      amount_received: 0,
      metadata: mergeMetadata({}, obj(params["metadata"])),
      description: str(params["description"]) ?? null,
      card,
      payment_method: card === null ? null : id("pm"),
      latest_charge: null,
      last_payment_error: null,
      next_action: null,
      canceled_at: null,
      cancellation_reason: null
    }
    ;(intent as { client_secret: string }).client_secret = `${intent.id}_secret_${randomBytes(12).toString("hex")}`
    intents.set(intent.id, intent)
    if (confirm && intent.confirmation !== null) {
      if (intent.confirmation._tag === "IncorrectNumber") {
        intent.status = "requires_payment_method"
        const error = { type: "card_error", code: "incorrect_number", message: "Your card number is incorrect.", param: "number" }
        intent.last_payment_error = error
        intent.card = null
        throw new StripeHttpError(402, { ...error, payment_intent: intentView(intent) }, true)
      }
      const failure = chargeCard(intent, intent.confirmation)
      if (failure !== undefined) throw failure
    }
    return { status: 200, body: intentView(intent, expandOf(params)) }
  }

  const update = (intent: Intent, params: FormObject): Reply => {
    intent.metadata = mergeMetadata(intent.metadata, obj(params["metadata"]))
    const description = str(params["description"])
    if (description !== undefined) intent.description = description
    return { status: 200, body: intentView(intent, expandOf(params)) }
  }

  const unexpectedState = (intent: Intent, action: string, allowed: ReadonlyArray<string>) =>
    invalid(
      `This PaymentIntent could not be ${action} because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be ${action}: ${allowed.join(", ")}.`,
      { code: "payment_intent_unexpected_state", payment_intent: intentView(intent) }
    )

  const capture = (intent: Intent, params: FormObject): Reply => {
    if (intent.status !== "requires_capture") throw unexpectedState(intent, "captured", ["requires_capture"])
    const charge = charges.get(intent.latest_charge!)!
    const amount = positiveInt(params["amount_to_capture"], "amount_to_capture") ?? intent.amount_capturable
    const final = str(params["final_capture"]) !== "false"
    if (!final && !charge.multicapture) {
      throw invalid("final_capture can only be false when multicapture is available for this PaymentIntent.", { param: "final_capture" })
    }
    if (amount > intent.amount_capturable) {
      throw invalid(`The amount to capture (${amount}) is greater than the amount capturable (${intent.amount_capturable}).`, { code: "amount_too_large", param: "amount_to_capture" })
    }
    intent.metadata = mergeMetadata(intent.metadata, obj(params["metadata"]))
    intent.amount_received += amount
    charge.amount_captured += amount
    charge.captured = true
    if (final) {
      intent.amount_capturable = 0
      intent.status = "succeeded"
      emit("payment_intent.succeeded", intentView(intent))
    } else {
      intent.amount_capturable -= amount
      emit("payment_intent.amount_capturable_updated", intentView(intent))
    }
    return { status: 200, body: intentView(intent, expandOf(params)) }
  }

  const CANCELABLE = ["requires_payment_method", "requires_capture", "requires_confirmation", "requires_action", "processing"]
  const cancel = (intent: Intent, params: FormObject): Reply => {
    if (!CANCELABLE.includes(intent.status)) throw unexpectedState(intent, "canceled", CANCELABLE)
    intent.status = "canceled"
    intent.amount_capturable = 0
    intent.next_action = null
    intent.canceled_at = nowSeconds()
    intent.cancellation_reason = str(params["cancellation_reason"]) ?? null
    emit("payment_intent.canceled", intentView(intent))
    return { status: 200, body: intentView(intent, expandOf(params)) }
  }

  const refund = (params: FormObject): Reply => {
    const target = str(params["payment_intent"])
    if (target === undefined) throw missing("payment_intent")
    const intent = intentOf(target, "payment_intent")
    const charge = intent.latest_charge === null ? undefined : charges.get(intent.latest_charge)
    if (charge === undefined || intent.amount_received === 0) {
      throw invalid(`This PaymentIntent (${intent.id}) does not have a successful charge to refund.`, { code: "charge_not_refundable", param: "payment_intent" })
    }
    const refundable = intent.amount_received - charge.amount_refunded
    if (refundable === 0) throw invalid(`Charge ${charge.id} has already been refunded.`, { code: "charge_already_refunded" })
    const amount = positiveInt(params["amount"], "amount") ?? refundable
    if (amount > refundable) {
      throw invalid(`Refund amount (${amount}) is greater than unrefunded amount on charge (${refundable})`, { code: "amount_too_large", param: "amount" })
    }
    const created: Refund = {
      id: id("re"),
      created: nowSeconds(),
      amount,
      currency: intent.currency,
      payment_intent: intent.id,
      charge: charge.id,
      metadata: mergeMetadata({}, obj(params["metadata"])),
      reason: str(params["reason"]) ?? null,
      status: charge.refunds
    }
    refunds.set(created.id, created)
    charge.amount_refunded += amount
    emit("refund.created", refundView(created))
    emit("charge.refunded", chargeView(charge))
    return { status: 200, body: refundView(created) }
  }

  const search = (query: string | undefined): Reply => {
    if (query === undefined) throw missing("query")
    const clauses = query.split(/\s+OR\s+/)
    const tests = clauses.map((clause) => {
      const metadata = /^metadata\[(['"])(.+?)\1\]:(['"])(.*)\3$/.exec(clause.trim())
      if (metadata !== null) return (intent: Intent) => intent.metadata[metadata[2]!] === metadata[4]
      const status = /^status:(['"])(.*)\1$/.exec(clause.trim())
      if (status !== null) return (intent: Intent) => intent.status === status[2]
      throw invalid(`The fake's search supports metadata['key']:'value' and status:'value' clauses joined by OR, not: ${clause}`, { param: "query" }, false)
    })
    const data = [...intents.values()].filter((intent) => tests.some((test) => test(intent))).reverse().map((intent) => intentView(intent))
    return { status: 200, body: { object: "search_result", data, has_more: false, next_page: null, url: "/v1/payment_intents/search" } }
  }

  const expandOf = (params: FormObject): ReadonlyArray<string> => {
    const expand = params["expand"]
    return Array.isArray(expand) ? expand.filter((x): x is string => typeof x === "string") : []
  }

  // ---- the 3-D Secure challenge page (stands in for the issuer's ACS) ----

  const challengePage = (intent: Intent) =>
    `<!doctype html><html><head><title>3-D Secure test payment</title></head><body>` +
    `<h1>3-D Secure 2 test page</h1><p>Amount: ${intent.amount} ${intent.currency.toUpperCase()}</p>` +
    `<form method="post" action="/3ds/${intent.id}"><input type="hidden" name="answer" value="approve"><button>Complete authentication</button></form>` +
    `<form method="post" action="/3ds/${intent.id}"><input type="hidden" name="answer" value="deny"><button>Fail authentication</button></form>` +
    `</body></html>`

  const answerChallenge = (intent: Intent, answer: string | undefined): string | undefined => {
    if (intent.status !== "requires_action") return undefined
    if (answer === "approve") {
      chargeCard(intent, approve)
    } else {
      intent.status = "requires_payment_method"
      intent.next_action = null
      intent.last_payment_error = {
        type: "invalid_request_error",
        code: "payment_intent_authentication_failure",
        message: "The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.",
        payment_method: paymentMethodView(intent)
      }
      emit("payment_intent.payment_failed", intentView(intent))
    }
    const target = new URL(intent.return_url ?? `${base}/3ds/done`)
    target.searchParams.set("payment_intent", intent.id)
    target.searchParams.set("payment_intent_client_secret", intent.client_secret)
    target.searchParams.set("redirect_status", answer === "approve" ? "succeeded" : "failed")
    return target.toString()
  }

  // ---- HTTP ----

  const route = (method: string, path: string, url: URL): { kind: CallKind; run: (params: FormObject) => Reply } | undefined => {
    const parts = path.split("/").filter((p) => p !== "")
    if (parts[0] !== "v1") return undefined
    if (parts[1] === "payment_intents") {
      if (method === "POST" && parts.length === 2) return { kind: "create", run: create }
      if (method === "GET" && parts[2] === "search" && parts.length === 3) return { kind: "search", run: () => search(url.searchParams.get("query") ?? undefined) }
      const intentId = parts[2]
      if (intentId === undefined) return undefined
      if (method === "GET" && parts.length === 3) return { kind: "retrieve", run: (params) => ({ status: 200, body: intentView(intentOf(intentId, "intent"), expandOf(params)) }) }
      if (method === "POST" && parts.length === 3) return { kind: "update", run: (params) => update(intentOf(intentId, "intent"), params) }
      if (method === "POST" && parts[3] === "capture" && parts.length === 4) return { kind: "capture", run: (params) => capture(intentOf(intentId, "intent"), params) }
      if (method === "POST" && parts[3] === "cancel" && parts.length === 4) return { kind: "cancel", run: (params) => cancel(intentOf(intentId, "intent"), params) }
    }
    if (parts[1] === "refunds") {
      if (method === "POST" && parts.length === 2) return { kind: "refund", run: refund }
      if (method === "GET" && parts.length === 2) {
        return {
          kind: "refund_list",
          run: () => {
            const pi = url.searchParams.get("payment_intent")
            const data = [...refunds.values()].filter((r) => pi === null || r.payment_intent === pi).reverse().map(refundView)
            return { status: 200, body: { object: "list", data, has_more: false, url: "/v1/refunds" } }
          }
        }
      }
      const refundId = parts[2]
      if (method === "GET" && refundId !== undefined && parts.length === 3) {
        return {
          kind: "refund_retrieve",
          run: () => {
            const found = refunds.get(refundId)
            if (found === undefined) throw notFound("refund", refundId, "id")
            return { status: 200, body: refundView(found) }
          }
        }
      }
    }
    return undefined
  }

  const send = (res: http.ServerResponse, reply: Reply, headers: Record<string, string> = {}) => {
    res.writeHead(reply.status, { "content-type": "application/json", "request-id": id("req"), ...headers })
    res.end(JSON.stringify(reply.body))
  }

  const authorized = (req: http.IncomingMessage) => {
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
    return key !== undefined && (options.apiKey === undefined ? key.startsWith("sk_test_") : key === options.apiKey)
  }

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? "/", base)
    const method = req.method ?? "GET"
    const body = await readBody(req)
    const challenge = /^\/3ds\/(pi_[0-9a-f]+)$/.exec(url.pathname)
    if (challenge !== null) {
      const intent = intents.get(challenge[1]!)
      if (intent === undefined) return void res.writeHead(404).end("No such payment")
      if (method === "GET") return void res.writeHead(200, { "content-type": "text/html" }).end(challengePage(intent))
      const location = answerChallenge(intent, new URLSearchParams(body).get("answer") ?? undefined)
      if (location === undefined) return void res.writeHead(409).end("This payment needs no authentication")
      return void res.writeHead(303, { location }).end()
    }
    if (!authorized(req)) {
      return send(res, { status: 401, body: { error: { type: "invalid_request_error", message: "Invalid API Key provided." } } })
    }
    const target = route(method, url.pathname, url)
    if (target === undefined) {
      return send(res, { status: 404, body: { error: { type: "invalid_request_error", message: `Unrecognized request URL (${method}: ${url.pathname}).` } } })
    }
    const params = method === "GET" ? decode(url.search.slice(1)) : decode(body)
    // Stripe's idempotency layer covers POST requests; GETs are idempotent by definition.
    const key = method === "POST" ? req.headers["idempotency-key"] as string | undefined : undefined
    const endpoint = `${method} ${url.pathname}`
    // A fault is what happens to this request on the wire, a replay included.
    const fault = faults.take(target.kind)
    const answer = (reply: Reply, headers: Record<string, string> = {}) => answerUnless(fault, req, () => send(res, reply, headers))
    const saved = key === undefined ? undefined : idempotency.get(key)
    if (key !== undefined && saved !== undefined) {
      if (saved.endpoint !== endpoint) {
        return send(res, { status: 400, body: { error: { type: "idempotency_error", message: `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${saved.endpoint.split(" ")[1]}' vs '${url.pathname}'). Try using a key other than '${key}' if you meant to execute a different request.` } } })
      }
      if (saved.params !== digestOf(params)) {
        return send(res, { status: 400, body: { error: { type: "idempotency_error", message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.` } } })
      }
      return answer(saved.response, { "idempotent-replayed": "true" })
    }
    const save = (reply: Reply) => {
      if (key !== undefined) idempotency.set(key, { endpoint, params: digestOf(params), response: reply })
    }
    if (fault === "5xx") {
      // Stripe saves a 500 under the key too: a retry with it gets the same 500 back.
      const reply = { status: 500, body: { error: { type: "api_error", message: "An unknown error occurred" } } }
      save(reply)
      return send(res, reply)
    }
    let reply: Reply
    try {
      reply = target.run(params)
    } catch (error) {
      if (!(error instanceof StripeHttpError)) throw error
      reply = { status: error.status, body: { error: error.error } }
      // A request that failed validation never began executing: nothing is saved under its key.
      if (!error.saved) return answer(reply)
    }
    save(reply)
    answer(reply)
  }

  const listener = await serveLocal(http.createServer(), "http", handle, (res, error) =>
    send(res, { status: 500, body: { error: { type: "api_error", message: String(error) } } }))
  base = listener.url

  return {
    ...controls(faults, listener, sent),
    /** The SDK options that point the official client at this fake. */
    sdkOptions: { host: "127.0.0.1", port: listener.port, protocol: "http" as const },
    /** The PaymentIntents the fake holds, oldest first (what a test counts). */
    paymentIntents: () => [...intents.values()].map((intent) => intentView(intent)),
    refunds: () => [...refunds.values()].map(refundView),
    /** Settles a pending refund (Stripe's 4000000000007726 card), emitting refund.updated. */
    settleRefund(refundId: string) {
      const found = refunds.get(refundId)
      if (found === undefined || found.status !== "pending") throw new Error(`No pending refund ${refundId}`)
      found.status = "succeeded"
      emit("refund.updated", refundView(found))
    },
    /** Every event emitted so far, oldest first, with the exact payload that was (or would be) signed. */
    events: () => [...events]
  }
}

export type StripeFake = Awaited<ReturnType<typeof start>>
