/**
 * Provider channels' credentials, sealed under the vault key (VaultCipher) by both channel
 * registries, and the one way to read them back: the `ChannelCredentials` service, which the
 * provider adapters use to build a channel's client. The domain's ChannelRepo port takes
 * credentials in but never gives them out, so they are decrypted nowhere else.
 */
import { type AccountId, ProviderCatalog } from "@tender/domain"
import { Context, Effect, type Option, Schema } from "effect"
import { type Sealed, VaultCipher } from "../crypto/VaultCipher.ts"

export class ChannelCredentials extends Context.Service<ChannelCredentials, {
  /** The channel's credentials, decrypted; none when the account has no such channel. */
  open(accountId: AccountId, channelId: string): Effect.Effect<Option.Option<ProviderCatalog.ProviderCredentials>>
}>()("@tender/adapters/ChannelCredentials") {}

const Json = Schema.fromJsonString(ProviderCatalog.ProviderCredentials)
const encode = Schema.encodeSync(Json)
const decode = Schema.decodeUnknownSync(Json)

/** Sealing and opening as both registries do it, so memory and PostgreSQL hold the same ciphertext. */
export const make = Effect.gen(function*() {
  const cipher = yield* VaultCipher
  return {
    seal: (accountId: AccountId, channelId: string, credentials: ProviderCatalog.ProviderCredentials): Effect.Effect<Sealed> =>
      cipher.seal(accountId, channelId, encode(credentials)),
    // What was sealed was encoded from the schema: a decoding failure is corruption, a defect.
    open: (accountId: AccountId, channelId: string, sealed: Sealed): Effect.Effect<ProviderCatalog.ProviderCredentials> =>
      Effect.map(cipher.open(accountId, channelId, sealed), decode)
  }
})
