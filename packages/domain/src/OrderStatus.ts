/**
 * The order's state machine: the net result across a payment's attempts. The spec's Order table
 * gives four rows; the others complete the lifecycle every flow needs (docs/state-machines.md).
 */
import { define, type Machine } from "./StateMachine.ts"

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
export type OrderStatus = (typeof ORDER_STATUSES)[number]

export type OrderTrigger =
  | "attempt_sent"
  | "action_required"
  | "action_completed"
  | "attempt_declined_retry"
  | "attempt_declined_final"
  | "payment_settled"
  | "authorization_succeeded"
  | "authorization_closed_settled"
  | "authorization_voided"
  | "amount_mismatch"
  | "mismatch_accepted"
  | "mismatch_returned"
  | "expired"
  | "canceled"

const IN_FLIGHT = ["pending", "processing", "requires_action"] as const

export const OrderMachine: Machine<OrderStatus, OrderTrigger> = define({
  name: "Order",
  states: ORDER_STATUSES,
  finals: ["succeeded", "failed", "canceled", "returned"],
  transitions: [
    { from: ["pending"], trigger: "attempt_sent", to: "processing" },
    { from: ["pending", "processing"], trigger: "action_required", to: "requires_action" },
    { from: ["requires_action"], trigger: "action_completed", to: "processing" },
    // spec: (attempt in progress) — declined attempt with retries remaining → pending
    { from: IN_FLIGHT, trigger: "attempt_declined_retry", to: "pending", when: "retries remaining" },
    { from: IN_FLIGHT, trigger: "attempt_declined_final", to: "failed", when: "no retry remains" },
    { from: IN_FLIGHT, trigger: "payment_settled", to: "succeeded" },
    // spec: (manual-capture hold) — authorization succeeded → authorized
    { from: IN_FLIGHT, trigger: "authorization_succeeded", to: "authorized" },
    { from: ["authorized"], trigger: "authorization_closed_settled", to: "succeeded", when: "a final capture settled, or a void behind settled captures" },
    { from: ["authorized"], trigger: "authorization_voided", to: "canceled", when: "nothing captured" },
    // spec: (under- or overpayment) — payment received with wrong amount → processing
    { from: IN_FLIGHT, trigger: "amount_mismatch", to: "processing", when: "stays until the merchant decides" },
    { from: ["processing"], trigger: "mismatch_accepted", to: "succeeded" },
    // spec: processing (mismatch) — merchant declines and funds are sent back → returned
    { from: ["processing"], trigger: "mismatch_returned", to: "returned" },
    { from: IN_FLIGHT, trigger: "expired", to: "canceled" },
    { from: IN_FLIGHT, trigger: "canceled", to: "canceled" }
  ]
})
