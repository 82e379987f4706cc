/** Operation: a new operator, invited (`tender operators add NAME --role R --accounts …`). */
import { Effect } from "effect"
import { invalidField } from "../../kernel/Errors.ts"
import { Ids } from "../../kernel/Ids.ts"
import { nowIso } from "../../kernel/Time.ts"
import * as Operator from "../Operator.ts"
import { OperatorRepo } from "../OperatorPorts.ts"
import { validateGrant } from "./Grant.ts"
import { invitationOf, newInvitation } from "./Load.ts"

export const add = (input: { readonly name: string; readonly role: Operator.OperatorRole; readonly accounts: Operator.AccountGrant }) =>
  Effect.gen(function*() {
    if (!Operator.isValidName(input.name)) return yield* invalidField("name", "must be 1 to 64 characters of a-z, 0-9, '.', '_', '@' and '-'")
    if (!Operator.isRole(input.role)) return yield* invalidField("role", `must be one of ${Operator.OPERATOR_ROLES.join(", ")}`)
    const accounts = yield* validateGrant(input.accounts)
    const at = yield* nowIso
    const blank = Operator.blank({ id: yield* (yield* Ids).make("operator"), name: input.name, role: input.role, accounts, at })
    const { record, token } = yield* newInvitation(blank, at)
    // The name's uniqueness is the repository's (Conflict): a check here would race another add.
    yield* (yield* OperatorRepo).insert(record)
    return invitationOf(record, token)
  })
