/**
 * A client secret's grant (contract.md, Browser SDK): the publishable key's account and the one
 * payment (or card transfer) the secret was minted for, for 15 minutes. What every client-secret
 * operation reads through it: the secret's record, its order, the order's saved card.
 */
import { Effect, Option, Result } from "effect"
import { type Account, notCollecting } from "../../accounts/Account.ts"
import { CardPaymentInvalidOrderState, ClientSecretExpired, ClientSecretInvalid, OrderNotFound } from "../../kernel/Errors.ts"
import { CardVault, type VaultedCard } from "../../cards/CardPorts.ts"
import { KeyHasher } from "../../kernel/Ports.ts"
import { type ClientSecretRecord, ClientSecretRepo } from "../ClientSecretPorts.ts"
import type { Order } from "../Payment.ts"
import { OrderRepo } from "../PaymentPorts.ts"

/** The secret's grant, once checked: the account behind the key and what the secret names. */
export interface ClientGrant {
  readonly account: Account
  readonly secret: ClientSecretRecord
}

/** Pure: the grant a stored secret gives at `now` (ms): none unless it is the key's account's and still live. */
export const grantOf = (
  account: Account,
  found: Option.Option<ClientSecretRecord>,
  now: number
): Result.Result<ClientGrant, ClientSecretInvalid | ClientSecretExpired> => {
  if (Option.isNone(found) || found.value.account_id !== account.id) {
    return Result.fail(new ClientSecretInvalid({ message: "The client secret is not valid for this publishable key" }))
  }
  if (found.value.expired_by_helper || Date.parse(found.value.expires_at) <= now) {
    return Result.fail(new ClientSecretExpired({ message: "The client secret has expired; create a new payment for a new one" }))
  }
  return Result.succeed({ account, secret: found.value })
}

/** The secret's record, if there is one by that secret (of any account: grantOf checks whose). */
export const recordOf = (clientSecret: string) =>
  Effect.gen(function*() {
    return yield* (yield* ClientSecretRepo).find(yield* (yield* KeyHasher).hash(clientSecret))
  })

export const orderOf = (grant: ClientGrant) =>
  Effect.gen(function*() {
    const found = yield* (yield* OrderRepo).find(grant.account.id, grant.secret.order_id)
    if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${grant.secret.order_id}` })
    return found.value
  })

/** The card on file a `cvv` secret collects the code for. */
export const savedCard = (grant: ClientGrant, order: Order) =>
  Effect.gen(function*() {
    const found = yield* (yield* CardVault).find(grant.account.id as VaultedCard["account_id"], order.card_token ?? "")
    if (Option.isNone(found)) return yield* new CardPaymentInvalidOrderState({ message: "The payment's saved card is no longer in the vault" })
    return found.value
  })

/** What changes anything (a card vaulted, a payment sent) needs an account that collects. */
export const writable = (grant: ClientGrant) => {
  const refused = notCollecting(grant.account)
  return refused === undefined ? Effect.void : Effect.fail(refused)
}
