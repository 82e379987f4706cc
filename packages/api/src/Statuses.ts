/**
 * The status words of each resource as the API states them (the spec's lists, in its order): the
 * view schemas' `status` enums. The domain's state machines keep their own lists beside their
 * transition tables (a status is written only there); packages/domain/src/ApiStatuses.ts holds the
 * two equal at compile time, so a word added on one side alone fails the build.
 */

/** An order's (payment's) status words. */
export const ORDER_STATUSES = [
  "pending",
  "processing",
  "requires_action",
  "authorized",
  "succeeded",
  "failed",
  "canceled",
  "returned"
] as const

/** A transaction's status words. */
export const TRANSACTION_STATUSES = ["initial", "pending", "processing", "completed", "failed", "canceled", "returned"] as const

/** A checkout session's status words. */
export const SESSION_STATUSES = ["open", "pending_action", "completed", "failed", "expired", "canceled"] as const

/** Refunds and payouts. */
export const OUTFLOW_STATUSES = ["pending", "succeeded", "failed"] as const

/** A transfer's status words. */
export const TRANSFER_STATUSES = ["pending", "requires_action", "processing", "succeeded", "failed"] as const

/** A webhook endpoint's status words. */
export const WEBHOOK_ENDPOINT_STATUSES = ["enabled", "disabled"] as const

/** A webhook delivery's status words. */
export const WEBHOOK_DELIVERY_STATUSES = ["pending", "succeeded", "failed", "exhausted"] as const

/** Why a routed attempt went to its channel (contract.md "Routing rules", plus `retry`: a cascade or a smart retry). */
export const ROUTING_REASONS = ["rule", "split", "success_rate", "exploration", "breaker", "default", "retry"] as const
