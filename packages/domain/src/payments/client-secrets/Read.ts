/** Operations: what the card element reads: the payment a secret names (`session`) and how it stands (`status`). */
import { Effect } from "effect"
import { TransactionRepo } from "../PaymentPorts.ts"
import { major } from "../PaymentViews.ts"
import { latestAttempt } from "../Transaction.ts"
import { type ClientSession, statusOf } from "../ClientSecretViews.ts"
import { type ClientGrant, orderOf, savedCard } from "./Grant.ts"

export const session = Effect.fn("ClientSecrets.session")(function*(grant: ClientGrant) {
  const order = yield* orderOf(grant)
  const saved = grant.secret.collect === "cvv" ? yield* savedCard(grant, order) : undefined
  const view: ClientSession = {
    kind: grant.secret.kind,
    payment_id: order.id,
    collect: grant.secret.collect,
    amount: major(order.amount, order.currency),
    currency: order.currency,
    saved_card: saved === undefined ? null : { brand: saved.brand, last4: saved.last4 },
    livemode: order.livemode,
    expires_at: grant.secret.expires_at
  }
  return view
})

export const status = Effect.fn("ClientSecrets.status")(function*(grant: ClientGrant) {
  const order = yield* orderOf(grant)
  return statusOf(order, latestAttempt(yield* (yield* TransactionRepo).listByOrder(order.id)))
})
