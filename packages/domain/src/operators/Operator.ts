/**
 * Console operators (issue 26): people who use the operator console at `/console`. An operator is
 * created by `tender operators add NAME --role …`, which prints a one-time enrolment link; enrolment
 * sets a password (stored as a slow hash) and confirms a TOTP authenticator. Login takes name,
 * password and a current TOTP code.
 *
 * Pure data and decisions only: roles and what each may do, the lock-out rule, the session timeouts.
 * Hashing, TOTP and randomness are a port (OperatorCredentials), storage is ports (OperatorPorts.ts).
 */
import { define, type Machine, step as nextStatus } from "../kernel/StateMachine.ts"

/** The roles an operator may hold, least to most allowed. */
export const OPERATOR_ROLES = ["viewer", "operator", "admin"] as const
/** What an operator may do: viewer reads; operator also moves money and redelivers; admin also endpoints and accounts. */
export type OperatorRole = (typeof OPERATOR_ROLES)[number]

/** An operator's statuses, in table order (OperatorMachine). */
export const OPERATOR_STATUSES = ["invited", "active", "disabled"] as const
/** invited (link outstanding), active (may log in) or disabled. */
export type OperatorStatus = (typeof OPERATOR_STATUSES)[number]

/** The moves of an operator's status: enrolment, and the CLI's disable and reinvite. */
export type OperatorTrigger = "enrol" | "disable" | "reinvite"

/** An operator's status table (docs/state-machines.md): invited until enrolled; disabled until reinvited. */
export const OperatorMachine: Machine<OperatorStatus, OperatorTrigger> = define({
  name: "Console operator",
  states: OPERATOR_STATUSES,
  finals: [],
  transitions: [
    { from: ["invited"], trigger: "enrol", to: "active", when: "the enrolment link's form: a password, and a current code of the shown secret" },
    { from: ["invited", "active"], trigger: "disable", to: "disabled", when: "`tender operators disable`: every session ends, an open link stops working" },
    {
      from: ["invited", "active", "disabled"],
      trigger: "reinvite",
      to: "invited",
      when: "`tender operators reinvite`: a new link; the old password, authenticator and sessions stop working"
    }
  ]
})

/**
 * The record after `trigger` with `changes`, or undefined when the table has no such move. The
 * version stays: the operators' `save` writes the next one (a checked update).
 */
export const moved = (
  operator: OperatorRecord,
  trigger: OperatorTrigger,
  at: string,
  changes: Partial<Omit<OperatorRecord, "status" | "version" | "updated_at">> = {}
): OperatorRecord | undefined => {
  const status = nextStatus(OperatorMachine, operator.status, trigger)
  return status === undefined ? undefined : { ...operator, ...changes, status, updated_at: at }
}

/** The accounts an operator may see and act on: a list of account ids, or every account ("all"). */
export type AccountGrant = ReadonlyArray<string> | "all"

/** An operator as stored: identity, role, grant, credentials (hashed or sealed) and lock-out state. */
export interface OperatorRecord {
  /** `op_…` */
  readonly id: string
  /** Unique login name: 1–64 characters of `a-z 0-9 . _ @ -` (lower case). */
  readonly name: string
  readonly role: OperatorRole
  readonly accounts: AccountGrant
  readonly status: OperatorStatus
  /** The adapter's slow hash (scrypt), null until enrolled. */
  readonly password_hash: string | null
  /** Base32 TOTP secret, made at `add` (shown on the enrolment page); sealed at rest by the PostgreSQL adapter. */
  readonly totp_secret: string
  /** The TOTP time step last accepted: a code is accepted once (no replay inside its 30 s window). */
  readonly last_totp_step: number | null
  /** SHA-256 (hex) of the one-time enrolment token while one is outstanding. */
  readonly enrolment_token_hash: string | null
  readonly enrolment_expires_at: string | null
  /** Consecutive failed logins since the last success or lock-out. */
  readonly failed_logins: number
  /** Lock-outs in a row since the last successful login: each locks twice as long (lockoutMs). */
  readonly lockouts: number
  readonly locked_until: string | null
  readonly created_at: string
  readonly updated_at: string
  readonly version: number
}

/** Every action the console offers; each is recorded in the audit log. */
export const CONSOLE_ACTIONS = [
  "capture",
  "void",
  "refund",
  "redeliver_event",
  "disable_webhook_endpoint",
  "suspend_account",
  "activate_account"
] as const
/** One of CONSOLE_ACTIONS. */
export type ConsoleAction = (typeof CONSOLE_ACTIONS)[number]

/** viewer: reads only; operator: money and delivery actions; admin: also endpoints and accounts. */
const ALLOWED: Readonly<Record<OperatorRole, ReadonlySet<ConsoleAction>>> = {
  viewer: new Set(),
  operator: new Set(["capture", "void", "refund", "redeliver_event"]),
  admin: new Set(CONSOLE_ACTIONS)
}

/** Whether the role may take the action (whatever the page showed, the server asks this). */
export const mayAct = (role: OperatorRole, action: ConsoleAction): boolean => ALLOWED[role].has(action)

/** Whether the grant covers the account. */
export const isGranted = (grant: AccountGrant, accountId: string): boolean => grant === "all" || grant.includes(accountId)

/** Failed logins that lock an operator out, and for how long the first time. */
export const LOCKOUT_THRESHOLD = 5
/** The first lock-out's length; each lock-out in a row doubles it (lockoutMs). */
export const LOCKOUT_MS = 15 * 60 * 1000
/** The longest lock-out: the doubling stops here. */
export const LOCKOUT_MAX_MS = 24 * 60 * 60 * 1000

/**
 * How long the lock-out after `lockouts` earlier ones in a row lasts: 15 min, 30, 60… up to 24 h,
 * so that guessing slows from 5 tries per 15 minutes to about 5 a day, until a login succeeds.
 */
export const lockoutMs = (lockouts: number): number => Math.min(LOCKOUT_MS * 2 ** Math.min(lockouts, 16), LOCKOUT_MAX_MS)

/** A console session ends after this long without a request, and in any case this long after login. */
export const SESSION_IDLE_MS = 30 * 60 * 1000
/** A session's whole life, however busy. */
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60 * 1000

/** An enrolment link is good for this long. */
export const ENROLMENT_TTL_MS = 24 * 60 * 60 * 1000

/** Whether the operator is locked out at `nowMs`. */
export const isLocked = (operator: OperatorRecord, nowMs: number): boolean =>
  operator.locked_until !== null && Date.parse(operator.locked_until) > nowMs

/**
 * The record after one more failed login: at the threshold it is locked (for lockoutMs of the
 * lock-outs so far) and the count starts over.
 */
export const afterFailedLogin = (operator: OperatorRecord, at: string): OperatorRecord => {
  const failed = operator.failed_logins + 1
  return failed >= LOCKOUT_THRESHOLD
    ? {
      ...operator,
      failed_logins: 0,
      lockouts: operator.lockouts + 1,
      locked_until: new Date(Date.parse(at) + lockoutMs(operator.lockouts)).toISOString(),
      updated_at: at
    }
    : { ...operator, failed_logins: failed, updated_at: at }
}

/** One login session (its token is given to the browser in a cookie; only its hash is stored). */
export interface ConsoleSession {
  /** SHA-256 (hex) of the session token. */
  readonly token_hash: string
  readonly operator_id: string
  /** The session's CSRF token, sent back by every form the console renders. */
  readonly csrf_token: string
  readonly created_at: string
  readonly last_seen_at: string
}

/** Whether the session ran out at `nowMs`: idle too long, or past its whole life. */
export const sessionExpired = (session: ConsoleSession, nowMs: number): boolean =>
  nowMs - Date.parse(session.last_seen_at) > SESSION_IDLE_MS || nowMs - Date.parse(session.created_at) > SESSION_ABSOLUTE_MS

/** `sessionExpired` as bounds a storage sweep compares against: a session seen or made before them has expired at `nowMs`. */
export const expiredBefore = (nowMs: number): { readonly lastSeenBefore: string; readonly createdBefore: string } => ({
  lastSeenBefore: new Date(nowMs - SESSION_IDLE_MS).toISOString(),
  createdBefore: new Date(nowMs - SESSION_ABSOLUTE_MS).toISOString()
})

/** One line of the audit log: who did what to which object, when, and how it ended. */
export interface AuditEntry {
  /** `aud_…` */
  readonly id: string
  readonly at: string
  readonly operator_id: string
  readonly operator_name: string
  readonly action: ConsoleAction
  /** The object acted on: an order, event, webhook endpoint or account id. */
  readonly target: string
  /** The account the target belongs to. */
  readonly account_id: string | null
  readonly outcome: "succeeded" | "failed"
  /** What was asked and what came of it: "capture 10.00 USD (final)", or the error code and message. */
  readonly detail: string
}

/** Login names: 1–64 characters of `a-z 0-9 . _ @ -` (lower case, so `Ann` and `ann` are not two people). */
export const NAME_PATTERN = /^[a-z0-9._@-]{1,64}$/
/** Whether the name is a valid login name (NAME_PATTERN). */
export const isValidName = (name: string): boolean => NAME_PATTERN.test(name)

/** The shortest password taken: long enough to resist guessing (PASSWORD_MAX keeps hashing it cheap). */
export const PASSWORD_MIN = 12
/** The longest password taken. */
export const PASSWORD_MAX = 200

/** Whether the text names a role. */
export const isRole = (role: string): role is OperatorRole => (OPERATOR_ROLES as ReadonlyArray<string>).includes(role)

/** An enrolment link is open: the operator is invited, the token is theirs, and it has not expired. */
export const enrolmentOpen = (operator: OperatorRecord, tokenHash: string, nowMs: number): boolean =>
  operator.status === "invited" &&
  operator.enrolment_token_hash === tokenHash &&
  operator.enrolment_expires_at !== null &&
  Date.parse(operator.enrolment_expires_at) > nowMs

/** A new operator's record before its first invitation (`invited` gives it its secret and link). */
export const blank = (fields: {
  readonly id: string
  readonly name: string
  readonly role: OperatorRole
  readonly accounts: AccountGrant
  readonly at: string
}): OperatorRecord => ({
  id: fields.id,
  name: fields.name,
  role: fields.role,
  accounts: fields.accounts,
  status: "invited",
  password_hash: null,
  totp_secret: "",
  last_totp_step: null,
  enrolment_token_hash: null,
  enrolment_expires_at: null,
  failed_logins: 0,
  lockouts: 0,
  locked_until: null,
  created_at: fields.at,
  updated_at: fields.at,
  version: 1
})

/**
 * The record after a (re)invitation: a fresh authenticator secret and link; the old password, code
 * history and lock-out no longer apply (the person starts over, as on their first day).
 */
export const invited = (
  operator: OperatorRecord,
  change: { readonly totp_secret: string; readonly enrolment_token_hash: string; readonly at: string }
): OperatorRecord => ({
  ...operator,
  status: "invited",
  password_hash: null,
  totp_secret: change.totp_secret,
  last_totp_step: null,
  enrolment_token_hash: change.enrolment_token_hash,
  enrolment_expires_at: new Date(Date.parse(change.at) + ENROLMENT_TTL_MS).toISOString(),
  failed_logins: 0,
  lockouts: 0,
  locked_until: null,
  updated_at: change.at
})

/** A TOTP step is accepted once: a code seen at a step not after the last accepted one is a replay. */
export const freshStep = (operator: OperatorRecord, step: number): boolean =>
  operator.last_totp_step === null || step > operator.last_totp_step

/** A session is touched (its idle clock restarted) at most this often, so reads do not write on every request. */
export const SESSION_TOUCH_MS = 60 * 1000
