/**
 * A transaction is one attempt at the provider. The spec: initial → pending or processing; then →
 * completed, failed, canceled or returned; treat initial, pending and processing all as in flight.
 */
import { define, type Machine } from "./StateMachine.ts"

export const TRANSACTION_STATUSES = ["initial", "pending", "processing", "completed", "failed", "canceled", "returned"] as const
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number]

export type TransactionTrigger = "queued" | "sent" | "succeeded" | "declined" | "canceled" | "returned"

const IN_FLIGHT = ["initial", "pending", "processing"] as const

export const TransactionMachine: Machine<TransactionStatus, TransactionTrigger> = define({
  name: "Transaction",
  states: TRANSACTION_STATUSES,
  finals: ["completed", "failed", "canceled", "returned"],
  transitions: [
    { from: ["initial"], trigger: "queued", to: "pending" },
    { from: ["initial"], trigger: "sent", to: "processing" },
    { from: IN_FLIGHT, trigger: "succeeded", to: "completed" },
    { from: IN_FLIGHT, trigger: "declined", to: "failed" },
    { from: IN_FLIGHT, trigger: "canceled", to: "canceled" },
    { from: IN_FLIGHT, trigger: "returned", to: "returned" }
  ]
})

export const isInFlight = (status: TransactionStatus): boolean => (IN_FLIGHT as ReadonlyArray<string>).includes(status)
