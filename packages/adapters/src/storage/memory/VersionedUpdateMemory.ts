/**
 * The memory twin of `postgres/VersionedUpdate.ts`: a row lands only over the version before it,
 * and only in the account that owns it; anything else is a lost race, the domain's `Conflict`.
 */
import type { Errors } from "@tender/domain"
import { Result } from "effect"
import { staleWrite } from "../Conflicts.ts"
import type { Table, Writer } from "./MemoryDatabase.ts"

interface Owned {
  readonly id: string
  readonly account_id: string
  readonly version: number
}

/**
 * Writes `next` over its stored version. `reindex` sees the row being replaced before `next` lands,
 * so a repository can move its secondary indexes in the same atomic write.
 */
export const write = <A extends Owned>(
  db: Writer,
  rows: Table<string, A>,
  what: string,
  next: A,
  reindex?: (current: A) => void
): Result.Result<void, Errors.Conflict> => {
  const current = db.get(rows).get(next.id)
  if (current === undefined || current.account_id !== next.account_id || current.version !== next.version - 1) {
    return Result.fail(staleWrite(what, next.id, next.version - 1))
  }
  reindex?.(current)
  db.mutable(rows).set(next.id, next)
  return Result.succeed(undefined)
}
