/**
 * Operations: create a transfer (POST /v1/transfers) and execute a card transfer
 * (POST /v1/transfers/{order_id}/execute). Validate → claim (the order, its `transfer` transaction
 * and the transfer record in one unit of work; the reference taken by the order's insert) → call
 * the provider's payout → record (RecordTransfer.ts). A card destination waits for its card to be
 * collected (`collect_card`) and is sent by execute: the claim under the order's lock and row lock
 * moves it to processing with its call reserved, once at a time.
 *
 * No provider reachable (502, nothing paid) leaves the transfer awaiting the same request again
 * (contract.md, Idempotency): a create's retry claims the order under its row lock (Retry.ts), an
 * execute may be called again; each attempt is a new transaction, the record naming the latest.
 */
import { Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import {
  RecipientPendingVerification,
  TransferDestinationCountryUnknown,
  TransferDestinationInvalid,
  TransferDestinationNotRegistered,
  TransferInProgress,
  TransferInvalidOrderState,
  TransferNotFound,
  TransferNotSupportedByProvider
} from "../../kernel/Errors.ts"
import { Ids } from "../../kernel/Ids.ts"
import { born as bornRecord, type Transfer, transferTransition } from "../MoneyOut.ts"
import type { Changes } from "../../kernel/StateMachine.ts"
import * as OrderAggregate from "../../payments/Order.ts"
import type { Order, PaymentInstrument, Transaction } from "../../payments/Payment.ts"
import { OrderRepo, TransactionRepo } from "../../payments/PaymentPorts.ts"
import { PaymentProvider } from "../../payments/ProviderPorts.ts"
import { ClientSecretRepo } from "../../payments/ClientSecretPorts.ts"
import { TransferRepo } from "../TransferPorts.ts"
import {
  cardHolderOf,
  checkDestination,
  type CreateTransferInput,
  DESTINATIONS,
  type DestinationDetails,
  destinationInstrument,
  routeDestination,
  validateTransfer,
  type ValidTransfer
} from "../TransferRequest.ts"
import { transferView } from "../TransferViews.ts"
import { cardDetails, clientSecretAction, revealCard, usableCard } from "../../payments/operations/Cards.ts"
import { nowIso } from "../../kernel/Time.ts"
import { guarded, loadTxn, lockOrder } from "../../payments/operations/Load.ts"
import { newTransaction } from "../../payments/operations/NewTransaction.ts"
import { decided, saveOrder, saveTxn, unitOfWork } from "../../payments/operations/Persist.ts"
import { ANSWER_LOST, callAndRecord, idempotencyKey, reserve } from "../../payments/operations/ProviderStep.ts"
import { recordTransfer, transferOf } from "./RecordTransfer.ts"
import { cardInstrument } from "../../payments/operations/Instrument.ts"
import { lockRetry, requestHashOf, retryOf } from "../../payments/operations/Retry.ts"
import { onRoute, providerOf, sameProvider, transferRoute } from "../../payments/operations/Route.ts"

/** Refusals the spec lists as transfer errors: the create or execute answers them as that error, after recording. */
const DECLINES_AS_ERRORS = [
  TransferDestinationNotRegistered,
  RecipientPendingVerification,
  TransferDestinationInvalid,
  TransferNotSupportedByProvider,
  TransferDestinationCountryUnknown
]

const declineError = (transfer: Transfer) => {
  const error = DECLINES_AS_ERRORS.find((e) => e.code === transfer.decline_code)
  return error === undefined ? undefined : new error({ message: `The provider refused transfer ${transfer.id} (${transfer.decline_code}); it was recorded as failed` })
}

const CARD = DESTINATIONS.find((d) => d.type === "card")!

/**
 * A card destination: a card of the account's vault, in a number the account's mode takes
 * (Cards.usableCard), whose issuer country is known (binLookup). `field` names the token in the request.
 */
const cardDestination = (account: Account, details: DestinationDetails, field: string) =>
  Effect.gen(function*() {
    const { card } = yield* usableCard(account, details.card_token!, field).pipe(Effect.catchTag("PaymentMethodNotFound", () => {
      const message = "is not a card token of this account's vault"
      return Effect.fail(new TransferDestinationInvalid({ message: `card_token ${message}`, errors: [{ field, message }] }))
    }))
    const facts = yield* (yield* PaymentProvider).binLookup(card.bin)
    if (facts.country_code === undefined) {
      return yield* new TransferDestinationCountryUnknown({ message: `The card behind card_token (BIN ${card.bin}) has no known issuer country` })
    }
    // The card's instrument as a payment's, with the holder the destination names.
    return { ...cardInstrument(card, undefined, { id: yield* (yield* Ids).make("paymentInstrument"), issuer: facts }), ...cardHolderOf(details, card) }
  })

/** Inserts a transfer's rows; the order's insert claims the reference (409 for a duplicate, even concurrent). */
const claim = (order: Order, txn: Transaction, transfer: Transfer) =>
  unitOfWork(Effect.gen(function*() {
    yield* (yield* OrderRepo).insert(order)
    yield* (yield* TransactionRepo).insert(txn)
    yield* (yield* TransferRepo).insert(transfer)
  }))

/** What the merchant does after a 502: nothing was paid, and the same request may be sent again. */
const UNREACHABLE = {
  create: "The payout provider is unreachable; nothing was paid. Retry the same request with the same merchant_reference",
  execute: "The payout provider is unreachable; nothing was paid. Execute the transfer again"
} as const

/**
 * Call → record for a reserved payout call, the create's or the execute's (`by`); the caller holds
 * the order's lock. No provider reachable is 502 with the transfer awaiting the same request again;
 * a lost answer is `transfer_in_progress` (left for reconciliation); a refusal the spec names is
 * answered as its error.
 */
const sendPayout = (by: "create" | "execute", order: Order, txn: Transaction) =>
  Effect.gen(function*() {
    const provider = yield* providerOf(txn)
    const key = txn.pending_call!.key
    const card = order.card_token === null ? undefined : cardDetails(yield* revealCard(order.account_id, order.card_token), undefined)
    const recorded = yield* callAndRecord(by === "create" ? "transfer" : "transfer_execute", "transfer", provider.payout({
      reference: txn.id,
      idempotency_key: key,
      method: order.payment_method,
      destination: txn.payment_instrument!,
      card,
      amount: txn.amount,
      currency: txn.currency,
      country: order.country
    }), (answer) => recordTransfer(order.id, txn.id, answer, key, by), UNREACHABLE[by]).pipe(
      Effect.catchTag("CardPaymentInProgress", () => Effect.fail(new TransferInProgress({ message: `A transfer is in progress: ${ANSWER_LOST}` })))
    )
    const refused = declineError(recorded.transfer)
    if (refused !== undefined) return yield* refused
    return transferView(recorded.transfer, recorded.order)
  })

export const createTransfer = Effect.fn("Transfers.create")(function*(account: Account, input: CreateTransferInput) {
  const requestHash = yield* requestHashOf(input)
  const retrying = yield* retryOf(account.id, input.merchant_reference, "transfer", requestHash)
  const valid = validateTransfer(account, input)
  if (valid instanceof Error) return yield* Effect.fail(valid)
  const route = yield* transferRoute(account, valid.channel_id, { method: valid.destination.code, currency: valid.currency, country: valid.country }, valid.processing_profile)
  // The sandbox's own table of where each destination can be paid (contract.md, Transfers).
  const unpayable = route.providers[0].channel_id === undefined ? routeDestination(valid) : undefined
  if (unpayable !== undefined) return yield* Effect.fail(unpayable)
  return yield* onRoute(route)(retrying === undefined ? createOn(account, valid, requestHash) : retryOn(retrying, requestHash))
})

/**
 * The claim, then call → record, of a transfer's payout: from the claim on nothing interrupts the
 * call, its outcome must be recorded.
 */
const claimAndSend = <E, R>(by: "create" | "execute", claimed: Effect.Effect<{ readonly order: Order; readonly txn: Transaction }, E, R>) =>
  Effect.uninterruptible(Effect.flatMap(claimed, ({ order, txn }) => guarded(order.id, sendPayout(by, order, txn))))

/** Claim → call → record of a new transfer, on its route's provider (in context). */
const createOn = Effect.fnUntraced(function*(account: Account, valid: ValidTransfer, requestHash: string) {
  const ids = yield* Ids
  const instrument: PaymentInstrument = valid.card_token !== undefined
    ? yield* cardDestination(account, valid.details, "payment_method.details.card_token")
    : destinationInstrument(yield* ids.make("paymentInstrument"), valid)
  const at = yield* nowIso
  const born = OrderAggregate.born({
    id: yield* ids.make("order"),
    owner: account,
    subtype: "transfer",
    merchant_reference: valid.merchant_reference,
    amount: valid.amount,
    currency: valid.currency,
    country: valid.country,
    payment_method: valid.destination.code,
    capture_method: "automatic",
    processing_profile: valid.processing_profile,
    card_token: valid.card_token,
    request_hash: requestHash,
    created_at: at
  })
  const attempt = yield* newTransaction(born, "transfer", born.amount, { payment_instrument: instrument })
  const record = bornRecord({
    id: yield* ids.make("transfer"),
    account_id: account.id,
    livemode: born.livemode,
    order_id: born.id,
    transaction_id: attempt.id,
    amount: born.amount,
    currency: born.currency,
    processing_profile: born.processing_profile,
    decline_code: null,
    created_at: at,
    payment_method: born.payment_method,
    channel_id: attempt.channel_id,
    payment_instrument: instrument,
    next_action: null
  })
  if (valid.destination.type === "card") {
    // Nothing reaches the provider before execute: the attempt stays initial, the order awaits the merchant.
    const order = (yield* decided(OrderAggregate.transition(born, "merchant_action_required", at))).next
    const next_action = yield* clientSecretAction("collect_card", born)
    const transfer = (yield* decided(transferTransition(record, "awaiting_card", at, { next_action }))).next
    yield* claim(order, attempt, transfer)
    return transferView(transfer, order)
  }
  const order = (yield* decided(OrderAggregate.transition(born, "attempt_sent", at))).next
  const txn = yield* reserve(attempt, "payout", idempotencyKey(attempt, "payout"), at)
  const transfer = (yield* decided(transferTransition(record, "sent", at))).next
  return yield* claimAndSend("create", Effect.as(claim(order, txn, transfer), { order, txn }))
})

/**
 * The same request again after a create answered 502 (contract.md, Idempotency), on the route's
 * provider (in context): a new attempt of the same transfer, to the same destination, claimed
 * under the order's row lock while the order still awaits it.
 */
const retryOn = Effect.fnUntraced(function*(retrying: Order, requestHash: string) {
  const destination = (yield* transferOf(retrying.id)).payment_instrument
  const attempt = yield* newTransaction(retrying, "transfer", retrying.amount, { payment_instrument: destination })
  return yield* claimAndSend("create", unitOfWork(Effect.gen(function*() {
    const at = yield* nowIso
    const current = yield* lockRetry(retrying, requestHash, at)
    const order = (yield* decided(OrderAggregate.transition(current, "attempt_sent", at, { retry_until: null }))).next
    yield* saveOrder(order)
    const txn = yield* reserve(attempt, "payout", idempotencyKey(attempt, "payout"), at)
    yield* (yield* TransactionRepo).insert(txn)
    yield* sendTransfer(yield* transferOf(order.id), txn, at)
    return { order, txn }
  })))
})

/** The transfer record's move to processing with its attempt `txn` (a retry's is a new one). */
const sendTransfer = (transfer: Transfer, txn: Transaction, at: string, changes: Changes<Transfer> = {}) =>
  Effect.gen(function*() {
    const moved = yield* decided(transferTransition(transfer, "sent", at, { ...changes, transaction_id: txn.id, channel_id: txn.channel_id }))
    yield* (yield* TransferRepo).update(moved.next)
  })

/** Why a transfer cannot be executed now: its call is out, or it is not awaiting card collection. */
const notAwaiting = (transfer: Transfer) =>
  transfer.status === "processing"
    ? new TransferInProgress({ message: `Transfer ${transfer.id} is already being executed` })
    : new TransferInvalidOrderState({ message: `Transfer ${transfer.id} is ${transfer.status}, not awaiting card collection` })

/** A replacement card keeps the destination's holder contact fields; its name is the new card's unless one was given. */
const replacementDetails = (previous: PaymentInstrument, token: string): DestinationDetails => ({
  card_token: token,
  holder_email: previous.holder_email,
  holder_phone: previous.holder_phone,
  document_id: previous.document_id,
  holder_address: previous.holder_address
})

/**
 * Once the browser collected a card through the transfer's client secret, execute takes only that
 * token (not another payment's, nor one the merchant vaulted); before that, any vault token but one
 * another transfer's secret collected (payout-scoped to that transfer).
 */
const refuseForeignToken = (accountId: string, orderId: string, token: string) =>
  Effect.gen(function*() {
    const secrets = yield* ClientSecretRepo
    const collected = Option.flatMap(yield* secrets.findTransferSecret(orderId), (s) => Option.fromNullishOr(s.card_token))
    const foreign = Option.isSome(collected) ? collected.value !== token : yield* secrets.mintedForTransfer(accountId, token)
    if (foreign) {
      const message = "must be the card token collected for this transfer"
      return yield* new TransferDestinationInvalid({ message: `card_token ${message}`, errors: [{ field: "card_token", message }] })
    }
  })

export const executeTransfer = Effect.fn("Transfers.execute")(function*(account: Account, orderId: string, input: { readonly card_token?: string | undefined }) {
  const found = Option.filter(yield* (yield* TransferRepo).findByOrder(orderId), (t) => t.account_id === account.id)
  if (Option.isNone(found)) return yield* new TransferNotFound({ message: `No transfer with order ${orderId}` })
  if (found.value.status !== "requires_action") return yield* Effect.fail(notAwaiting(found.value))
  let replacement: PaymentInstrument | undefined
  if (input.card_token !== undefined) {
    const details = replacementDetails(found.value.payment_instrument, input.card_token)
    const missing = checkDestination(CARD, details)
    if (missing !== undefined) return yield* Effect.fail(missing)
    yield* refuseForeignToken(account.id, orderId, input.card_token)
    replacement = yield* cardDestination(account, details, "card_token")
  } else {
    // The card the create named: held to the mode as a replacement is (one vaulted before the rule).
    const token = Option.getOrUndefined(yield* (yield* OrderRepo).find(account.id, orderId))?.card_token
    if (token != null) yield* usableCard(account, token, "card_token")
  }
  return yield* guarded(orderId, Effect.gen(function*() {
    const claimed = yield* unitOfWork(Effect.gen(function*() {
      const order = yield* lockOrder(orderId)
      const transfer = yield* transferOf(orderId)
      if (transfer.status !== "requires_action") return yield* Effect.fail(notAwaiting(transfer))
      const instrument = replacement ?? transfer.payment_instrument
      const previous = yield* loadTxn(transfer.transaction_id)
      // After an execute answered 502 its attempt failed: this execute is a new attempt, at the same provider.
      const again = previous.status !== "initial"
      const attempt = again ? yield* newTransaction(order, "transfer", previous.amount, sameProvider(previous)) : previous
      const at = yield* nowIso
      const txn = yield* reserve({ ...attempt, payment_instrument: instrument }, "payout", idempotencyKey(attempt, "payout"), at)
      yield* (again ? (yield* TransactionRepo).insert(txn) : saveTxn(txn))
      const sent = yield* decided(OrderAggregate.transition(order, "action_completed", at, { card_token: input.card_token ?? order.card_token }))
      yield* saveOrder(sent.next)
      yield* sendTransfer(transfer, txn, at, { next_action: null, payment_instrument: instrument })
      return { order: sent.next, txn }
    }))
    return yield* sendPayout("execute", claimed.order, claimed.txn)
  }))
})
