/**
 * The browser SDK's side of a card form (contract.md, Browser SDK): every call names a publishable
 * key and a client secret, and acts only on the one payment (or card transfer) that secret was
 * minted for, of the key's account, for 15 minutes. Card data goes to the vault (CardTokens) and
 * the CVC to the CvcStore for the one authorization; `pay` is the payment's own authorization
 * (operations/ClientPay.ts).
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { type Account, notCollecting, ThreeDsDisplayMode } from "../accounts/Account.ts"
import { Accounts } from "../accounts/Accounts.ts"
import { cvcError } from "../cards/CardRequest.ts"
import { CardTokens } from "../cards/CardTokens.ts"
import { ClientSecretRecord, ClientSecretRepo } from "./ClientSecretPorts.ts"
import {
  CardPaymentInvalidOrderState,
  ClientSecretExpired,
  ClientSecretInvalid,
  type DomainError,
  invalidField,
  InvalidRequest,
  OrderNotFound,
  RateLimited,
  ValidationFailed
} from "../kernel/Errors.ts"
import type { Order, Transaction } from "./Payment.ts"
import { OrderRepo, TransactionRepo } from "./PaymentPorts.ts"
import { major } from "./PaymentViews.ts"
import { Payments } from "./Payments.ts"
import { MAX_URL } from "../kernel/Limits.ts"
import { urlProblem } from "./RequestChecks.ts"
import { CardVault, CvcStore, type VaultedCard } from "../cards/CardPorts.ts"
import { KeyHasher } from "../kernel/Ports.ts"
import { latestAttempt } from "./Transaction.ts"
import { isoOf } from "../kernel/Time.ts"

/**
 * What the browser reads and gets back, as Schemas: the routes encode their answers with them and
 * the OpenAPI document shows them (packages/http/src/client/ClientOpenApi.ts).
 */
export const ClientSession = Schema.Struct({
  kind: ClientSecretRecord.fields.kind,
  payment_id: Schema.String,
  collect: ClientSecretRecord.fields.collect,
  /** In major units, as the merchant API's amounts. */
  amount: Schema.Finite,
  currency: Schema.String,
  /** The card on file a `cvv` secret collects the code for: brand and last four only. */
  saved_card: Schema.NullOr(Schema.Struct({ brand: Schema.String, last4: Schema.String })),
  livemode: Schema.Boolean,
  expires_at: Schema.String
}).annotate({ identifier: "ClientSession", description: "The payment (or card transfer) a client secret names, as the card element needs it." })
export type ClientSession = typeof ClientSession.Type

export const ClientCardToken = Schema.Struct({
  token: Schema.String,
  brand: Schema.String,
  last4: Schema.String,
  bin: Schema.String,
  /** Null for a saved card whose CVC was collected: its expiry is not the browser's. */
  exp_month: Schema.NullOr(Schema.Int),
  exp_year: Schema.NullOr(Schema.Int)
}).annotate({ identifier: "ClientCardToken", description: "The vaulted card: an opaque token for `pay` (or the merchant's server), never the number." })
export type ClientCardToken = typeof ClientCardToken.Type

export interface ClientCardInput {
  readonly number?: string | undefined
  readonly exp_month?: number | undefined
  readonly exp_year?: number | undefined
  readonly cvc: string
  readonly holder_name?: string | undefined
}

export const ClientPaymentStatus = Schema.Struct({
  status: Schema.Literals(["succeeded", "failed", "requires_action"]),
  payment_id: Schema.String,
  decline_code: Schema.optionalKey(Schema.String),
  /** While a 3-D Secure challenge waits on the customer. */
  challenge_url: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ClientPaymentStatus", description: "The payment as the browser sees it: authorized counts as succeeded." })
export type ClientPaymentStatus = typeof ClientPaymentStatus.Type

export const ClientPayResult = Schema.Struct({
  ...ClientPaymentStatus.fields,
  /** With a challenge only: how tender.js shows it (the account's 3-D Secure display mode). */
  display_mode: Schema.optionalKey(ThreeDsDisplayMode)
}).annotate({ identifier: "ClientPayResult", description: "`pay`'s answer: the status, and with a challenge how to show it." })
export type ClientPayResult = typeof ClientPayResult.Type

/** The longest `return_url` kept (Limits.ts MAX_URL). */
export const MAX_RETURN_URL = MAX_URL

/**
 * `pay`'s return_url: an absolute http(s) address, where the `redirect` display mode brings the
 * customer back (the route decodes with it, and the OpenAPI document shows it). Kept as written, so
 * it must be header-safe as written (the URL parser would quietly drop a newline, a header would not).
 */
export const ClientReturnUrl = Schema.String.annotate({
  format: "uri",
  description: "Where the `redirect` 3-D Secure display mode brings the customer back, with `tender_payment_id=<order_id>` appended " +
    "(tender.js sends the current page unless `pay` was given `returnUrl`). Absolute http(s), https for a live-mode account, at most 2048 characters."
}).check(
  Schema.isMaxLength(MAX_RETURN_URL),
  Schema.makeFilter((url: string) =>
    urlProblem(url) === undefined || "must be an absolute http or https URL in printable ASCII (percent-encode the rest)"
  )
)

/**
 * What a live account's return_url must be besides a ClientReturnUrl: https, since the redirect
 * carries the customer's payment back (test mode keeps http for a merchant's local development).
 */
export const liveReturnUrlError = (url: string): string | undefined =>
  url.toLowerCase().startsWith("https:") ? undefined : "must be an https URL for a live-mode account"

/**
 * `card_tokens` calls one secret may make, refused ones included: enough for a customer's typos,
 * too few to test card numbers or expiries through one payment's form.
 */
export const MAX_TOKEN_MINTS = 5

/** The secret's grant, once checked: the account behind the key and what the secret names. */
export interface ClientGrant {
  readonly account: Account
  readonly secret: ClientSecretRecord
}

export class ClientSecrets extends Context.Service<ClientSecrets, {
  /** The key's account and the secret's grant; refused (401) unless the secret is live and the key's. */
  authorize(publishableKey: string, clientSecret: string): Effect.Effect<ClientGrant, DomainError>
  session(grant: ClientGrant): Effect.Effect<ClientSession, DomainError>
  cardToken(grant: ClientGrant, input: ClientCardInput): Effect.Effect<ClientCardToken, DomainError>
  /** `returnUrl`: a ClientReturnUrl (https in live mode: liveReturnUrlError), kept for a challenge only in the account's `redirect` display mode. */
  pay(grant: ClientGrant, token: string, returnUrl?: string): Effect.Effect<ClientPayResult, DomainError>
  status(grant: ClientGrant): Effect.Effect<ClientPaymentStatus, DomainError>
  /** The sandbox's helper: ends a secret of this (test-mode) account at once. */
  expire(account: Account, clientSecret: string): Effect.Effect<{ readonly expires_at: string }, DomainError>
}>()("@tender/domain/payments/ClientSecrets") {
  static readonly layer = Layer.effect(
    ClientSecrets,
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const payments = yield* Payments
      const cardTokens = yield* CardTokens
      const repo = yield* ClientSecretRepo
      const hasher = yield* KeyHasher
      const vault = yield* CardVault
      const cvcs = yield* CvcStore
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo

      const invalid = () => new ClientSecretInvalid({ message: "The client secret is not valid for this publishable key" })

      /** The secret's record, if it is this account's. */
      const recordOf = Effect.fnUntraced(function*(accountId: string, clientSecret: string) {
        const found = yield* repo.find(yield* hasher.hash(clientSecret))
        return Option.filter(found, (r) => r.account_id === accountId)
      })

      const orderOf = (grant: ClientGrant) =>
        Effect.flatMap(orders.find(grant.account.id, grant.secret.order_id), Option.match({
          onNone: () => Effect.fail(new OrderNotFound({ message: `No order ${grant.secret.order_id}` })),
          onSome: Effect.succeed
        }))

      const savedCard = (grant: ClientGrant, order: Order) =>
        Effect.flatMap(
          vault.find(grant.account.id as VaultedCard["account_id"], order.card_token ?? ""),
          Option.match({
            onNone: () => Effect.fail(new CardPaymentInvalidOrderState({ message: "The payment's saved card is no longer in the vault" })),
            onSome: Effect.succeed
          })
        )

      /** The browser's view of a payment: authorized counts as succeeded (spec, SDK pay result). */
      const statusOf = (order: Order, txn: Transaction | undefined): ClientPaymentStatus => {
        const shown = (status: ClientPaymentStatus["status"], extra: Partial<ClientPaymentStatus> = {}): ClientPaymentStatus =>
          ({ status, payment_id: order.id, ...extra })
        switch (order.status) {
          case "authorized":
          case "succeeded":
            return shown("succeeded")
          case "failed":
          case "canceled":
          case "returned":
            return shown("failed", txn?.decline_code ? { decline_code: txn.decline_code } : {})
          default: {
            // A checkout session's declined attempt leaves its order pending for the customer's
            // retry: the attempt paid with this secret failed all the same.
            if (txn?.status === "failed" || txn?.status === "canceled") {
              return shown("failed", txn.decline_code ? { decline_code: txn.decline_code } : {})
            }
            const url = txn?.three_ds === "required" && txn.next_action?.type === "redirect" ? txn.next_action.redirect_url : undefined
            return shown("requires_action", url !== undefined ? { challenge_url: url } : {})
          }
        }
      }

      const writable = (grant: ClientGrant) => {
        const refused = notCollecting(grant.account)
        return refused === undefined ? Effect.void : Effect.fail(refused)
      }

      return ClientSecrets.of({
        authorize: Effect.fn("ClientSecrets.authorize")(function*(publishableKey, clientSecret) {
          const account = yield* accounts.authenticatePublishable(publishableKey)
          const found = yield* recordOf(account.id, clientSecret)
          if (Option.isNone(found)) return yield* invalid()
          const now = yield* Clock.currentTimeMillis
          if (found.value.expired_by_helper || Date.parse(found.value.expires_at) <= now) {
            return yield* new ClientSecretExpired({ message: "The client secret has expired; create a new payment for a new one" })
          }
          return { account, secret: found.value }
        }),

        session: Effect.fn("ClientSecrets.session")(function*(grant) {
          const order = yield* orderOf(grant)
          const saved = grant.secret.collect === "cvv" ? yield* savedCard(grant, order) : undefined
          return {
            kind: grant.secret.kind,
            payment_id: order.id,
            collect: grant.secret.collect,
            amount: major(order.amount, order.currency),
            currency: order.currency,
            saved_card: saved === undefined ? null : { brand: saved.brand, last4: saved.last4 },
            livemode: order.livemode,
            expires_at: grant.secret.expires_at
          }
        }),

        cardToken: Effect.fn("ClientSecrets.cardToken")(function*(grant, input) {
          yield* writable(grant)
          if (grant.secret.used_at !== null) {
            return yield* new CardPaymentInvalidOrderState({ message: "This payment was already submitted" })
          }
          // Counted before the card is checked: a rejected number is a mint all the same.
          if (!(yield* repo.claimMint(grant.secret.hash, MAX_TOKEN_MINTS))) {
            return yield* new RateLimited({ message: `This client secret made its ${MAX_TOKEN_MINTS} card token calls; create a new payment for a new one` })
          }
          if (grant.secret.collect === "card") {
            if (input.number === undefined || input.exp_month === undefined || input.exp_year === undefined) {
              return yield* new ValidationFailed({
                message: "The card number and expiry are required for this payment",
                errors: (["number", "exp_month", "exp_year"] as const).filter((f) => input[f] === undefined).map((field) => ({ field, message: "is required" }))
              })
            }
            const card = yield* cardTokens.tokenize(grant.account, {
              number: input.number,
              exp_month: input.exp_month,
              exp_year: input.exp_year,
              cvc: input.cvc,
              holder_name: input.holder_name
            })
            yield* repo.recordToken(grant.secret.hash, card.token)
            return { token: card.token, brand: card.brand, last4: card.last4, bin: card.bin, exp_month: card.exp_month, exp_year: card.exp_year }
          }
          // CVC only: the saved card is read, never changed; its code is kept for the one authorization.
          if (input.number !== undefined || input.exp_month !== undefined || input.exp_year !== undefined) {
            return yield* invalidField("number", "must be absent: this payment collects the saved card's CVC only")
          }
          const saved = yield* savedCard(grant, yield* orderOf(grant))
          const cvc = cvcError(saved.brand, input.cvc)
          if (cvc !== undefined) return yield* new ValidationFailed({ message: "The card was not accepted", errors: [cvc] })
          yield* cvcs.put(saved.token, input.cvc)
          yield* repo.recordToken(grant.secret.hash, saved.token)
          return { token: saved.token, brand: saved.brand, last4: saved.last4, bin: saved.bin, exp_month: null, exp_year: null }
        }),

        pay: Effect.fn("ClientSecrets.pay")(function*(grant, token, returnUrl) {
          if (grant.secret.kind === "transfer") {
            return yield* new InvalidRequest({ message: "A card transfer is executed by the merchant's server (POST /v1/transfers/{order_id}/execute), not paid" })
          }
          const insecure = returnUrl !== undefined && grant.account.mode === "live" ? liveReturnUrlError(returnUrl) : undefined
          if (insecure !== undefined) return yield* invalidField("return_url", insecure)
          yield* writable(grant)
          // A new card must be the one card_tokens vaulted for this very secret (the latest, if the
          // customer corrected it), read now rather than from the grant, which may predate that call;
          // a saved card's token is checked against the order by clientPay.
          if (grant.secret.collect === "card") {
            const minted = Option.flatMap(yield* repo.find(grant.secret.hash), (r) => Option.fromNullishOr(r.card_token))
            if (!Option.contains(minted, token)) {
              return yield* invalidField("token", "must be the token card_tokens answered for this client secret")
            }
          }
          // Only the redirect mode takes the customer's whole page to the challenge, so only it needs a
          // way back; inline and popup challenges keep the order's success_url / cancel_url inside
          // their frame or window, as before. The mode is read once, here, as the answer's display_mode.
          const redirected = grant.account.three_ds_display_mode === "redirect"
          const paid = yield* payments.clientPay(grant.account, grant.secret.order_id, token, redirected ? returnUrl : undefined)
          yield* repo.markUsed(grant.secret.hash, isoOf(yield* Clock.currentTimeMillis))
          const status = statusOf(paid.order, paid.txn)
          return status.status === "requires_action" && status.challenge_url !== undefined
            ? { ...status, display_mode: grant.account.three_ds_display_mode }
            : status
        }),

        status: Effect.fn("ClientSecrets.status")(function*(grant) {
          const order = yield* orderOf(grant)
          return statusOf(order, latestAttempt(yield* transactions.listByOrder(order.id)))
        }),

        expire: Effect.fn("ClientSecrets.expire")(function*(account, clientSecret) {
          const found = yield* recordOf(account.id, clientSecret)
          if (Option.isNone(found)) return yield* invalidField("client_secret", "no such client secret in this account")
          const at = isoOf(yield* Clock.currentTimeMillis)
          yield* repo.expire(found.value.hash, at)
          return { expires_at: Date.parse(at) < Date.parse(found.value.expires_at) ? at : found.value.expires_at }
        })
      })
    })
  )
}
