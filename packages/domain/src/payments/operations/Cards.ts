/** Card material for a provider call: the vaulted card revealed, and client-secret actions. */
import { Clock, Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { modeRefused } from "../../cards/CardRequest.ts"
import { PaymentMethodNotFound } from "../../kernel/Errors.ts"
import { Ids } from "../../kernel/Ids.ts"
import type { NextAction, Order, Transaction } from "../Payment.ts"
import type { AuthorizeRequest, CardDetails } from "../ProviderPorts.ts"
import { ClientSecretRepo } from "../ClientSecretPorts.ts"
import { CardVault, type RevealedCard, type VaultedCard } from "../../cards/CardPorts.ts"
import { KeyHasher } from "../../kernel/Ports.ts"
import { isoOf } from "../../kernel/Time.ts"

/** A client secret (collect_card / collect_cvv) lives 15 minutes (spec). */
export const CLIENT_SECRET_TTL_MS = 15 * 60 * 1000

export type { RevealedCard }

// The token is not echoed: no card token in any response or log (spec, Payment instrument).
const notInVault = () => new PaymentMethodNotFound({ message: "No such card token in this account's vault" })

export const revealCard = (accountId: string, token: string) =>
  Effect.gen(function*() {
    const revealed = yield* (yield* CardVault).reveal(accountId as VaultedCard["account_id"], token)
    if (Option.isNone(revealed)) return yield* notInVault()
    return revealed.value
  })

/** Whose card, in which mode: an account, or what a session or order records of it. */
export interface CardOwner {
  readonly id: string
  readonly mode: Account["mode"]
}

/**
 * The card behind `token` for a new payment, transfer or payout call, held to the owner's mode as
 * tokenization holds it (contract.md, Sandbox: "test mode takes these test cards only … In live mode
 * a number from this table is refused the same way"): a card an earlier version vaulted against the
 * rule is refused here, 400 naming `field` with tokenization's message, before any provider hears of it.
 */
export const usableCard = (owner: CardOwner, token: string, field: string) =>
  Effect.flatMap(revealCard(owner.id, token), (card) => heldToMode(owner, card, field))

const heldToMode = (owner: CardOwner, card: RevealedCard, field: string) => {
  const refused = modeRefused(owner.mode, card.number, field)
  return refused !== undefined ? Effect.fail(refused) : Effect.succeed(card)
}

/**
 * The card a payment names by `payment_method.details.card_token`. A token a card transfer's secret
 * collected is payout-scoped (the customer gave the card to be paid, not charged): refused as if it
 * were not in the vault. The vault says so with the card, in the same read.
 */
export const paymentCard = (owner: CardOwner, token: string) =>
  Effect.gen(function*() {
    const card = yield* revealCard(owner.id, token)
    if (card.collectedForTransfer) return yield* notInVault()
    return yield* heldToMode(owner, card, "payment_method.details.card_token")
  })

export const cardDetails = (revealed: RevealedCard, cvc: string | undefined): CardDetails => ({
  number: revealed.number,
  exp_month: revealed.card.exp_month,
  exp_year: revealed.card.exp_year,
  cvc
})

/**
 * The authorization every flow sends for an attempt whose call is reserved (`txn.pending_call`):
 * the order's amount, under the reserved key; `how` says what differs (after a challenge, or a
 * merchant-initiated charge).
 */
export const authorization = (
  order: Order,
  txn: Transaction,
  card: CardDetails,
  how: Pick<AuthorizeRequest, "authenticated" | "challenged" | "merchant_initiated" | "stored_credential_reason"> = { authenticated: false }
): AuthorizeRequest => ({
  reference: txn.id,
  idempotency_key: txn.pending_call!.key,
  card,
  amount: order.amount,
  currency: order.currency,
  capture: order.capture_method === "automatic",
  ...how
})

/**
 * Mints the client secret of a card form: the secret goes to the merchant in next_action; only its
 * hash is stored, with the payment (or card transfer) it names, so the browser SDK's routes can
 * check it (ClientSecrets.ts).
 */
export const clientSecretAction = (type: "collect_card" | "collect_cvv", order: Order) =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const now = yield* Clock.currentTimeMillis
    const secret = `${order.id}_secret_${yield* ids.randomHex(16)}`
    const expires_at = isoOf(now + CLIENT_SECRET_TTL_MS)
    yield* (yield* ClientSecretRepo).insert({
      hash: yield* (yield* KeyHasher).hash(secret),
      account_id: order.account_id,
      order_id: order.id,
      kind: order.subtype === "transfer" ? "transfer" : "payment",
      collect: type === "collect_card" ? "card" : "cvv",
      created_at: isoOf(now),
      expires_at,
      expired_by_helper: false,
      used_at: null,
      card_token: null,
      token_mints: 0
    })
    const action: NextAction = { type, client_secret: secret, expires_at }
    return action
  })
