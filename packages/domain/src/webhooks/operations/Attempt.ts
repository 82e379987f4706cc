/**
 * Operation: one attempt of a claimed delivery. POST the signed envelope, decide (pure) what the
 * answer makes of the delivery (succeeded, failed with the next try scheduled, or exhausted), and
 * record the attempt with that state through `record` (which may batch it with others), fenced by
 * the claim's lease. An endpoint disabled since the claim is not attempted: the delivery is handed
 * back, due now, and waits paused.
 */
import { Clock, Effect, Metric, Option, Random, Result } from "effect"
import { type SigningKeys, signingSecrets } from "../../accounts/Account.ts"
import { webhookFirstAttemptLag } from "../../kernel/OperationalMetrics.ts"
import { type Decided, revise } from "../../kernel/StateMachine.ts"
import { isoOf } from "../../kernel/Time.ts"
import { clip, MAX_MESSAGE } from "../../kernel/Limits.ts"
import { storable } from "../../kernel/Text.ts"
import type { PaymentEvent } from "../../payments/Payment.ts"
import * as Webhook from "../Webhook.ts"
import { type DeliveryOutcome, PayloadSigner, WebhookDeliveryRepo, WebhookTransport } from "../WebhookPorts.ts"
import type { Claimed } from "./Claim.ts"

/** Writes an attempt with its delivery's new state; whether its fence held. */
export type Recorder = (delivery: Decided<Webhook.WebhookDelivery>, attempt: Webhook.DeliveryAttempt) => Effect.Effect<boolean>

/** What an attempt came to, as its log row says it. */
export type AttemptOutcome = Pick<Webhook.DeliveryAttempt, "status_code" | "error" | "duration_ms" | "response">

/**
 * The transport's report as the log's row: any 2xx is success, any other answer a failure. The
 * receiver's answer and the transport's reason are the receiver's doing: made storable here, the
 * one place every storage's row comes from (a NUL in a gzip body made PostgreSQL refuse the row, so
 * the delivery was never recorded and was sent again and again).
 */
export const outcomeOf = (result: DeliveryOutcome): AttemptOutcome =>
  result._tag === "Answered"
    ? {
      status_code: result.status,
      error: result.status >= 200 && result.status < 300 ? null : `HTTP ${result.status}`,
      duration_ms: result.duration_ms,
      ...(result.body === undefined ? {} : { response: storable(result.body) })
    }
    // The transport's reason (one per address tried) is unbounded; the delivery's answer shows it
    // within the document's bound.
    : { status_code: null, error: clip(storable(result.error), MAX_MESSAGE), duration_ms: result.duration_ms }

/**
 * The delivery after an attempt (pure). `gone`: nothing left to deliver to (endpoint deleted, event or
 * account gone), so no later attempt can succeed; `jitter` in [0,1) spreads the next try.
 */
export const decideAttempt = (
  delivery: Webhook.WebhookDelivery,
  outcome: AttemptOutcome,
  facts: { readonly started: number; readonly at: number; readonly jitter: number; readonly gone: boolean }
) => {
  const attempts = delivery.attempts + 1
  const delay = outcome.error === null ? undefined : Webhook.nextAttemptDelay(attempts, facts.jitter)
  const trigger: Webhook.DeliveryTrigger = outcome.error === null
    ? "attempt_succeeded"
    : facts.gone || delay === undefined || attempts >= Webhook.MAX_ATTEMPTS
    ? "attempt_failed_final"
    : "attempt_failed"
  return Result.map(
    Webhook.transition(delivery, trigger, isoOf(facts.at), {
      attempts,
      next_attempt_at: trigger === "attempt_failed" ? isoOf(facts.at + delay!) : null,
      last_attempt_at: isoOf(facts.started)
    }),
    (moved) => ({
      delivery: moved.next,
      attempt: { delivery_id: delivery.id, attempted_at: isoOf(facts.started), ...outcome } satisfies Webhook.DeliveryAttempt
    })
  )
}

/** POSTs the event's envelope (`body`), signed under the account's secrets, to the endpoint. */
const post = (event: PaymentEvent, body: Uint8Array, endpoint: Webhook.WebhookEndpoint, signing: SigningKeys, started: number) =>
  Effect.gen(function*() {
    const signer = yield* PayloadSigner
    const url = new URL(endpoint.url)
    return outcomeOf(
      yield* (yield* WebhookTransport).post({
        url: endpoint.url,
        headers: Webhook.deliveryHeaders(signer.sign(signingSecrets(signing, started), Math.floor(started / 1000), url.pathname, body), event),
        body,
        timeoutMs: Webhook.ATTEMPT_TIMEOUT_MS
      })
    )
  })

/**
 * One attempt of a claimed delivery, with what the claim read with it (its event's envelope, its
 * endpoint, the account's secrets); `posted` runs once the endpoint has its answer.
 */
export const attempt = Effect.fnUntraced(function*(
  claimed: Claimed,
  record: Recorder,
  posted: Effect.Effect<void> = Effect.void
) {
  const { body, delivery, endpoint, event, signing } = claimed
  const started = yield* Clock.currentTimeMillis
  if (delivery.attempts === 0) yield* Metric.update(webhookFirstAttemptLag, Math.max(0, started - Date.parse(delivery.created_at)) / 1000)
  if (Option.isSome(endpoint) && endpoint.value.status === "disabled") {
    // Disabled since the claim: handed back unattempted, due now (fenced by the lease); it waits,
    // paused, until the endpoint is enabled.
    yield* (yield* WebhookDeliveryRepo).update(revise(delivery, { next_attempt_at: isoOf(started) }, isoOf(started)))
    return
  }
  const gone = Option.isNone(event) || body === undefined || Option.isNone(endpoint) || Option.isNone(signing)
  const outcome: AttemptOutcome = gone
    // Nothing to send to any more: recorded as a failed attempt so the log says why.
    ? { status_code: null, error: Option.isNone(endpoint) ? "endpoint deleted" : "event or account gone", duration_ms: 0 }
    : yield* post(event.value, body, endpoint.value, signing.value, started)
  // The endpoint has its answer: its slot is free while the outcome is written (the lease still
  // holds the row, so no claim takes it meanwhile).
  yield* posted
  const at = yield* Clock.currentTimeMillis
  const jitter = outcome.error === null ? 0 : yield* Random.next
  const decision = decideAttempt(delivery, outcome, { started, at, jitter, gone })
  // The claim only hands out pending or failed deliveries: any other is a bug.
  if (Result.isFailure(decision)) return yield* Effect.die(new Error(decision.failure))
  if (!(yield* record(decision.success.delivery, decision.success.attempt))) {
    // Our lease ran out and the delivery was claimed again (or retried): its holder records.
    yield* Effect.logWarning(`webhook attempt of ${delivery.id} dropped: its lease was lost`)
  }
})
