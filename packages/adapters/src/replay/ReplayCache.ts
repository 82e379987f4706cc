/**
 * The replay cache: signatures that must never authorise a request (again) while their timestamp is
 * inside the replay window (Signature.ts). Two kinds enter it:
 *
 *   request   an accepted write's own signature: a second arrival is a replay (409 `conflict`
 *             naming the first request's id);
 *   response  a signature the server put on a response that a request could be made to match (same
 *             path, the response body as the request body): presenting it is 401 `invalid_signature`.
 *
 * Entries are keyed by account and signature hex and expire at `t` + the window (+ slack), after
 * which the timestamp itself is refused. `claim` is insert-if-absent in one step, so of two racing
 * arrivals exactly one wins, across processes when the store is shared (Redis, PostgreSQL).
 */
import { Context, type Effect, type Option } from "effect"
import { REPLAY_WINDOW_SECONDS } from "../Signature.ts"

export interface ReplayEntry {
  readonly kind: "request" | "response"
  /** The request that used (request) or received (response) the signature. */
  readonly requestId: string
}

/** Slack beyond the window for clocks of several processes that disagree by a few seconds. */
export const EXPIRY_SLACK_SECONDS = 30

/** When an entry for a signature timestamped `t` may be forgotten (unix seconds). */
export const expiresAt = (timestampSeconds: number) => timestampSeconds + REPLAY_WINDOW_SECONDS + EXPIRY_SLACK_SECONDS

export class ReplayCache extends Context.Service<ReplayCache, {
  /**
   * Records `signature` for `account` until `expiresAtSeconds` unless an unexpired entry holds it
   * already: `None` when this call recorded it, else the entry that was there (left unchanged).
   */
  claim(
    account: string,
    signature: string,
    entry: ReplayEntry,
    expiresAtSeconds: number
  ): Effect.Effect<Option.Option<ReplayEntry>>
  /** The unexpired entry holding `signature` for `account`, if any (reads check; they do not claim). */
  find(account: string, signature: string): Effect.Effect<Option.Option<ReplayEntry>>
}>()("@tender/adapters/ReplayCache") {}
