/**
 * Operation: finish enrolment — set the password once a current code of the shown secret proves the
 * authenticator holds it. The link is spent; the code's step counts as used (Operator.freshStep).
 */
import { Clock, Effect, Option } from "effect"
import { invalidField, NotFound } from "../../kernel/Errors.ts"
import { isoOf } from "../../kernel/Time.ts"
import * as Operator from "../Operator.ts"
import { OperatorCredentials } from "../OperatorPorts.ts"
import { openEnrolment } from "./Enrolment.ts"
import { save, viewOf } from "./Load.ts"

export const enrol = (token: string, password: string, code: string) =>
  Effect.gen(function*() {
    const found = yield* openEnrolment(token)
    if (Option.isNone(found)) return yield* new NotFound({ message: "This enrolment link is unknown, used or expired" })
    const operator = found.value
    if (password.length < Operator.PASSWORD_MIN || password.length > Operator.PASSWORD_MAX) {
      return yield* invalidField("password", `must be ${Operator.PASSWORD_MIN} to ${Operator.PASSWORD_MAX} characters`)
    }
    const credentials = yield* OperatorCredentials
    const now = yield* Clock.currentTimeMillis
    const step = yield* credentials.totpStep(operator.totp_secret, code, now)
    if (step === undefined) return yield* invalidField("code", "is not the authenticator's current code")
    const next = Operator.moved(operator, "enrol", isoOf(now), {
      password_hash: yield* credentials.hashPassword(password),
      last_totp_step: step,
      enrolment_token_hash: null,
      enrolment_expires_at: null
    })
    // openEnrolment found it invited; a record the table will not move is no open link either.
    if (next === undefined) return yield* new NotFound({ message: "This enrolment link is unknown, used or expired" })
    const saved = yield* save(next)
    return viewOf(saved)
  })
