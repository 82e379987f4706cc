/**
 * The sandbox provider's own log of the calls it applied, keyed by idempotency key: it stands for a
 * real provider's records, so it outlives a crash of Tender and answers `lookup` truthfully. It is
 * the provider's store, not Tender's: implementations write with their own autocommit statements,
 * outside Tender's unit of work (a rollback of ours cannot undo what the provider did), unless one
 * that `joinsUnitOfWork` is asked to (ProviderRecordsInUnitOfWork): then both commit together.
 */
import type { AuthorizeResult, CaptureResult, PayoutResult, StartResult, VoidResult } from "@tender/domain"
import { Context, type Effect } from "effect"

/** What each mutating call answers. */
export interface Results {
  readonly authorize: AuthorizeResult
  readonly capture: CaptureResult
  readonly void: VoidResult
  readonly start: StartResult
  readonly refund: PayoutResult
  readonly payout: PayoutResult
}

export type Operation = keyof Results

/** A call the sandbox applied: its answer, replayed to every retry with the same key. */
export type Applied = {
  readonly [K in Operation]: {
    readonly _tag: "Applied"
    readonly operation: K
    /** Our reference the call carried (a transaction id): who the call was for. */
    readonly order_reference: string
    readonly result: Results[K]
  }
}[Operation]

/** A key that `lookup` found unused: it can never be applied afterwards. */
export interface Fenced { readonly _tag: "Fenced" }

export type Entry = Applied | Fenced

export const FENCED: Fenced = { _tag: "Fenced" }

export class SandboxLedger extends Context.Service<SandboxLedger, {
  /**
   * Stores `entry` under `key` unless the key already holds one, and returns what the key holds
   * afterwards: `entry` when it won, else the first writer's. Atomic across processes, so two
   * calls racing one key (or a call racing a lookup) agree on one outcome.
   */
  claim(key: string, entry: Entry): Effect.Effect<Entry>
  /**
   * The ledger lives in Tender's own database and writes inside Tender's transaction while
   * ProviderRecordsInUnitOfWork is set: the sandbox over it can answer in Tender's unit of work.
   */
  readonly joinsUnitOfWork: boolean
}>()("@tender/adapters/SandboxLedger") {}
