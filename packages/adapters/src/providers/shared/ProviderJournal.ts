/**
 * What a provider adapter must remember between its calls that its provider will not tell it again:
 * which operation went out under an idempotency key, which keys a lookup fenced, what the shopper
 * brought back from a 3-D Secure challenge, what a notification said of a modification. It is the
 * adapter's own state, not a domain concept, and it must outlive the process and be shared by every
 * Tender process on one database: reconciliation after a crash (or in another process) is exactly
 * when it is read.
 *
 * Entries live per `scope` (a channel: the caller's string, e.g. the merchant account and channel
 * id), `kind` and `key`. Values are JSON: the caller encodes and decodes them (it knows their shape).
 * Like the sandbox ledger, writes commit on their own, never inside Tender's unit of work: a
 * rollback of ours cannot unsend what went to the provider.
 *
 * Retention: rows carry `created_at` (the first write) and may be deleted after RETENTION_DAYS;
 * docs/decisions.md ("Provider journal") says why that is long enough.
 */
import { Context, type Effect, type Option } from "effect"

/**
 * Every kind, with which write wins when a key is written twice:
 * - `sent` (idempotency key → the operation sent under it): first. The provider answers every
 *   later request under the key with the first one's response, so the first thing sent is what a
 *   replayed answer describes.
 * - `fenced` (idempotency key → true): first. A fence is never lifted; a second write changes nothing.
 * - `challenge_return` (our reference → the shopper's redirectResult): last. Nothing is sent with it
 *   until the authorization after the challenge, whose own key then pins Adyen's answer; the
 *   shopper's latest return is their latest answer.
 * - `modification_outcome` (modification id → its notification's success): last. Notifications are
 *   redelivered (identically) until acknowledged; the latest word the provider sent stands.
 */
export const WRITES = {
  sent: "first",
  fenced: "first",
  challenge_return: "last",
  modification_outcome: "last"
} as const satisfies Record<string, "first" | "last">

export type Kind = keyof typeof WRITES

export const KINDS = Object.keys(WRITES) as ReadonlyArray<Kind>

/** How long an entry is kept at least (see the module comment); a cleanup deletes older rows only. */
export const RETENTION_DAYS = 60

export class ProviderJournal extends Context.Service<ProviderJournal, {
  /** Stores `value` (JSON) under (scope, kind, key); a second write wins or not as WRITES says for `kind`. */
  remember(scope: string, kind: Kind, key: string, value: unknown): Effect.Effect<void>
  /** The value stored under (scope, kind, key), if any. */
  recall(scope: string, kind: Kind, key: string): Effect.Effect<Option.Option<unknown>>
}>()("@tender/adapters/ProviderJournal") {}
