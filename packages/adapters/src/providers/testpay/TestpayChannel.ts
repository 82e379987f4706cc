/**
 * A Testpay channel's client (TestpayModule's `load`): the PaymentProvider over Testpay's small
 * JSON API (TestpayWire.ts) with `fetch`, and its notifications verified with the channel's secret.
 * Every mutation sends Tender's idempotency key; `lookup` asks Testpay what the key answered, and a
 * key it never saw is fenced there, so a late copy of the lost call is refused (409 `key_fenced`).
 */
import { type AuthorizeResult, type CaptureResult, NotificationUnverified, type PaymentProvider, type PayoutResult, type ProviderNotice, type VoidResult } from "@tender/domain"
import { Effect, Schema } from "effect"
import { answersFor, type CallFailure, NOT_SENT_CODES } from "../shared/CallFailure.ts"
import type { BuildContext, ChannelClient } from "../ProviderModule.ts"
import { Capture, Charge, ErrorBody, Lookup, Refund, SIGNATURE_HEADER, verifies } from "./TestpayWire.ts"

type Port = PaymentProvider["Service"]
type TestpayError = typeof ErrorBody.Type["error"]

const Credentials = Schema.Struct({ api_key: Schema.String, webhook_secret: Schema.String })

const answers = answersFor("Testpay")

/** Testpay's production host; a channel's endpoint (a fake) replaces it. */
const DEFAULT_API_URL = "https://api.testpay.invalid"

const authorizeOutcome = (charge: Charge, capture: boolean): AuthorizeResult =>
  charge.status === "declined"
    ? { _tag: "Declined", decline_code: charge.decline_code ?? "card_declined", provider_transaction_id: charge.id }
    : { _tag: "Approved", provider_transaction_id: charge.id, multicapture: !capture }

/** Refusal codes of follow-ups: Testpay's → ours. */
const refusal = (error: TestpayError, fallback: string) =>
  error.code === "no_such_charge" ? "authorization_not_found" : error.code === "amount_too_large" ? "amount_too_large" : fallback

export const build = (context: BuildContext): ChannelClient => {
  // Testpay moves no real money: a live channel of it is refused when added, and never built.
  if (context.channel.mode === "live") throw new Error(`Testpay has no live mode (channel ${context.channel.id})`)
  // What was sealed was checked by the descriptor's fields: a mismatch here is corruption, a defect.
  const credentials = Schema.decodeUnknownSync(Credentials)(context.credentials)
  const base = (context.endpoint.apiUrl ?? DEFAULT_API_URL).replace(/\/+$/, "")
  const timeoutMs = context.timeoutMs ?? 20_000

  /** One call: its answer's JSON, or what its failure means (CallFailure's vocabulary). */
  const post = (path: string, body: unknown, idempotencyKey?: string): Effect.Effect<unknown, CallFailure<TestpayError>> =>
    Effect.tryPromise({
      try: (signal) =>
        fetch(`${base}${path}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${credentials.api_key}`,
            ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
          },
          body: JSON.stringify(body),
          signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
        }).then(async (response) => ({ status: response.status, json: await response.json() as unknown })),
      catch: (error): CallFailure<TestpayError> => {
        const code = (error as { cause?: { code?: string } }).cause?.code
        return code !== undefined && NOT_SENT_CODES.includes(code)
          ? { _tag: "NotSent", reason: `not reached (${code})` }
          : { _tag: "Unknown", reason: error instanceof Error && error.name === "TimeoutError" ? "no answer in time" : "the connection dropped" }
      }
    }).pipe(Effect.flatMap(({ json, status }) => {
      if (status < 300) return Effect.succeed(json)
      if (status >= 500) return Effect.fail<CallFailure<TestpayError>>({ _tag: "Unknown", reason: `answered ${status}`, report: `${status}` })
      // Refused unapplied: a bad key, a fenced key (a lookup found it unused), throttling.
      if (status === 401 || status === 409 || status === 429) return Effect.fail<CallFailure<TestpayError>>({ _tag: "NotSent", reason: `refused (${status})` })
      // A refusal whose body is not Testpay's error shape is an answer we cannot read: in doubt, not a throw.
      return Schema.decodeUnknownEffect(ErrorBody)(json).pipe(
        Effect.mapError((): CallFailure<TestpayError> => ({ _tag: "Unknown", reason: `answered ${status} with an unreadable body`, report: `${status}` })),
        Effect.flatMap((body) => Effect.fail<CallFailure<TestpayError>>({ _tag: "Rejected", error: body.error }))
      )
    }))

  const decode = <A>(schema: Schema.Codec<A>) => Schema.decodeUnknownSync(schema)
  const capturedOf = (json: unknown): CaptureResult => ({ _tag: "Settled", provider_transaction_id: decode(Capture)(json).id })
  const voidedOf = (json: unknown): VoidResult => ({ _tag: "Voided", provider_transaction_id: decode(Charge)(json).id })
  const refundedOf = (json: unknown): PayoutResult => ({ _tag: "Paid", provider_transaction_id: decode(Refund)(json).id })

  const provider: Port = {
    name: "testpay",
    mode: context.channel.mode,
    voidReleasesRemainder: true,
    authorizeCard: (request) =>
      answers.settle(
        post("/charges", {
          reference: request.reference,
          amount: request.amount,
          currency: request.currency,
          capture: request.capture,
          card: { number: request.card.number, exp_month: request.card.exp_month, exp_year: request.card.exp_year, cvc: request.card.cvc }
        }, request.idempotency_key),
        (json) => Effect.succeed(authorizeOutcome(decode(Charge)(json), request.capture)),
        (error) => Effect.succeed<AuthorizeResult>({ _tag: "Declined", decline_code: refusal(error, "card_declined"), provider_transaction_id: null })
      ),
    captureCard: (request) =>
      answers.settle(
        post(`/charges/${encodeURIComponent(request.authorization)}/capture`, { reference: request.reference, amount: request.amount, final: request.final }, request.idempotency_key),
        (json) => Effect.succeed(capturedOf(json)),
        (error) => Effect.succeed<CaptureResult>({ _tag: "Refused", decline_code: refusal(error, "capture_refused") })
      ),
    voidCard: (request) =>
      answers.settle(
        post(`/charges/${encodeURIComponent(request.authorization)}/void`, { reference: request.reference }, request.idempotency_key),
        (json) => Effect.succeed(voidedOf(json)),
        (error) => Effect.succeed<VoidResult>({ _tag: "Refused", decline_code: refusal(error, "void_refused") })
      ),
    refund: (request) =>
      answers.settle(
        post("/refunds", { reference: request.reference, payment: request.payment, amount: request.amount }, request.idempotency_key),
        (json) => Effect.succeed(refundedOf(json)),
        (error) => Effect.succeed<PayoutResult>({ _tag: "Refused", decline_code: refusal(error, "refund_failed") })
      ),
    // Every capture and refund settles in its answer.
    settlement: () => Effect.succeed("settled"),
    binLookup: () => Effect.succeed({}),
    ...answers.cardOnly("a Testpay card channel"),
    lookup: (key) =>
      post("/lookups", { key }).pipe(
        Effect.mapError((failure) => answers.unreachable(failure, (error) => error.message)),
        Effect.map((json) => {
          const found = decode(Lookup)(json)
          if (!found.found) return { _tag: "NotReceived" } as const
          const refused = found.status >= 400 ? decode(ErrorBody)(found.body).error : undefined
          switch (found.operation) {
            case "authorize": {
              if (refused !== undefined) return { _tag: "Authorize", result: { _tag: "Declined", decline_code: refusal(refused, "card_declined"), provider_transaction_id: null } } as const
              const charge = decode(Charge)(found.body)
              return { _tag: "Authorize", result: authorizeOutcome(charge, charge.status === "captured") } as const
            }
            case "capture":
              return { _tag: "Capture", result: refused !== undefined ? { _tag: "Refused", decline_code: refusal(refused, "capture_refused") } : capturedOf(found.body) } as const
            case "void":
              return { _tag: "Void", result: refused !== undefined ? { _tag: "Refused", decline_code: refusal(refused, "void_refused") } : voidedOf(found.body) } as const
            case "refund":
              return { _tag: "Refund", result: refused !== undefined ? { _tag: "Refused", decline_code: refusal(refused, "refund_failed") } : refundedOf(found.body) } as const
          }
        })
      )
  }

  return {
    provider,
    notifications: (delivery) =>
      Effect.gen(function*() {
        const body = Buffer.from(delivery.rawBody).toString("utf8")
        if (!verifies(body, delivery.headers[SIGNATURE_HEADER], credentials.webhook_secret)) {
          return yield* new NotificationUnverified({ message: "Testpay: the signature does not match" })
        }
        const charge = yield* Schema.decodeUnknownEffect(Schema.fromJsonString(Charge))(body).pipe(
          Effect.mapError(() => new NotificationUnverified({ message: "Testpay: not a charge notification" }))
        )
        const notice: ProviderNotice = {
          reference: charge.reference,
          amount: charge.amount,
          currency: charge.currency.toUpperCase(),
          answer: { _tag: "Authorize", result: authorizeOutcome(charge, charge.status === "captured") }
        }
        return { notices: [notice], accept: Effect.void }
      })
  }
}
