/**
 * The settlement worker's step for one transaction the provider accepted for later (a settling
 * capture, a queued refund, payout or transfer): ask the provider, and once it says settled, apply the
 * settlement under the order's lock to the transaction as it stands now. Captures (Capture.ts) and
 * money back out (Outflow.ts) settle through here.
 */
import { Effect } from "effect"
import type { Order, Transaction } from "../Payment.ts"
import { nowIso } from "../../kernel/Time.ts"
import { guarded, loadTxn, lockOrder } from "./Load.ts"
import { unitOfWork } from "./Persist.ts"
import { checkpoint } from "./ProviderStep.ts"
import { providerOf } from "./Route.ts"
import { awaitsSettlement } from "../Transaction.ts"

/** A settlement that changed something and leaves a step for once its unit of work committed (a release to send). */
export interface AfterCommit<R> {
  readonly afterCommit: Effect.Effect<void, never, R>
}

export const whenSettled = <E, R, R2 = never>(
  candidate: Transaction,
  /**
   * Applies the provider's final word (`settled`, or `failed`: accepted, then not paid); `current`
   * still awaits settlement, with no call in doubt. Answers whether it changed anything, or, having
   * changed it, what is left to do once its unit of work committed (a capture's failure: its release).
   */
  settle: (order: Order, current: Transaction, at: string, outcome: "settled" | "failed") => Effect.Effect<boolean | AfterCommit<R2>, E, R>,
  /** The provider's word when the caller already has it (a test-mode simulation acting as the provider). */
  told?: "settled" | "failed"
) =>
  guarded(candidate.order_id, Effect.gen(function*() {
    if (candidate.provider_transaction_id === null) return false
    const provider = yield* providerOf(candidate)
    const state = told ?? (yield* provider.settlement(candidate.provider_transaction_id).pipe(
      Effect.catchTag("ProviderUnavailable", () => Effect.succeed("pending" as const))
    ))
    if (state === "pending") return false
    yield* checkpoint("settle", "before_record")
    const settled = yield* unitOfWork(Effect.gen(function*() {
      const order = yield* lockOrder(candidate.order_id)
      const current = yield* loadTxn(candidate.id)
      if (!awaitsSettlement(current)) return false
      return yield* settle(order, current, yield* nowIso, state)
    }))
    if (typeof settled === "boolean") return settled
    yield* settled.afterCommit
    return true
  }))
