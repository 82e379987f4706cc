/**
 * Validation of a card beyond its JSON shape (tokenization): Luhn, brand and length, expiry, CVC
 * length per brand, and the account's mode (test mode takes test cards only; live mode refuses them).
 */
import type { Account } from "../accounts/Account.ts"
import { type FieldError, ValidationFailed } from "../kernel/Errors.ts"
import * as Card from "./Card.ts"

/** A card as a client sends it to be tokenized: number, expiry, CVC and holder. */
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
