/** Which authorization a capture or void names: exactly one of order_id, transaction_id, merchant_reference. */
import { Effect, Option } from "effect"
import { InvalidTransactionStatus, OrderNotFound, TransactionNotFound, ValidationFailed } from "../Errors.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"

export interface PaymentTarget {
  readonly order_id?: string | undefined
  readonly transaction_id?: string | undefined
  readonly merchant_reference?: string | undefined
}

export const resolveTarget = (accountId: string, target: PaymentTarget) =>
  Effect.gen(function*() {
    const given = (["order_id", "transaction_id", "merchant_reference"] as const).filter((k) => target[k] !== undefined)
    if (given.length !== 1) {
      return yield* new ValidationFailed({
        message: "Name the authorization with exactly one of order_id, transaction_id, merchant_reference",
        errors: (given.length === 0 ? ["order_id", "transaction_id", "merchant_reference"] : given).map((field) => ({
          field,
          message: "exactly one of order_id, transaction_id, merchant_reference is required"
        }))
      })
    }
    if (target.transaction_id !== undefined) {
      const txn = yield* Effect.flatMap((yield* TransactionRepo).find(accountId, target.transaction_id), Option.match({
        onNone: () => Effect.fail(new TransactionNotFound({ message: `No transaction ${target.transaction_id}` })),
        onSome: Effect.succeed
      }))
      if (txn.kind !== "authorization") {
        return yield* new InvalidTransactionStatus({ message: `Transaction ${txn.id} is a ${txn.kind}; name the authorization's transaction_id` })
      }
      return txn.order_id
    }
    const orders = yield* OrderRepo
    const found = target.order_id !== undefined
      ? yield* orders.find(accountId, target.order_id)
      : yield* orders.findByReference(accountId, target.merchant_reference!)
    if (Option.isNone(found)) {
      return yield* new OrderNotFound({ message: `No order ${target.order_id ?? `with merchant_reference ${target.merchant_reference}`}` })
    }
    return found.value.id
  })
