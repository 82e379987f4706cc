/**
 * The state machines' status words (and routing's reasons) equal the API's (@tender/api/Statuses), checked by the compiler.
 * Each machine keeps its own list beside its transition table (the only place a status is written,
 * test/Transitions.test.ts); the API states the same words for its view schemas. A word added,
 * removed or reordered on one side alone fails `tsc -b` here.
 */
import type * as Api from "@tender/api/Statuses"
import type { DELIVERY_STATUSES, ENDPOINT_STATUSES } from "./webhooks/Webhook.ts"
import type { OUTFLOW_STATUSES, TRANSFER_STATUSES } from "./money-out/MoneyOut.ts"
import type { ORDER_STATUSES } from "./payments/Order.ts"
import type { TRANSACTION_STATUSES } from "./payments/Transaction.ts"
import type { ROUTING_REASONS } from "./channels/RoutingModel.ts"
import type { SESSION_STATUSES } from "./sessions/CheckoutSession.ts"

/** `true` exactly when A and B are the same type (not merely assignable either way). */
export type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false

/** Compiles only when given `true`. */
type Assert<T extends true> = T

export type StatusListsEqual = [
  Assert<Equals<typeof ORDER_STATUSES, typeof Api.ORDER_STATUSES>>,
  Assert<Equals<typeof TRANSACTION_STATUSES, typeof Api.TRANSACTION_STATUSES>>,
  Assert<Equals<typeof SESSION_STATUSES, typeof Api.SESSION_STATUSES>>,
  Assert<Equals<typeof OUTFLOW_STATUSES, typeof Api.OUTFLOW_STATUSES>>,
  Assert<Equals<typeof TRANSFER_STATUSES, typeof Api.TRANSFER_STATUSES>>,
  Assert<Equals<typeof ENDPOINT_STATUSES, typeof Api.WEBHOOK_ENDPOINT_STATUSES>>,
  Assert<Equals<typeof DELIVERY_STATUSES, typeof Api.WEBHOOK_DELIVERY_STATUSES>>,
  Assert<Equals<typeof ROUTING_REASONS, typeof Api.ROUTING_REASONS>>
]
