/** Ports of the operator console's access and audit (issue 26): storage, and the credential primitives. */
import { Context, type Effect, type Option } from "effect"
import type { Conflict } from "../kernel/Errors.ts"
import type { Page } from "../kernel/Search.ts"
import type { AuditEntry, ConsoleSession, OperatorRecord } from "./Operator.ts"

/** Port: operators. Names are unique; `update` is versioned (Conflict when the stored version moved on). */
export class OperatorRepo extends Context.Service<OperatorRepo, {
  /** Stores a new operator; Conflict when the name is taken. */
  insert(operator: OperatorRecord): Effect.Effect<void, Conflict>
  /** The operator with this id. */
  findById(id: string): Effect.Effect<Option.Option<OperatorRecord>>
  /** The operator with this login name. */
  findByName(name: string): Effect.Effect<Option.Option<OperatorRecord>>
  /** The operator whose outstanding enrolment token hashes to this. */
  findByEnrolmentToken(tokenHash: string): Effect.Effect<Option.Option<OperatorRecord>>
  /** Writes `operator` over version `operator.version - 1`. */
  update(operator: OperatorRecord): Effect.Effect<void, Conflict>
  /** Every operator, by name. */
  list(): Effect.Effect<ReadonlyArray<OperatorRecord>>
}>()("@tender/domain/OperatorRepo") {}

/** Port: console sessions, by the hash of their token. */
export class ConsoleSessionRepo extends Context.Service<ConsoleSessionRepo, {
  /** Stores a new session. */
  insert(session: ConsoleSession): Effect.Effect<void>
  /** The session whose token hashes to this. */
  find(tokenHash: string): Effect.Effect<Option.Option<ConsoleSession>>
  /** Restarts the session's idle clock. */
  touch(tokenHash: string, lastSeenAt: string): Effect.Effect<void>
  /** Ends one session (logout, expiry). */
  remove(tokenHash: string): Effect.Effect<void>
  /** Ends every session of an operator (disabled, re-enrolled). */
  removeForOperator(operatorId: string): Effect.Effect<void>
  /**
   * Removes up to `limit` sessions last seen before `lastSeenBefore` or created before
   * `createdBefore` (past a limit: Operator.expiredBefore) and answers how many went: the retention
   * round's sweep of sessions nobody presents again.
   */
  removeExpired(options: { readonly lastSeenBefore: string; readonly createdBefore: string; readonly limit: number }): Effect.Effect<number>
}>()("@tender/domain/ConsoleSessionRepo") {}

/** A page of the audit log, filtered. */
export interface AuditQuery {
  readonly operator_id?: string | undefined
  /** Only entries of these accounts (an operator reading the log sees their accounts' entries). */
  readonly accounts?: ReadonlyArray<string> | undefined
  readonly limit: number
  /** Newest first; the page after this entry. */
  readonly cursor?: { readonly created_at: string; readonly id: string } | undefined
}

/** Port: the audit log, append-only. */
export class AuditLog extends Context.Service<AuditLog, {
  /** Adds one entry; entries are never changed or removed. */
  append(entry: AuditEntry): Effect.Effect<void>
  /** Newest first (by `at`, then id); rows carry `created_at` = `at` for the keyset cursor. */
  list(query: AuditQuery): Effect.Effect<Page<AuditEntry & { readonly created_at: string }>>
}>()("@tender/domain/AuditLog") {}

/**
 * Port: the credential primitives (adapters: node:crypto). Kept out of the domain, which has no
 * Node APIs; every comparison inside is constant-time.
 */
export class OperatorCredentials extends Context.Service<OperatorCredentials, {
  /** A slow, salted hash of a password (scrypt), self-describing so its cost can change later. */
  hashPassword(password: string): Effect.Effect<string>
  /** Whether the password matches the stored hash (false for a hash not in a known format). */
  verifyPassword(password: string, hash: string): Effect.Effect<boolean>
  /** A new random TOTP secret, base32 (160 bits). */
  newTotpSecret(): Effect.Effect<string>
  /**
   * The time step (RFC 6238: 30 s, 6 digits, HMAC-SHA-1) at which `code` is valid for `secret`,
   * allowing one step either side of `nowMs`; undefined when it is valid at none.
   */
  totpStep(secret: string, code: string, nowMs: number): Effect.Effect<number | undefined>
  /** A random token for links and sessions (base64url, 256 bits). */
  newToken(): Effect.Effect<string>
  /** SHA-256 of a token, hex. */
  hashToken(token: string): Effect.Effect<string>
}>()("@tender/domain/OperatorCredentials") {}
