/** What the Operators use case takes and answers (Operators.ts): views without secrets, invitations, login results, audit inputs. */
import type { AccountGrant, ConsoleAction, ConsoleSession, OperatorRole, OperatorStatus } from "./Operator.ts"

/** An operator as shown (CLI, console): never the password hash, TOTP secret or token hashes. */
export interface OperatorView {
  readonly id: string
  readonly name: string
  readonly role: OperatorRole
  readonly accounts: AccountGrant
  readonly status: OperatorStatus
  readonly locked_until: string | null
  readonly created_at: string
}

/** What `add` and `reinvite` return: the one-time token of the enrolment link (`/console/enrol/<token>`). */
export interface Invitation {
  readonly operator: OperatorView
  readonly enrolment_token: string
  readonly expires_at: string
}

/** How a login ended. */
export type LoginResult =
  | { readonly _tag: "LoggedIn"; readonly operator: OperatorView; readonly session_token: string; readonly session: ConsoleSession }
  /** Name, password or code wrong (one answer for all three, so a name cannot be probed). */
  | { readonly _tag: "Refused" }
  /** Too many failures: no login until `until`, even with the right credentials. */
  | { readonly _tag: "Locked"; readonly until: string }

/** One audit entry to record: who, what, on which object of which account, and how it ended. */
export interface AuditInput {
  readonly operator: OperatorView
  readonly action: ConsoleAction
  readonly target: string
  readonly account_id: string | null
  readonly outcome: "succeeded" | "failed"
  readonly detail: string
}

/** A page of the audit log as a caller asks for it (not yet validated). */
export interface AuditListInput {
  /** An operator's name: only their entries. */
  readonly operator?: string | undefined
  /** Only entries of the accounts this grant covers. */
  readonly accounts?: AccountGrant | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}
