/**
 * What both vaults do before they store a card: mint its token, stamp it, seal the number. Kept in
 * one place so the memory and PostgreSQL vaults hold byte-for-byte the same kind of ciphertext.
 */
import { type AccountId, Ids, type VaultedCard } from "@tender/domain"
import { Clock, Effect } from "effect"
import { VaultCipher, type Sealed } from "../crypto/VaultCipher.ts"

export type CardToStore = Omit<VaultedCard, "token" | "created_at"> & { readonly number: string }

export interface VaultEntry {
  readonly card: VaultedCard
  readonly sealed: Sealed
  /** When the card was stored or last revealed for a provider call (the retention policy's clock). */
  readonly last_used_at: string
}

export const make = Effect.gen(function*() {
  const ids = yield* Ids
  const cipher = yield* VaultCipher
  return {
    create: Effect.fnUntraced(function*({ number, ...details }: CardToStore) {
      const token = yield* ids.make("cardToken")
      const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      const card: VaultedCard = { ...details, token, created_at: createdAt }
      const sealed = yield* cipher.seal(details.account_id, token, number)
      return { card, sealed, last_used_at: createdAt } satisfies VaultEntry
    }),
    reveal: (accountId: AccountId, token: string, sealed: Sealed) => cipher.open(accountId, token, sealed)
  }
})
