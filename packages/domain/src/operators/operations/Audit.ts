/**
 * Operation: a page of the audit log, newest first (`tender audit list`, the console's audit page),
 * optionally one operator's entries and only the accounts a grant covers.
 */
import { Effect, Option } from "effect"
import { invalidField } from "../../kernel/Errors.ts"
import { decodeInput, pageOf } from "../../kernel/Search.ts"
import { AuditLog, OperatorRepo } from "../OperatorPorts.ts"
import type { AuditListInput } from "../Operators.ts"

export const audit = (input: AuditListInput) =>
  Effect.gen(function*() {
    const { limit, cursor } = yield* decodeInput({ limit: input.limit, cursor: input.cursor })
    let operatorId: string | undefined
    if (input.operator !== undefined) {
      const found = yield* (yield* OperatorRepo).findByName(input.operator)
      if (Option.isNone(found)) return yield* invalidField("operator", `names no operator ${input.operator}`)
      operatorId = found.value.id
    }
    const accounts = input.accounts === undefined || input.accounts === "all" ? undefined : input.accounts
    const rows = yield* (yield* AuditLog).list({ operator_id: operatorId, accounts, limit, cursor })
    return pageOf(rows, rows.data.map(({ created_at: _, ...entry }) => entry))
  })
