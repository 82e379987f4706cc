/**
 * Ports of the card vault: the vaulted cards (numbers sealed by the adapter, revealed for a provider
 * call only) and the short-lived CVC store.
 */
import { Context, type Effect, type Option } from "effect"
import type { AccountId } from "../kernel/Ids.ts"
import type { CardBrand, CardFunding } from "./Card.ts"

/** The non-sensitive half of a vaulted card: everything but the number and the CVC. */
export interface VaultedCard {
  readonly token: string
  readonly account_id: AccountId
  readonly brand: CardBrand
  readonly last4: string
  readonly bin: string
  readonly exp_month: number
  readonly exp_year: number
  readonly funding: CardFunding
  readonly holder_name: string | null
  readonly created_at: string
}

/** A vaulted card with its number, revealed for a provider call only. */
export interface RevealedCard {
  readonly card: VaultedCard
  readonly number: string
  /**
   * Whether a card transfer's client secret of the account collected this token
   * (`ClientSecretRepo.mintedForTransfer`), read with the card: such a card is payout-scoped, and
   * a payment refuses it (Cards.paymentCard).
   */
  readonly collectedForTransfer: boolean
}

/**
 * The card vault: numbers are stored encrypted and addressed by `tok_…` tokens. `reveal` is for
 * the provider call only; nothing else ever sees the number.
 */
export class CardVault extends Context.Service<CardVault, {
  /** Vaults a card (encrypted) and returns it under a fresh token. */
  store(card: Omit<VaultedCard, "token" | "created_at"> & { readonly number: string }): Effect.Effect<VaultedCard>
  /** The account's vaulted card with this token, without its number. */
  find(accountId: AccountId, token: string): Effect.Effect<Option.Option<VaultedCard>>
  /**
   * The card with its number, for a provider call, in one read (whether a transfer collected it
   * included): that call is the card's use, so its last use becomes now.
   */
  reveal(accountId: AccountId, token: string): Effect.Effect<Option.Option<RevealedCard>>
  /**
   * Retention (`tender vault purge`): deletes every account's cards last used (stored, or revealed
   * for a call) before `usedBefore`, or only counts them (`dryRun`); returns how many.
   */
  purgeUnused(usedBefore: Date, options?: { readonly dryRun?: boolean }): Effect.Effect<number>
}>()("@tender/domain/CardVault") {}

/**
 * CVCs, kept for the one authorization that needs them (Redis, sealed, when configured; process
 * memory otherwise), never on disk. They expire with the client secret that collected them
 * (15 minutes); taking one removes it, and every authorization attempt takes its card's.
 */
export class CvcStore extends Context.Service<CvcStore, {
  /** Keeps the CVC collected with this card token. */
  put(token: string, cvc: string): Effect.Effect<void>
  /** The CVC kept for this token, removed as it is taken. */
  take(token: string): Effect.Effect<Option.Option<string>>
}>()("@tender/domain/CvcStore") {}
