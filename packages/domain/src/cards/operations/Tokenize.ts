/**
 * Operation: tokenize a card (the secure card fields' `POST /v1/client/card_tokens`, the vault API):
 * validated first (a number the account's mode does not take is never stored), then vaulted, its
 * CVC kept apart for the short while a payment may take it.
 */
import { Clock, Effect } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { ValidationFailed } from "../../kernel/Errors.ts"
import * as Card from "../Card.ts"
import { CardVault, CvcStore } from "../CardPorts.ts"
import { type CardInput, validateCard } from "../CardRequest.ts"

export const tokenize = Effect.fn("CardTokens.tokenize")(function*(account: Account, input: CardInput) {
  const now = new Date(yield* Clock.currentTimeMillis)
  // Refused before the vault: a number test mode does not take is never stored.
  const valid = validateCard(input, now, account.mode)
  if (valid instanceof ValidationFailed) return yield* valid
  const card = yield* (yield* CardVault).store({
    account_id: account.id,
    number: valid.number,
    brand: valid.brand,
    last4: Card.last4Of(valid.number),
    bin: Card.binOf(valid.number),
    exp_month: input.exp_month,
    exp_year: input.exp_year < 100 ? 2000 + input.exp_year : input.exp_year,
    funding: Card.fundingOf(valid.number),
    holder_name: input.holder_name?.trim() || null
  })
  yield* (yield* CvcStore).put(card.token, input.cvc)
  return card
})
