/** Operation: change an operator's role (`tender operators role NAME --role R`); it applies from their next request. */
import { Effect } from "effect"
import { nowIso } from "../../kernel/Time.ts"
import type { OperatorRole } from "../Operator.ts"
import { loadByName, save, viewOf } from "./Load.ts"

export const setRole = (name: string, role: OperatorRole) =>
  Effect.gen(function*() {
    const operator = yield* loadByName(name)
    return viewOf(yield* save({ ...operator, role, updated_at: yield* nowIso }))
  })
