/**
 * Operation: `card_tokens`, the card element's card (or a saved card's CVC) vaulted for the one
 * payment the secret names. Card data goes to the vault (CardTokens), a CVC to the CvcStore for the
 * one authorization; the token answered is the only one the secret's `pay` takes.
 */
import { Effect } from "effect"
import { cvcError } from "../../cards/CardRequest.ts"
import { CardTokens } from "../../cards/CardTokens.ts"
import { CardPaymentInvalidOrderState, invalidField, RateLimited, ValidationFailed } from "../../kernel/Errors.ts"
import { CvcStore } from "../../cards/CardPorts.ts"
import { ClientSecretRepo } from "../ClientSecretPorts.ts"
import type { ClientCardToken } from "../ClientSecretViews.ts"
import { type ClientCardInput, MAX_TOKEN_MINTS } from "../ClientSecretRequest.ts"
import { type ClientGrant, orderOf, savedCard, writable } from "./Grant.ts"

/** What the input is for the secret's `collect`: a whole card, or the saved card's CVC only. */
export type CardInputPlan =
  | { readonly _tag: "Card"; readonly card: Required<Pick<ClientCardInput, "number" | "exp_month" | "exp_year">> & ClientCardInput }
  | { readonly _tag: "Cvc"; readonly cvc: string }

/** Pure: the input checked against what the secret collects. */
export const cardInputPlan = (collect: ClientGrant["secret"]["collect"], input: ClientCardInput): CardInputPlan | ValidationFailed => {
  if (collect === "card") {
    const { number, exp_month, exp_year } = input
    if (number === undefined || exp_month === undefined || exp_year === undefined) {
      return new ValidationFailed({
        message: "The card number and expiry are required for this payment",
        errors: (["number", "exp_month", "exp_year"] as const).filter((f) => input[f] === undefined).map((field) => ({ field, message: "is required" }))
      })
    }
    return { _tag: "Card", card: { ...input, number, exp_month, exp_year } }
  }
  if (input.number !== undefined || input.exp_month !== undefined || input.exp_year !== undefined) {
    return invalidField("number", "must be absent: this payment collects the saved card's CVC only")
  }
  return { _tag: "Cvc", cvc: input.cvc }
}

export const cardToken = Effect.fn("ClientSecrets.cardToken")(function*(grant: ClientGrant, input: ClientCardInput) {
  yield* writable(grant)
  if (grant.secret.used_at !== null) {
    return yield* new CardPaymentInvalidOrderState({ message: "This payment was already submitted" })
  }
  const repo = yield* ClientSecretRepo
  // Counted before the card is checked: a rejected number is a mint all the same.
  if (!(yield* repo.claimMint(grant.secret.hash, MAX_TOKEN_MINTS))) {
    return yield* new RateLimited({ message: `This client secret made its ${MAX_TOKEN_MINTS} card token calls; create a new payment for a new one` })
  }
  const plan = cardInputPlan(grant.secret.collect, input)
  if (plan instanceof ValidationFailed) return yield* plan
  if (plan._tag === "Card") {
    const { number, exp_month, exp_year, cvc, holder_name } = plan.card
    const card = yield* (yield* CardTokens).tokenize(grant.account, { number, exp_month, exp_year, cvc, holder_name })
    yield* repo.recordToken(grant.secret.hash, card.token)
    const minted: ClientCardToken = { token: card.token, brand: card.brand, last4: card.last4, bin: card.bin, exp_month: card.exp_month, exp_year: card.exp_year }
    return minted
  }
  // CVC only: the saved card is read, never changed; its code is kept for the one authorization.
  const saved = yield* savedCard(grant, yield* orderOf(grant))
  const wrong = cvcError(saved.brand, plan.cvc)
  if (wrong !== undefined) return yield* new ValidationFailed({ message: "The card was not accepted", errors: [wrong] })
  yield* (yield* CvcStore).put(saved.token, plan.cvc)
  yield* repo.recordToken(grant.secret.hash, saved.token)
  const minted: ClientCardToken = { token: saved.token, brand: saved.brand, last4: saved.last4, bin: saved.bin, exp_month: null, exp_year: null }
  return minted
})
