/**
 * Operation: log in with name, password and a current code. Every wrong answer is the same
 * `Refused` (an unknown or malformed name, a disabled or not yet enrolled operator, a wrong password,
 * a wrong or reused code), and each costs one scrypt, so neither the answer nor its time tells which
 * part was wrong or whether the name exists. An existing, active operator's failures are counted: at
 * LOCKOUT_THRESHOLD they are locked out (Operator.lockoutMs: 15 min, doubling per lock-out in a row).
 * While locked the password is still checked: only the right one hears `Locked` (the code is not
 * needed, nor checked), so a stranger cannot tell a locked name from any other; a wrong one is
 * `Refused` and counts, so guessing stays at LOCKOUT_THRESHOLD tries per lock-out.
 */
import { Clock, Effect, Option } from "effect"
import type { Conflict } from "../../kernel/Errors.ts"
import { isoOf } from "../../kernel/Time.ts"
import * as Operator from "../Operator.ts"
import { ConsoleSessionRepo, OperatorCredentials, OperatorRepo } from "../OperatorPorts.ts"
import type { LoginResult } from "../OperatorViews.ts"
import { save, viewOf } from "./Load.ts"

const REFUSED: LoginResult = { _tag: "Refused" }

/**
 * `decoy` is a hash no password matches in practice, verified when there is no hash to check, so an
 * unknown name costs the same scrypt time as a wrong password (the timing does not reveal names).
 */
export const login = (name: string, password: string, code: string, decoy: Effect.Effect<string>) =>
  Effect.gen(function*() {
    const credentials = yield* OperatorCredentials
    // A name no operator can have is never looked up (storage never sees a NUL), at the same cost.
    const found = Operator.isValidName(name) ? yield* (yield* OperatorRepo).findByName(name) : Option.none()
    const nowMs = yield* Clock.currentTimeMillis
    const operator = Option.getOrUndefined(found)
    if (operator === undefined || operator.status !== "active" || operator.password_hash === null) {
      yield* credentials.verifyPassword(password, yield* decoy)
      return REFUSED
    }
    const passwordOk = yield* credentials.verifyPassword(password, operator.password_hash)
    if (Operator.isLocked(operator, nowMs)) {
      if (passwordOk) return { _tag: "Locked", until: operator.locked_until! } as const
      return yield* failed(operator.id, nowMs)
    }
    const step = passwordOk ? yield* credentials.totpStep(operator.totp_secret, code, nowMs) : undefined
    if (step === undefined || !Operator.freshStep(operator, step)) return yield* failed(operator.id, nowMs)
    const now = isoOf(nowMs)
    // The version check makes the code single-use under concurrency too: of two logins with the same code, one saves.
    const saved = yield* Effect.result(
      save({ ...operator, failed_logins: 0, lockouts: 0, locked_until: null, last_totp_step: step, updated_at: now })
    )
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
 * race is retried a few times). Always `Refused`, even the failure that locks: only the right
 * password hears `Locked`.
 */
const failed = (operatorId: string, nowMs: number) =>
  Effect.gen(function*(): Effect.fn.Return<LoginResult, Conflict, OperatorRepo> {
    const current = yield* (yield* OperatorRepo).findById(operatorId)
    if (Option.isSome(current)) yield* save(Operator.afterFailedLogin(current.value, isoOf(nowMs)))
    return REFUSED
  }).pipe(
    Effect.retry({ times: 3 }),
    Effect.orElseSucceed((): LoginResult => REFUSED)
  )
