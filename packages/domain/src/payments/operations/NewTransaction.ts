/**
 * The birth of a transaction under an order (an attempt, a capture, a void, a refund, a payout, a
 * transfer): `initial`, on the provider the operation talks to, the order's money and method.
 */
import { Effect } from "effect"
import { Ids } from "../../kernel/Ids.ts"
import { nowIso } from "../../kernel/Time.ts"
import type { Order } from "../Order.ts"
import { PaymentProvider } from "../ProviderPorts.ts"
import * as Txn from "../Transaction.ts"
import type { Transaction } from "../Transaction.ts"
import { RouteChosen } from "./Route.ts"

/**
 * A new attempt (or capture, or void) under an order: `initial`, on the order's provider. An attempt
 * (payment, authorization) records the routing decision of the route in context (Route.RouteChosen);
 * anything else follows a transaction and records none.
 */
export const newTransaction = (order: Order, kind: Transaction["kind"], amount: number, fields: Partial<Omit<Transaction, "status">> = {}) =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const provider = yield* PaymentProvider
    const at = yield* nowIso
    const routing = kind === "payment" || kind === "authorization" ? yield* RouteChosen : null
    return Txn.born({
      id: yield* ids.make("transaction"),
      order_id: order.id,
      account_id: order.account_id,
      livemode: order.livemode,
      kind,
      amount,
      currency: order.currency,
      payment_method: order.payment_method,
      processing_profile: order.processing_profile,
      provider: provider.name,
      channel_id: provider.channel_id ?? null,
      created_at: at,
      routing,
      ...fields
    })
  })

