/**
 * The replay cache: signed payloads that must never authorise a request (again) while their
 * timestamp is inside the replay window (Signature.ts). Two kinds enter it:
 *
 *   request   an accepted write's own signed payload: a second arrival is a replay (409 `conflict`
 *             naming the first request's id);
 *   response  a payload the server signed as a response that a request could be made to match (same
 *             path, the response body as the request body): presenting it is 401 `invalid_signature`.
 *
 * Entries are keyed by account and the payload's `contentDigest` (SHA-256 of `t + path + body`), not
 * by a `v1` entry: during a rotation one payload carries one signature per secret, and a copy that
 * keeps only the other secret's is still the same payload. The account stays in the key, so equal
 * payloads of two accounts never meet. Entries expire at `t` + the window (+ slack), after which the
 * timestamp itself is refused. `claim` is insert-if-absent in one step, so of two racing
 * arrivals exactly one wins, across processes when the store is shared (Redis, PostgreSQL).
 */
import { Context, type Effect, type Option } from "effect"
import { REPLAY_WINDOW_SECONDS } from "@tender/api/Signature"

export interface ReplayEntry {
  readonly kind: "request" | "response"
  /** The request that sent (request) or received (response) the payload. */
  readonly requestId: string
}

/** Slack beyond the window for clocks of several processes that disagree by a few seconds. */
export const EXPIRY_SLACK_SECONDS = 30

/** When an entry for a payload signed at `t` may be forgotten (unix seconds). */
export const expiresAt = (timestampSeconds: number) => timestampSeconds + REPLAY_WINDOW_SECONDS + EXPIRY_SLACK_SECONDS

export class ReplayCache extends Context.Service<ReplayCache, {
  /**
   * Records `digest` for `account` until `expiresAtSeconds` unless an unexpired entry holds it
   * already: `None` when this call recorded it, else the entry that was there (left unchanged).
   */
  claim(
    account: string,
    digest: string,
    entry: ReplayEntry,
    expiresAtSeconds: number
  ): Effect.Effect<Option.Option<ReplayEntry>>
  /** The unexpired entry holding `digest` for `account`, if any (reads check; they do not claim). */
  find(account: string, digest: string): Effect.Effect<Option.Option<ReplayEntry>>
}>()("@tender/adapters/ReplayCache") {}
