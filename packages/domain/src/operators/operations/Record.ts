/** Operation: append one console action to the audit log (who, what, which object, how it ended). */
import { Effect } from "effect"
import { Ids } from "../../kernel/Ids.ts"
import { nowIso } from "../../kernel/Time.ts"
import type { AuditEntry } from "../Operator.ts"
import { AuditLog } from "../OperatorPorts.ts"
import type { AuditInput } from "../OperatorViews.ts"

export const record = (input: AuditInput) =>
  Effect.gen(function*() {
    const entry: AuditEntry = {
      id: yield* (yield* Ids).make("auditEntry"),
      at: yield* nowIso,
      operator_id: input.operator.id,
      operator_name: input.operator.name,
      action: input.action,
      target: input.target,
      account_id: input.account_id,
      outcome: input.outcome,
      detail: input.detail
    }
    yield* (yield* AuditLog).append(entry)
    return entry
  })
