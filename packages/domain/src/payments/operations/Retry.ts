/**
 * The retry after a 502 (contract.md, Idempotency), as direct payments and transfers share it: a
 * create that found no provider reachable leaves its order `pending` with the request's hash and a
 * retry window; the same request again (the same canonical body, the same reference, the same
 * endpoint) attempts again on that order, claimed under its row lock; anything else is 409
 * `duplicate_merchant_reference_id`. The window-expiry worker fails the orders nobody retried.
 */
import { Clock, Effect, Option } from "effect"
import type { Order } from "../Payment.ts"
import { KeyHasher } from "../../kernel/Ports.ts"
import { lockOrder } from "./Load.ts"
import { referenceHolder, referenceTaken } from "./Target.ts"

/** The creates that may be retried after a 502, by the subtype of the order they make. */
export type Retryable = Extract<Order["subtype"], "direct_payment" | "transfer">

/**
 * How long an order whose create answered 502 waits for the merchant's retry (the spec's "502,
 * 503: retry with backoff"): a day, as long as a backoff schedule reasonably runs. Past it the
 * window-expiry worker fails the order (`payment.failed` or `transfer.failed`), so an order nobody
 * retries never stays open.
 */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000

/** The end of the retry window of a create answered 502 at `at`. */
export const retryUntil = (at: string) => new Date(Date.parse(at) + RETRY_WINDOW_MS).toISOString()

/**
 * The request as one string whatever its key order or spacing (keys sorted; JSON drops absent
 * fields): "the same body" of contract.md's retry rule. Only the fields the API decodes count, so a
 * field it ignores never makes a retry "another body".
 */
const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v)

/** What an order keeps of its create's request (`request_hash`): the SHA-256 of its canonical JSON. */
export const requestHashOf = (input: unknown) =>
  Effect.gen(function*() {
    return yield* (yield* KeyHasher).hash(canonicalJson(input))
  })

/**
 * Whether `order` awaits exactly this request again: its create answered 502 (`pending` with a retry
 * window), the window is still open, and the request is the same, to the same endpoint (a direct
 * payment's body may read the same as a transfer's).
 */
const awaitsRetry = (order: Order, subtype: Order["subtype"], requestHash: string, now: number) =>
  order.subtype === subtype && order.status === "pending" && order.retry_until !== null && Date.parse(order.retry_until) > now &&
  order.request_hash === requestHash

/**
 * contract.md, Idempotency: a taken reference is 409 `duplicate_merchant_reference_id` whatever the
 * body, so it is checked before the body is, with one exception: the same request again on an order
 * whose create answered 502 — that order is returned, to be attempted again.
 */
export const retryOf = (accountId: string, reference: unknown, subtype: Retryable, requestHash: string) =>
  Effect.gen(function*() {
    const holder = yield* referenceHolder(accountId, reference)
    if (Option.isNone(holder)) return undefined
    if (!awaitsRetry(holder.value, subtype, requestHash, yield* Clock.currentTimeMillis)) return yield* Effect.fail(referenceTaken(holder.value))
    return holder.value
  })

/**
 * The order `retryOf` found, under its row lock (in the caller's unit of work), still awaiting this
 * request at `at`: a concurrent retry that claimed it first moved it on, so this one is 409 before
 * any provider call — one provider attempt at a time.
 */
export const lockRetry = (retrying: Order, requestHash: string, at: string) =>
  Effect.gen(function*() {
    const current = yield* lockOrder(retrying.id)
    if (!awaitsRetry(current, retrying.subtype, requestHash, Date.parse(at))) return yield* Effect.fail(referenceTaken(current))
    return current
  })
