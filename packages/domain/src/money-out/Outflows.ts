/**
 * The Outflows use case: refunds and payouts (money back out), a facade over their operations
 * (operations/Refund.ts, Payout.ts; the shared steps in Outflow.ts). The settlement worker and
 * reconciliation reach them through the Payments use case (Capture.settleDue, Reconcile.ts).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Account } from "../accounts/Account.ts"
import { type DomainError, NotFound, OriginalTransactionNotFound, PayoutNotFound } from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import { type OutflowStore, PayoutRepo, RefundRepo } from "./OutflowPorts.ts"
import { payoutView, type PayoutView, refundView, type RefundView } from "./OutflowViews.ts"
import { OrderRepo, TransactionRepo } from "../payments/PaymentPorts.ts"
import { PaymentProvider } from "../payments/ProviderPorts.ts"
import { ChannelProviders, ChannelRepo } from "../channels/ChannelPorts.ts"
import { CardVault } from "../cards/CardPorts.ts"
import { AccountRepo } from "../accounts/AccountPorts.ts"
import { Locks, UnitOfWork } from "../kernel/Ports.ts"
import { Outbox } from "../webhooks/Webhooks.ts"
import { createPayout, type PayoutInput } from "./operations/Payout.ts"
import { createRefund, type RefundInput } from "./operations/Refund.ts"

export type { PayoutInput } from "./operations/Payout.ts"
export type { RefundInput } from "./operations/Refund.ts"
export type { PayoutView, RefundView } from "./OutflowViews.ts"

export class Outflows extends Context.Service<Outflows, {
  refund(account: Account, input: RefundInput): Effect.Effect<RefundView, DomainError>
  getRefund(account: Account, id: string): Effect.Effect<RefundView, NotFound>
  payout(account: Account, input: PayoutInput): Effect.Effect<PayoutView, DomainError>
  getPayout(account: Account, id: string): Effect.Effect<PayoutView, PayoutNotFound>
  /** Operator access, whatever the account (CLI). */
  operator: {
    /** Refunds the order's settlement, or the named settlement of the order (`transaction_id`). */
    refund(orderId: string, input: { readonly transaction_id?: string | undefined; readonly amount?: string | undefined }): Effect.Effect<RefundView, DomainError>
    getRefund(id: string): Effect.Effect<RefundView, NotFound>
    getPayout(id: string): Effect.Effect<PayoutView, PayoutNotFound>
  }
}>()("@tender/domain/money-out/Outflows") {
  static readonly layer = Layer.effect(
    Outflows,
    Effect.gen(function*() {
      const context = yield* Effect.context<
        RefundRepo | PayoutRepo | OrderRepo | TransactionRepo | AccountRepo | Outbox | UnitOfWork | PaymentProvider | CardVault | Locks | Ids | ChannelRepo | ChannelProviders
      >()
      const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provideContext(effect, context) as Effect.Effect<A, E>
      const refunds = Context.get(context, RefundRepo)
      const payouts = Context.get(context, PayoutRepo)

      /** A record by id, in the account (or any, for the operator), as its view. */
      const read = <R, V, E>(store: OutflowStore<R>, view: (r: R) => V, missing: (id: string) => E) =>
      (accountId: string | undefined, id: string) =>
        Effect.flatMap(accountId === undefined ? store.findAny(id) : store.find(accountId, id), Option.match({
          onNone: () => Effect.fail(missing(id)),
          onSome: (r) => Effect.succeed(view(r))
        }))
      const refundOf = read(refunds, refundView, (id) => new NotFound({ message: `No refund ${id}` }))
      const payoutOf = read(payouts, payoutView, (id) => new PayoutNotFound({ message: `No payout ${id}` }))

      const operatorRefund = (orderId: string, input: { readonly transaction_id?: string | undefined; readonly amount?: string | undefined }) =>
        Effect.gen(function*() {
          const order = Option.getOrUndefined(yield* Context.get(context, OrderRepo).findAny(orderId))
          if (order === undefined) return yield* new OriginalTransactionNotFound({ message: `No order ${orderId}` })
          if (input.transaction_id !== undefined) {
            const txn = Option.getOrUndefined(yield* Context.get(context, TransactionRepo).findAny(input.transaction_id))
            if (txn?.order_id !== order.id) {
              return yield* new OriginalTransactionNotFound({ message: `No transaction ${input.transaction_id} in order ${orderId}` })
            }
          }
          const account = Option.getOrThrow(yield* Context.get(context, AccountRepo).findById(order.account_id))
          const target = input.transaction_id !== undefined ? { transaction_id: input.transaction_id } : { order_id: order.id }
          return yield* createRefund(account, { ...target, amount: input.amount })
        })

      return Outflows.of({
        refund: (account, input) => run(createRefund(account, input)),
        getRefund: (account, id) => refundOf(account.id, id),
        payout: (account, input) => run(createPayout(account, input)),
        getPayout: (account, id) => payoutOf(account.id, id),
        operator: {
          refund: (orderId, input) => run(operatorRefund(orderId, input)),
          getRefund: (id) => refundOf(undefined, id),
          getPayout: (id) => payoutOf(undefined, id)
        }
      })
    })
  )
}
