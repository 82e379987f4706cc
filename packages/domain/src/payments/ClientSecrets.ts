/**
 * The browser SDK's side of a card form (contract.md, Browser SDK): every call names a publishable
 * key and a client secret, and acts only on the one payment (or card transfer) that secret was
 * minted for, of the key's account, for 15 minutes (client-secrets/Grant.ts). A facade over the
 * operations (client-secrets/*), each one file; this layer only captures the services they need.
 */
import { Context, Effect, Layer } from "effect"
import type { Account } from "../accounts/Account.ts"
import { Accounts } from "../accounts/Accounts.ts"
import { CardTokens } from "../cards/CardTokens.ts"
import { CardVault, CvcStore } from "../cards/CardPorts.ts"
import { KeyHasher } from "../kernel/Ports.ts"
import { type ErrorOf, seam } from "../kernel/Seam.ts"
import { ClientSecretRepo } from "./ClientSecretPorts.ts"
import type { ClientCardInput } from "./ClientSecretRequest.ts"
import type { ClientCardToken, ClientPaymentStatus, ClientPayResult, ClientSession } from "./ClientSecretViews.ts"
import { OrderRepo, TransactionRepo } from "./PaymentPorts.ts"
import { Payments } from "./Payments.ts"
import { authorize } from "./client-secrets/Authorize.ts"
import { cardToken } from "./client-secrets/CardToken.ts"
import { expire } from "./client-secrets/Expire.ts"
import type { ClientGrant } from "./client-secrets/Grant.ts"
import { pay } from "./client-secrets/Pay.ts"
import { session, status } from "./client-secrets/Read.ts"

export { type ClientCardInput, ClientReturnUrl, liveReturnUrlError, MAX_RETURN_URL, MAX_TOKEN_MINTS } from "./ClientSecretRequest.ts"
export { ClientCardToken, ClientPaymentStatus, ClientPayResult, ClientSession } from "./ClientSecretViews.ts"
export type { ClientGrant } from "./client-secrets/Grant.ts"

/** The services the operations need, captured when the layer is built (kernel/Seam.ts). */
type Needs = Accounts | Payments | CardTokens | ClientSecretRepo | KeyHasher | CardVault | CvcStore | OrderRepo | TransactionRepo

/**
 * The browser SDK's use case: authorize a publishable key and client secret, then read, tokenize and pay that one
 * payment.
 */
export class ClientSecrets extends Context.Service<ClientSecrets, {
  /** The key's account and the secret's grant; refused (401) unless the secret is live and the key's. */
  authorize(publishableKey: string, clientSecret: string): Effect.Effect<ClientGrant, ErrorOf<typeof authorize>>
  /** The payment (or card transfer) the secret names, as the card element shows it. */
  session(grant: ClientGrant): Effect.Effect<ClientSession, ErrorOf<typeof session>>
  /** Vaults the card typed into the form; the token is the only one this secret's `pay` takes. */
  cardToken(grant: ClientGrant, input: ClientCardInput): Effect.Effect<ClientCardToken, ErrorOf<typeof cardToken>>
  /** `returnUrl`: a ClientReturnUrl (https in live mode: liveReturnUrlError), kept for a challenge only in the account's `redirect` display mode. */
  pay(grant: ClientGrant, token: string, returnUrl?: string): Effect.Effect<ClientPayResult, ErrorOf<typeof pay>>
  /** The payment's status as the browser sees it. */
  status(grant: ClientGrant): Effect.Effect<ClientPaymentStatus, ErrorOf<typeof status>>
  /** The sandbox's helper: ends a secret of this (test-mode) account at once. */
  expire(account: Account, clientSecret: string): Effect.Effect<{ readonly expires_at: string }, ErrorOf<typeof expire>>
}>()("@tender/domain/payments/ClientSecrets") {
  static readonly layer = Layer.effect(
    ClientSecrets,
    Effect.gen(function*() {
      const run = yield* seam<Needs>()
      return ClientSecrets.of({
        authorize: (publishableKey, clientSecret) => run(authorize(publishableKey, clientSecret)),
        session: (grant) => run(session(grant)),
        cardToken: (grant, input) => run(cardToken(grant, input)),
        pay: (grant, token, returnUrl) => run(pay(grant, token, returnUrl)),
        status: (grant) => run(status(grant)),
        expire: (account, clientSecret) => run(expire(account, clientSecret))
      })
    })
  )
}
