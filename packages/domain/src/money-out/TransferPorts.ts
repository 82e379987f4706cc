/**
 * Port: storage of transfer records (MoneyOut.ts `Transfer`). A transfer is one order (subtype
 * `transfer`) with one transaction; this repository keeps the record that carries its own status,
 * destination and next action. Calls inside `UnitOfWork.transaction` commit with the order's rows.
 */
import { Context, type Effect, type Option } from "effect"
import type { Conflict } from "../kernel/Errors.ts"
import type { Transfer } from "./MoneyOut.ts"
import type { Decided } from "../kernel/StateMachine.ts"

/** Port: where transfers are stored. */
export class TransferRepo extends Context.Service<TransferRepo, {
  /** Stores a new transfer. */
  insert(transfer: Transfer): Effect.Effect<void>
  /** The account's transfer with this id; another account's is none. */
  find(accountId: string, id: string): Effect.Effect<Option.Option<Transfer>>
  /** Operator access (CLI): any account. */
  findAny(id: string): Effect.Effect<Option.Option<Transfer>>
  /** The transfer of an order (one per transfer order). */
  findByOrder(orderId: string): Effect.Effect<Option.Option<Transfer>>
  /** Writes `next` when the stored version is `next.version - 1`; otherwise `Conflict`. */
  update(next: Decided<Transfer>): Effect.Effect<void, Conflict>
}>()("@tender/domain/TransferRepo") {}
