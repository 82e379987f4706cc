/**
 * Client secrets as stored: only a hash of the secret (it is a bearer grant, like an API key), the
 * one payment or card transfer it names, what the browser collects for it and when it ends.
 */
import { Context, type Effect, type Option, Schema } from "effect"

/** A client secret as stored (its hash only): what it was minted for, its expiry, and its use. */
export const ClientSecretRecord = Schema.Struct({
  /** SHA-256 of the secret (KeyHasher); the secret itself lives only in the attempt's next_action. */
  hash: Schema.String,
  account_id: Schema.String,
  /** The order paid (kind payment) or paid out (kind transfer). */
  order_id: Schema.String,
  kind: Schema.Literals(["payment", "transfer"]),
  collect: Schema.Literals(["card", "cvv"]),
  created_at: Schema.String,
  expires_at: Schema.String,
  /** Set when the sandbox's expire helper ended it early: it is then past, whatever expires_at said. */
  expired_by_helper: Schema.Boolean,
  /** When a `pay` with it reached the provider (a secret pays once). */
  used_at: Schema.NullOr(Schema.String),
  /**
   * The last token `card_tokens` answered for this secret: the only one its `pay` accepts (a token
   * of another payment, or one the merchant vaulted, cannot pay through this secret).
   */
  card_token: Schema.NullOr(Schema.String),
  /** How many `card_tokens` calls this secret made, refused ones included (capped: ClientSecrets.ts). */
  token_mints: Schema.Int
})
/** A client secret as stored. */
export type ClientSecretRecord = typeof ClientSecretRecord.Type

/** Port: where client secrets are stored, found by their hash. */
export class ClientSecretRepo extends Context.Service<ClientSecretRepo, {
  /** Stores a newly minted secret (its hash). */
  insert(record: ClientSecretRecord): Effect.Effect<void>
  /** The secret with this hash, if any. */
  find(hash: string): Effect.Effect<Option.Option<ClientSecretRecord>>
  /** Ends the secret now (the test helper): expires_at moves to `at` and expired_by_helper is set. */
  expire(hash: string, at: string): Effect.Effect<void>
  /** Records that a `pay` with the secret reached the provider at `at` (a secret pays once). */
  markUsed(hash: string, at: string): Effect.Effect<void>
  /** Counts one `card_tokens` call atomically; false (nothing counted) once `max` calls were made. */
  claimMint(hash: string, max: number): Effect.Effect<boolean>
  /** The token the secret's `pay` accepts from now on (a later mint replaces an earlier one). */
  recordToken(hash: string, token: string): Effect.Effect<void>
  /** The secret of a card transfer's order (one per transfer), if it minted one: execute checks its token. */
  findTransferSecret(orderId: string): Effect.Effect<Option.Option<ClientSecretRecord>>
  /**
   * Whether `token` is the one a card transfer's secret of the account recorded: such a token is
   * payout-scoped. A transfer's execute asks here; a payment learns it from `CardVault.reveal`.
   */
  mintedForTransfer(accountId: string, token: string): Effect.Effect<boolean>
}>()("@tender/domain/ClientSecretRepo") {}
