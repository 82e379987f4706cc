/**
 * Card tokenization: validates a card (Luhn, brand, length, expiry, CVC length, the account's mode),
 * stores the number in the vault and keeps the CVC in memory only. Every card number Tender takes
 * comes through here: the test helper, a session attempt's raw card (the hosted form, the attempt
 * helper) and the secure card fields (`/v1/client/card_tokens`, payments' and card transfers').
 */
import { Clock, Context, Effect, Layer } from "effect"
import type { Account } from "../accounts/Account.ts"
import * as Card from "./Card.ts"
import { type FieldError, ValidationFailed } from "../kernel/Errors.ts"
import { CardVault, CvcStore, type VaultedCard } from "./CardPorts.ts"

export interface CardInput {
  readonly number: string
  readonly exp_month: number
  readonly exp_year: number
  readonly cvc: string
  readonly holder_name?: string | undefined
}

/** A CVC must have the brand's length (4 for Amex, else 3) and only digits. */
export const cvcError = (brand: Card.CardBrand, cvc: string): FieldError | undefined =>
  new RegExp(`^\\d{${Card.cvcLength(brand)}}$`).test(cvc)
    ? undefined
    : { field: "cvc", message: `must be ${Card.cvcLength(brand)} digits for this card` }

/** A card refused: the fields, and the mode's refusal (if that is why) in the message, as the SDK's card fields show it. */
const notAccepted = (errors: ReadonlyArray<FieldError>, refusal: string | undefined) =>
  new ValidationFailed({ message: `The card was not accepted${refusal === undefined ? "" : `: ${refusal}`}`, errors })

/**
 * A valid number the account's mode does not take (Card.modeRefusal), refused as tokenization
 * refuses it, naming `field`; `undefined` when the mode takes it. Also the check where a vaulted
 * card is used (operations/Cards.usableCard): a card vaulted before the rule existed is refused there.
 */
export const modeRefused = (mode: Account["mode"], number: string, field: string): ValidationFailed | undefined => {
  const refusal = Card.modeRefusal(mode, number)
  return refusal === undefined ? undefined : notAccepted([{ field, message: refusal }], refusal)
}

/**
 * Pure validation; returns the normalized number or the offending fields. A valid number is also
 * held to the account's mode (Card.modeRefusal: test cards in test mode only, never in live mode),
 * and the refusal is the error's message too, as the SDK's card fields show it.
 */
export const validateCard = (
  input: CardInput,
  now: Date,
  mode: Account["mode"]
): { readonly number: string; readonly brand: Card.CardBrand } | ValidationFailed => {
  const errors: Array<FieldError> = []
  const number = Card.digitsOnly(input.number)
  const brand = Card.detectBrand(number)
  let refusal: string | undefined
  if (!/^\d+$/.test(number) || !Card.validLength(brand, number) || !Card.luhnValid(number)) {
    errors.push({ field: "number", message: "is not a valid card number" })
  } else {
    refusal = Card.modeRefusal(mode, number)
    if (refusal !== undefined) errors.push({ field: "number", message: refusal })
  }
  if (!Number.isInteger(input.exp_month) || input.exp_month < 1 || input.exp_month > 12) {
    errors.push({ field: "exp_month", message: "must be an integer from 1 to 12" })
  }
  const year = input.exp_year < 100 ? 2000 + input.exp_year : input.exp_year
  const currentYear = now.getUTCFullYear()
  const currentMonth = now.getUTCMonth() + 1
  if (!Number.isInteger(input.exp_year) || year < currentYear || year > currentYear + 50) {
    errors.push({ field: "exp_year", message: "must be the current year or later" })
  } else if (year === currentYear && input.exp_month < currentMonth) {
    errors.push({ field: "exp_month", message: "the card has expired" })
  }
  const cvc = cvcError(brand, input.cvc)
  if (cvc !== undefined) errors.push(cvc)
  if (input.holder_name !== undefined && input.holder_name.length > 200) {
    errors.push({ field: "holder_name", message: "must be at most 200 characters" })
  }
  if (errors.length > 0) return notAccepted(errors, refusal)
  return { number, brand }
}

export class CardTokens extends Context.Service<CardTokens, {
  tokenize(account: Account, input: CardInput): Effect.Effect<VaultedCard, ValidationFailed>
}>()("@tender/domain/cards/CardTokens") {
  static readonly layer = Layer.effect(
    CardTokens,
    Effect.gen(function*() {
      const vault = yield* CardVault
      const cvcs = yield* CvcStore
      return CardTokens.of({
        tokenize: Effect.fn("CardTokens.tokenize")(function*(account, input) {
          const now = new Date(yield* Clock.currentTimeMillis)
          // Refused before the vault: a number test mode does not take is never stored.
          const valid = validateCard(input, now, account.mode)
          if (valid instanceof ValidationFailed) return yield* valid
          const card = yield* vault.store({
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
          yield* cvcs.put(card.token, input.cvc)
          return card
        })
      })
    })
  )
}
