/**
 * The settlement worker's round (Workers.ts, every second): what the provider accepted for later and
 * has not settled yet — captures, refunds, payouts, transfers — each settled through its own record
 * step once the provider says so (Settlement.whenSettled).
 */
import { Clock, Effect } from "effect"
import type { Conflict } from "../../kernel/Errors.ts"
import type { Transaction } from "../Payment.ts"
import { TransactionRepo } from "../PaymentPorts.ts"
import { revise } from "../../kernel/StateMachine.ts"
import { askAgainAt, isoOf } from "../../kernel/Time.ts"
import { awaitsSettlement } from "../Transaction.ts"
import { settleSettlingCapture } from "./Capture.ts"
import { loadTxn, lockOrder } from "./Load.ts"
import { saveTxn, unitOfWork } from "./Persist.ts"
import { settleOutflow } from "../../money-out/operations/Outflow.ts"
import { settleTransfer } from "../../money-out/operations/RecordTransfer.ts"

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

/**
 * A transaction a round did not settle is asked about again later (Time.askAgainAt: half its age,
 * 1 s to 10 min), persisted as its `settlement_check_at`: one the provider cannot be asked about,
 * one whose record step keeps failing, and one the provider simply has not settled yet alike, so
 * none is asked every second for ever nor holds newer ones back. Left alone once it no longer
 * awaits settlement (settled meanwhile: by another process, a provider's notice).
 */
const checkLater = (candidate: Transaction, now: number) =>
  unitOfWork(Effect.gen(function*() {
    yield* lockOrder(candidate.order_id)
    const txn = yield* loadTxn(candidate.id)
    if (!awaitsSettlement(txn)) return
    yield* saveTxn(revise(txn, { settlement_check_at: isoOf(askAgainAt(now, Date.parse(txn.created_at))) }, isoOf(now)))
  }))

/** One round: settles what is due; returns how many settled. */
export const settleDue = Effect.fn("Payments.settleDue")(function*() {
  const now = yield* Clock.currentTimeMillis
  const due = yield* (yield* TransactionRepo).listSettling(isoOf(now), 50)
  let settled = 0
  for (const c of due) {
    const done = yield* Effect.catchCause(settlerOf(c), (cause) => Effect.as(Effect.logWarning(`settlement of ${c.id} failed; asked again later`, cause), false))
    if (done) settled++
    else {
      yield* Effect.catchCause(checkLater(c, now), (cause) => Effect.logWarning(`settlement of ${c.id} could not be put off`, cause))
    }
  }
  return settled
})
