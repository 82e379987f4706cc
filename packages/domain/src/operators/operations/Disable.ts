/** Operation: disable an operator (`tender operators disable NAME`): no more logins, and every session ends now. */
import { Effect } from "effect"
import { Conflict } from "../../kernel/Errors.ts"
import { nowIso } from "../../kernel/Time.ts"
import * as Operator from "../Operator.ts"
import { ConsoleSessionRepo } from "../OperatorPorts.ts"
import { loadByName, save, viewOf } from "./Load.ts"

export const disable = (name: string) =>
  Effect.gen(function*() {
    const operator = yield* loadByName(name)
    // An outstanding enrolment link would otherwise still let them in.
    const next = Operator.moved(operator, "disable", yield* nowIso, { enrolment_token_hash: null, enrolment_expires_at: null })
    if (next === undefined) return yield* new Conflict({ message: `Operator ${name} is already disabled` })
    const saved = yield* save(next)
    yield* (yield* ConsoleSessionRepo).removeForOperator(operator.id)
    return viewOf(saved)
  })
