/**
 * Operation: log in with name, password and a current code. Every wrong answer is the same
 * `Refused` (an unknown name, a disabled or not yet enrolled operator, a wrong password, a wrong or
 * reused code), so the answer does not tell which part was wrong. An existing, active operator's
 * failures are counted: at LOCKOUT_THRESHOLD they are locked out for LOCKOUT_MS, and while locked
 * nothing is checked — not even right credentials get in.
 */
import { Clock, Effect, Option } from "effect"
import type { Conflict } from "../../kernel/Errors.ts"
import { isoOf } from "../../kernel/Time.ts"
import * as Operator from "../Operator.ts"
import { ConsoleSessionRepo, OperatorCredentials, OperatorRepo } from "../OperatorPorts.ts"
import type { LoginResult } from "../Operators.ts"
import { save, viewOf } from "./Load.ts"

const REFUSED: LoginResult = { _tag: "Refused" }

/**
 * `decoy` is a hash no password matches in practice, verified when there is no hash to check, so an
 * unknown name costs the same scrypt time as a wrong password (the timing does not reveal names).
 */
export const login = (name: string, password: string, code: string, decoy: Effect.Effect<string>) =>
  Effect.gen(function*() {
    const credentials = yield* OperatorCredentials
    const repo = yield* OperatorRepo
    const found = yield* repo.findByName(name)
    const nowMs = yield* Clock.currentTimeMillis
    const operator = Option.getOrUndefined(found)
    if (operator !== undefined && Operator.isLocked(operator, nowMs)) return { _tag: "Locked", until: operator.locked_until! } as const
    if (operator === undefined || operator.status !== "active" || operator.password_hash === null) {
      yield* credentials.verifyPassword(password, yield* decoy)
      return REFUSED
    }
    const passwordOk = yield* credentials.verifyPassword(password, operator.password_hash)
    const step = passwordOk ? yield* credentials.totpStep(operator.totp_secret, code, nowMs) : undefined
    if (step === undefined || !Operator.freshStep(operator, step)) return yield* failed(operator.id, nowMs)
    const now = isoOf(nowMs)
    // The version check makes the code single-use under concurrency too: of two logins with the same code, one saves.
    const saved = yield* Effect.result(save({ ...operator, failed_logins: 0, locked_until: null, last_totp_step: step, updated_at: now }))
    if (saved._tag === "Failure") return REFUSED
    const sessionToken = yield* credentials.newToken()
    const session: Operator.ConsoleSession = {
      token_hash: yield* credentials.hashToken(sessionToken),
      operator_id: operator.id,
      csrf_token: yield* credentials.newToken(),
      created_at: now,
      last_seen_at: now
    }
    yield* (yield* ConsoleSessionRepo).insert(session)
    return { _tag: "LoggedIn", operator: viewOf(saved.success), session_token: sessionToken, session } as const
  })

/**
 * Counts one failure on the stored record (reloaded, so concurrent failures each count; a lost
 * race is retried a few times). The failure that reaches the threshold answers Locked.
 */
const failed = (operatorId: string, nowMs: number) =>
  Effect.gen(function*(): Effect.fn.Return<LoginResult, Conflict, OperatorRepo> {
    const current = yield* (yield* OperatorRepo).findById(operatorId)
    if (Option.isNone(current)) return REFUSED
    const next = yield* save(Operator.afterFailedLogin(current.value, isoOf(nowMs)))
    return next.locked_until !== null && Operator.isLocked(next, nowMs) ? { _tag: "Locked", until: next.locked_until } as const : REFUSED
  }).pipe(
    Effect.retry({ times: 3 }),
    Effect.orElseSucceed((): LoginResult => REFUSED)
  )
