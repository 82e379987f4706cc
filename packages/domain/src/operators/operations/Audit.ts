/**
 * Operation: a page of the audit log, newest first (`tender audit list`, the console's audit page),
 * optionally one operator's entries and only the accounts a grant covers. A name that is no
 * operator's is an empty page, not a refusal: the answer must not tell which names exist (any
 * console reader could list the operators by trying names), and a malformed one is never looked up.
 */
import { Effect, Option } from "effect"
import { decodeInput, pageOf, type SearchResult } from "../../kernel/Search.ts"
import { isValidName } from "../Operator.ts"
import { AuditLog, OperatorRepo } from "../OperatorPorts.ts"
import type { AuditListInput } from "../OperatorViews.ts"

const NOTHING: SearchResult<never> = { data: [], has_more: false, next_cursor: null }

export const audit = (input: AuditListInput) =>
  Effect.gen(function*() {
    const { limit, cursor } = yield* decodeInput({ limit: input.limit, cursor: input.cursor })
    let operatorId: string | undefined
    if (input.operator !== undefined) {
      if (!isValidName(input.operator)) return NOTHING
      const found = yield* (yield* OperatorRepo).findByName(input.operator)
      if (Option.isNone(found)) return NOTHING
      operatorId = found.value.id
    }
    const accounts = input.accounts === undefined || input.accounts === "all" ? undefined : input.accounts
    const rows = yield* (yield* AuditLog).list({ operator_id: operatorId, accounts, limit, cursor })
    return pageOf(rows, rows.data.map(({ created_at: _, ...entry }) => entry))
  })
