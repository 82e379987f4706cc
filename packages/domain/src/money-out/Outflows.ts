/**
 * The Outflows use case: refunds and payouts (money back out), a facade over their operations
 * (operations/Refund.ts, Payout.ts; the shared steps in Outflow.ts). The settlement worker and
 * reconciliation reach them through the Payments use case (Capture.settleDue, Reconcile.ts).
 */
import { Context, Effect, Layer } from "effect"
import type { Account } from "../accounts/Account.ts"
import type { NotFound, PayoutNotFound } from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import { type ErrorOf, seam } from "../kernel/Seam.ts"
import { PayoutRepo, RefundRepo } from "./OutflowPorts.ts"
import type { PayoutView, RefundView } from "./OutflowViews.ts"
import { OrderRepo, TransactionRepo } from "../payments/PaymentPorts.ts"
import { PaymentProvider } from "../payments/ProviderPorts.ts"
import { ChannelProviders, ChannelRepo } from "../channels/ChannelPorts.ts"
import { CardVault } from "../cards/CardPorts.ts"
import { AccountRepo } from "../accounts/AccountPorts.ts"
import { Locks, UnitOfWork } from "../kernel/Ports.ts"
import { Outbox } from "../webhooks/Webhooks.ts"
import { createPayout, type PayoutInput } from "./operations/Payout.ts"
import { getPayout, getRefund } from "./operations/Read.ts"
import { createRefund, operatorRefund, type RefundInput } from "./operations/Refund.ts"

export type { PayoutInput } from "./operations/Payout.ts"
export type { RefundInput } from "./operations/Refund.ts"
export type { PayoutView, RefundView } from "./OutflowViews.ts"

/** The services the operations need, captured when the layer is built (kernel/Seam.ts). */
type Needs = RefundRepo | PayoutRepo | OrderRepo | TransactionRepo | AccountRepo | Outbox | UnitOfWork | PaymentProvider | CardVault | Locks | Ids | ChannelRepo | ChannelProviders

/** The Outflows use case: refunds and payouts out of an order's settlement, and their reads. */
export class Outflows extends Context.Service<Outflows, {
  /** Refunds (part of) a payment's settlement, within what remains refundable. */
  refund(account: Account, input: RefundInput): Effect.Effect<RefundView, ErrorOf<typeof createRefund>>
  /** The account's refund with this id. */
  getRefund(account: Account, id: string): Effect.Effect<RefundView, NotFound>
  /** Pays (part of) a payment's settlement out to its instrument, within the account's payout limits. */
  payout(account: Account, input: PayoutInput): Effect.Effect<PayoutView, ErrorOf<typeof createPayout>>
  /** The account's payout with this id. */
  getPayout(account: Account, id: string): Effect.Effect<PayoutView, PayoutNotFound>
  /** Operator access, whatever the account (CLI). */
  operator: {
    /** Refunds the order's settlement, or the named settlement of the order (`transaction_id`). */
    refund(orderId: string, input: { readonly transaction_id?: string | undefined; readonly amount?: string | undefined }): Effect.Effect<RefundView, ErrorOf<typeof operatorRefund>>
    /** Any account's refund with this id. */
    getRefund(id: string): Effect.Effect<RefundView, NotFound>
    /** Any account's payout with this id. */
    getPayout(id: string): Effect.Effect<PayoutView, PayoutNotFound>
  }
}>()("@tender/domain/money-out/Outflows") {
  static readonly layer = Layer.effect(
    Outflows,
    Effect.gen(function*() {
      const run = yield* seam<Needs>()

      return Outflows.of({
        refund: (account, input) => run(createRefund(account, input)),
        getRefund: (account, id) => run(getRefund(account.id, id)),
        payout: (account, input) => run(createPayout(account, input)),
        getPayout: (account, id) => run(getPayout(account.id, id)),
        operator: {
          refund: (orderId, input) => run(operatorRefund(orderId, input)),
          getRefund: (id) => run(getRefund(undefined, id)),
          getPayout: (id) => run(getPayout(undefined, id))
        }
      })
    })
  )
}
