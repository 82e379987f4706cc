/**
 * The settlement worker's round (Workers.ts, every second): what the provider accepted for later and
 * has not settled yet — captures, refunds, payouts, transfers — each settled through its own record
 * step once the provider says so (Settlement.whenSettled).
 */
import { Effect } from "effect"
import type { Conflict } from "../Errors.ts"
import type { Transaction } from "../Payment.ts"
import { TransactionRepo } from "../PaymentPorts.ts"
import { settleSettlingCapture } from "./Capture.ts"
import { settleOutflow } from "./Outflow.ts"
import { settleTransfer } from "./RecordTransfer.ts"

type SettlementServices =
  | Effect.Services<ReturnType<typeof settleSettlingCapture>>
  | Effect.Services<ReturnType<typeof settleTransfer>>
  | Effect.Services<ReturnType<typeof settleOutflow>>

/** Who settles a transaction of each kind that settles later (TransactionRepo.listSettling; a provider's notification). */
export const settlerOf = (c: Transaction): Effect.Effect<boolean, Conflict, SettlementServices> => {
  switch (c.kind) {
    case "capture":
      return settleSettlingCapture(c)
    case "transfer":
      return settleTransfer(c)
    default:
      return settleOutflow(c)
  }
}

/** One round: settles what is due; returns how many settled. */
export const settleDue = Effect.fn("Payments.settleDue")(function*() {
  const due = yield* (yield* TransactionRepo).listSettling(50)
  let settled = 0
  for (const c of due) {
    const done = yield* Effect.catchCause(settlerOf(c), (cause) => Effect.as(Effect.logWarning(`settlement of ${c.id} failed`, cause), false))
    if (done) settled++
  }
  return settled
})
