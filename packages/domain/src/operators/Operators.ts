/**
 * The Operators use case (issue 26): console operators, their enrolment, login sessions and the
 * audit log. A facade over operations/*; the CLI (`tender operators …`, `tender audit list`) and the
 * console (packages/http/src/console) call it.
 */
import { Context, Effect, Layer, type Option } from "effect"
import { AccountRepo } from "../accounts/AccountPorts.ts"
import type { Conflict, NotFound, ValidationFailed } from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import type { SearchResult } from "../kernel/Search.ts"
import { seam } from "../kernel/Seam.ts"
import { AuditLog, ConsoleSessionRepo, OperatorCredentials, OperatorRepo } from "./OperatorPorts.ts"
import { add } from "./operations/Add.ts"
import { audit } from "./operations/Audit.ts"
import { authenticate } from "./operations/Authenticate.ts"
import { disable } from "./operations/Disable.ts"
import { enrol } from "./operations/Enrol.ts"
import { enrolment } from "./operations/Enrolment.ts"
import { grant } from "./operations/Grant.ts"
import { list } from "./operations/List.ts"
import { login } from "./operations/Login.ts"
import { logout } from "./operations/Logout.ts"
import { record } from "./operations/Record.ts"
import { reinvite } from "./operations/Reinvite.ts"
import { setRole } from "./operations/SetRole.ts"
import type { AccountGrant, AuditEntry, ConsoleSession, OperatorRole } from "./Operator.ts"
import type { AuditInput, AuditListInput, Invitation, LoginResult, OperatorView } from "./OperatorViews.ts"

export type { AuditInput, AuditListInput, Invitation, LoginResult, OperatorView } from "./OperatorViews.ts"

/** The Operators use case: console operators, enrolment, login sessions and the audit log. */
export class Operators extends Context.Service<Operators, {
  /** A new operator, invited: name 1–64 of `a-z0-9._@-`; every granted account must exist. */
  add(input: { readonly name: string; readonly role: OperatorRole; readonly accounts: AccountGrant }): Effect.Effect<Invitation, ValidationFailed | Conflict>
  /** A new enrolment link: the old password and authenticator stop working, and every session ends. */
  reinvite(name: string): Effect.Effect<Invitation, NotFound | Conflict>
  /** Replaces the operator's account grant. */
  grant(name: string, accounts: AccountGrant): Effect.Effect<OperatorView, NotFound | ValidationFailed | Conflict>
  /** Changes the operator's role. */
  setRole(name: string, role: OperatorRole): Effect.Effect<OperatorView, NotFound | Conflict>
  /** Disables the operator and ends their sessions. */
  disable(name: string): Effect.Effect<OperatorView, NotFound | Conflict>
  /** Every operator, by name. */
  list(): Effect.Effect<ReadonlyArray<OperatorView>>
  /** The operator an outstanding, unexpired enrolment token belongs to, with the TOTP secret to show. */
  enrolment(token: string): Effect.Effect<Option.Option<{ readonly operator: OperatorView; readonly totp_secret: string }>>
  /**
   * Completes enrolment: sets the password (at least 12 characters, at most 200) once a current code
   * of the shown secret confirms the authenticator; the token is spent. ValidationFailed names
   * `password` or `code`; NotFound when the token is not outstanding.
   */
  enrol(token: string, password: string, code: string): Effect.Effect<OperatorView, ValidationFailed | NotFound | Conflict>
  /** Checks name, password and code; counts failures (LOCKOUT_THRESHOLD → locked LOCKOUT_MS). */
  login(name: string, password: string, code: string): Effect.Effect<LoginResult>
  /** The live session of this token, and its operator (still active); touches the session. */
  authenticate(sessionToken: string): Effect.Effect<Option.Option<{ readonly operator: OperatorView; readonly session: ConsoleSession }>>
  /** Ends the session of this token (its cookie then opens nothing). */
  logout(sessionToken: string): Effect.Effect<void>
  /** Appends one entry to the audit log. */
  record(input: AuditInput): Effect.Effect<AuditEntry>
  /** A page of the audit log, newest first. */
  audit(input: AuditListInput): Effect.Effect<SearchResult<AuditEntry>, ValidationFailed>
}>()("@tender/domain/operators/Operators") {
  static readonly layer = Layer.effect(
    Operators,
    Effect.gen(function*() {
      const run = yield* seam<OperatorRepo | ConsoleSessionRepo | AuditLog | OperatorCredentials | AccountRepo | Ids>()
      const credentials = yield* OperatorCredentials
      // Hashed on the first login of an unknown name, then kept (operations/Login.ts: equal timing).
      const decoy = yield* Effect.cached(Effect.flatMap(credentials.newToken(), (token) => credentials.hashPassword(token)))

      return Operators.of({
        add: (input) => run(add(input)),
        reinvite: (name) => run(reinvite(name)),
        grant: (name, accounts) => run(grant(name, accounts)),
        setRole: (name, role) => run(setRole(name, role)),
        disable: (name) => run(disable(name)),
        list: () => run(list),
        enrolment: (token) => run(enrolment(token)),
        enrol: (token, password, code) => run(enrol(token, password, code)),
        login: (name, password, code) => run(login(name, password, code, decoy)),
        authenticate: (token) => run(authenticate(token)),
        logout: (token) => run(logout(token)),
        record: (input) => run(record(input)),
        audit: (input) => run(audit(input))
      })
    })
  )
}
