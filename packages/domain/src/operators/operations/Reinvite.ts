/**
 * Operation: a new enrolment link (`tender operators reinvite NAME`): a lost authenticator or
 * password, or a disabled operator let back in. The old password and secret stop working and every
 * session ends, so whoever held them is out.
 */
import { Effect } from "effect"
import { nowIso } from "../../kernel/Time.ts"
import { ConsoleSessionRepo } from "../OperatorPorts.ts"
import { invitationOf, loadByName, newInvitation, save } from "./Load.ts"

export const reinvite = (name: string) =>
  Effect.gen(function*() {
    const operator = yield* loadByName(name)
    const { record, token } = yield* newInvitation(operator, yield* nowIso)
    const saved = yield* save(record)
    yield* (yield* ConsoleSessionRepo).removeForOperator(operator.id)
    return invitationOf(saved, token)
  })
