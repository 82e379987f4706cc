/**
 * Card tokenization, the use case (operations/Tokenize.ts): validates a card (CardRequest.ts), stores
 * the number in the vault and keeps the CVC in memory only. Every card number Tender takes comes
 * through here: the test helper, a session attempt's raw card (the hosted form, the attempt helper)
 * and the secure card fields (`/v1/client/card_tokens`, payments' and card transfers').
 */
import { Context, Effect, Layer } from "effect"
import type { Account } from "../accounts/Account.ts"
import type { ValidationFailed } from "../kernel/Errors.ts"
import { CardVault, CvcStore, type VaultedCard } from "./CardPorts.ts"
import type { CardInput } from "./CardRequest.ts"
import { tokenize } from "./operations/Tokenize.ts"

/** The card tokenization use case: validates a card and vaults it, returning its token. */
export class CardTokens extends Context.Service<CardTokens, {
  /** Validates the card (in the account's mode) and vaults it. */
  tokenize(account: Account, input: CardInput): Effect.Effect<VaultedCard, ValidationFailed>
}>()("@tender/domain/cards/CardTokens") {
  static readonly layer = Layer.effect(
    CardTokens,
    Effect.gen(function*() {
      const context = yield* Effect.context<CardVault | CvcStore>()
      return CardTokens.of({
        tokenize: (account, input) => Effect.provideContext(tokenize(account, input), context)
      })
    })
  )
}
