/**
 * Which payment a capture or void names: exactly one of `order_id`, `transaction_id` (the
 * authorization's) or `merchant_reference`. Kept apart from the Payments use case so that every
 * verb that takes a target resolves it the same way.
 *
 * A reference is not always one payment: orders of every kind share one reference space per
 * account (contract.md, Idempotency), but checkout sessions may reuse a reference once the earlier
 * session ended, each with its own order (and orders stored before migration 0027 may pair a direct
 * payment with sessions). A reference that matches more than one order is refused with
 * `merchant_reference_ambiguous` (spec: "Reference matches more than one transaction") rather than
 * guessed; the merchant then names the payment by `order_id` or `transaction_id`.
 */
import { Effect, Option } from "effect"
import {
  DuplicateMerchantReferenceId,
  InvalidTransactionStatus,
  MerchantReferenceAmbiguous,
  OrderNotFound,
  TransactionNotFound,
  ValidationFailed
} from "../../kernel/Errors.ts"
import type { Order } from "../Payment.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"

/** The authorization a capture or void names: exactly one of the three. */
export interface PaymentTarget {
  readonly order_id?: string | undefined
  readonly transaction_id?: string | undefined
  readonly merchant_reference?: string | undefined
  /** The channel the caller believes holds the authorization; another is `transaction_provider_mismatch`. */
  readonly channel_id?: string | undefined
}

const IDENTIFIERS = ["order_id", "transaction_id", "merchant_reference"] as const

export type TargetError =
  | ValidationFailed
  | TransactionNotFound
  | InvalidTransactionStatus
  | OrderNotFound
  | MerchantReferenceAmbiguous

/** The id of the order the target names, in the account. */
export const resolveTarget = (
  accountId: string,
  target: PaymentTarget
): Effect.Effect<string, TargetError, OrderRepo | TransactionRepo> =>
  Effect.gen(function*() {
    const given = IDENTIFIERS.filter((k) => target[k] !== undefined)
    if (given.length !== 1) {
      return yield* new ValidationFailed({
        message: "Name the authorization with exactly one of order_id, transaction_id, merchant_reference",
        errors: (given.length === 0 ? IDENTIFIERS : given).map((field) => ({
          field,
          message: "exactly one of order_id, transaction_id, merchant_reference is required"
        }))
      })
    }
    if (target.transaction_id !== undefined) {
      const found = yield* (yield* TransactionRepo).find(accountId, target.transaction_id)
      if (Option.isNone(found)) return yield* new TransactionNotFound({ message: `No transaction ${target.transaction_id}` })
      if (found.value.kind !== "authorization") {
        return yield* new InvalidTransactionStatus({
          message: `Transaction ${found.value.id} is a ${found.value.kind}; name the authorization's transaction_id`
        })
      }
      return found.value.order_id
    }
    const orders = yield* OrderRepo
    if (target.order_id !== undefined) {
      const found = yield* orders.find(accountId, target.order_id)
      if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${target.order_id}` })
      return found.value.id
    }
    return (yield* orderByReference(accountId, target.merchant_reference!, (message) => new OrderNotFound({ message }))).id
  })

/**
 * The one order of the account a reference names. Two rows are enough to know the reference is
 * not unique (spec: "Reference matches more than one transaction", even when only one of them
 * could still be acted on: never a guess). Refunds and payouts resolve references here too.
 */
export const orderByReference = <E>(accountId: string, reference: string, notFound: (message: string) => E) =>
  Effect.gen(function*() {
    const matches = yield* (yield* OrderRepo).listByReference(accountId, reference, 2)
    if (matches.length === 0) return yield* Effect.fail(notFound(`No order with merchant_reference ${reference}`))
    if (matches.length > 1) {
      return yield* new MerchantReferenceAmbiguous({
        message: `merchant_reference ${reference} matches more than one payment; name it by order_id or transaction_id`
      })
    }
    return matches[0]
  })

/** The order already holding `reference` in the account; none for a missing or blank reference (validation reports it). */
export const referenceHolder = (accountId: string, reference: unknown) =>
  Effect.gen(function*() {
    if (typeof reference !== "string" || reference.trim() === "") return Option.none<Order>()
    return yield* (yield* OrderRepo).findByReference(accountId, reference)
  })

/** The refusal of a create whose reference `holder` already has; it says where to read what holds it. */
export const referenceTaken = (holder: Order) => {
  const reference = encodeURIComponent(holder.merchant_reference)
  const read = holder.subtype === "checkout" ? `/v1/checkout/sessions/by-reference/${reference}` : `/v1/orders/by-reference/${reference}`
  return new DuplicateMerchantReferenceId({ message: `merchant_reference ${holder.merchant_reference} already exists; fetch it with GET ${read}` })
}

/**
 * contract.md, Idempotency: a session's create whose reference a direct payment or transfer uses is
 * 409 `duplicate_merchant_reference_id` "whatever its body", so it is checked before the body is
 * (sessions among themselves: CheckoutSessionRepo.insert; direct payments and transfers: Retry.ts).
 */
export const refuseReferenceOfOrders = (accountId: string, reference: unknown) =>
  Effect.gen(function*() {
    const holder = yield* referenceHolder(accountId, reference)
    if (Option.isNone(holder) || holder.value.subtype === "checkout") return
    return yield* Effect.fail(referenceTaken(holder.value))
  })
