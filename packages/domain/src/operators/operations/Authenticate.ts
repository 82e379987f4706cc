/**
 * Operation: the session behind a console cookie. Alive while it exists (logout and disable remove
 * it), has not run out (Operator.sessionExpired: idle or absolute) and its operator is active; an
 * expired session is removed. The idle clock restarts at most once a minute (SESSION_TOUCH_MS).
 */
import { Clock, Effect, Option } from "effect"
import { isoOf } from "../../kernel/Time.ts"
import * as Operator from "../Operator.ts"
import { ConsoleSessionRepo, OperatorCredentials, OperatorRepo } from "../OperatorPorts.ts"
import { viewOf } from "./Load.ts"

export const authenticate = (sessionToken: string) =>
  Effect.gen(function*() {
    const sessions = yield* ConsoleSessionRepo
    const hash = yield* (yield* OperatorCredentials).hashToken(sessionToken)
    const found = yield* sessions.find(hash)
    if (Option.isNone(found)) return Option.none()
    const nowMs = yield* Clock.currentTimeMillis
    let session = found.value
    if (Operator.sessionExpired(session, nowMs)) {
      yield* sessions.remove(hash)
      return Option.none()
    }
    const operator = yield* (yield* OperatorRepo).findById(session.operator_id)
    if (Option.isNone(operator) || operator.value.status !== "active") return Option.none()
    if (nowMs - Date.parse(session.last_seen_at) >= Operator.SESSION_TOUCH_MS) {
      session = { ...session, last_seen_at: isoOf(nowMs) }
      yield* sessions.touch(hash, session.last_seen_at)
    }
    return Option.some({ operator: viewOf(operator.value), session })
  })
