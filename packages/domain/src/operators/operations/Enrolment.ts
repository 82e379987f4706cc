/** Operation: the enrolment page's facts — whose link this is and the authenticator secret to show. */
import { Clock, Effect, Option } from "effect"
import * as Operator from "../Operator.ts"
import { OperatorCredentials, OperatorRepo } from "../OperatorPorts.ts"
import { viewOf } from "./Load.ts"

/** The invited operator whose open enrolment link this token is (Operator.enrolmentOpen), if any. */
export const openEnrolment = (token: string) =>
  Effect.gen(function*() {
    const hash = yield* (yield* OperatorCredentials).hashToken(token)
    const found = yield* (yield* OperatorRepo).findByEnrolmentToken(hash)
    const now = yield* Clock.currentTimeMillis
    return Option.filter(found, (operator) => Operator.enrolmentOpen(operator, hash, now))
  })

export const enrolment = (token: string) =>
  Effect.map(openEnrolment(token), Option.map((operator) => ({ operator: viewOf(operator), totp_secret: operator.totp_secret })))
