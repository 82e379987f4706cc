/** What the operators' operations share: loading by name, saving a new version, the view, the invitation. */
import { Effect, Option } from "effect"
import { NotFound } from "../../kernel/Errors.ts"
import { OperatorCredentials, OperatorRepo } from "../OperatorPorts.ts"
import type { OperatorRecord } from "../Operator.ts"
import * as Operator from "../Operator.ts"
import type { Invitation, OperatorView } from "../OperatorViews.ts"

/** The operator as shown: never the password hash, TOTP secret or token hashes. */
export const viewOf = (operator: OperatorRecord): OperatorView => ({
  id: operator.id,
  name: operator.name,
  role: operator.role,
  accounts: operator.accounts,
  status: operator.status,
  locked_until: operator.locked_until,
  created_at: operator.created_at
})

export const loadByName = (name: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* OperatorRepo).findByName(name)
    if (Option.isNone(found)) return yield* new NotFound({ message: `No operator named ${name}` })
    return found.value
  })

/** Writes `next` as the version after the one it was read at (Conflict when someone wrote in between). */
export const save = (next: OperatorRecord) =>
  Effect.gen(function*() {
    const written = { ...next, version: next.version + 1 }
    yield* (yield* OperatorRepo).update(written)
    return written
  })

/**
 * A fresh authenticator secret and enrolment link for `operator` (Operator.invited): the token is
 * returned once, only its hash is stored.
 */
export const newInvitation = (operator: OperatorRecord, at: string) =>
  Effect.gen(function*() {
    const credentials = yield* OperatorCredentials
    const token = yield* credentials.newToken()
    const record = Operator.invited(operator, {
      totp_secret: yield* credentials.newTotpSecret(),
      enrolment_token_hash: yield* credentials.hashToken(token),
      at
    })
    return { record, token }
  })

export const invitationOf = (record: OperatorRecord, token: string): Invitation => ({
  operator: viewOf(record),
  enrolment_token: token,
  expires_at: record.enrolment_expires_at!
})
