/**
 * Operations: create a transfer (POST /v1/transfers) and execute a card transfer
 * (POST /v1/transfers/{order_id}/execute). Validate → claim (the order, its one `transfer`
 * transaction and the transfer record in one unit of work; the reference taken by the order's
 * insert) → call the provider's payout → record (RecordTransfer.ts). A card destination waits for
 * its card to be collected (`collect_card`) and is sent by execute, once: the claim under the
 * order's lock and row lock moves it to processing with its call reserved.
 */
import { Effect, Option } from "effect"
import type { Account } from "../Account.ts"
import {
  RecipientPendingVerification,
  TransferDestinationCountryUnknown,
  TransferDestinationInvalid,
  TransferDestinationNotRegistered,
  TransferInProgress,
  TransferInvalidOrderState,
  TransferNotFound,
  TransferNotSupportedByProvider
} from "../Errors.ts"
import { type AccountId, Ids } from "../Ids.ts"
import { born as bornRecord, type Transfer, transferTransition } from "../MoneyOut.ts"
import * as OrderAggregate from "../OrderStatus.ts"
import type { Order, PaymentInstrument, Transaction } from "../Payment.ts"
import { OrderRepo, PaymentProvider, TransactionRepo } from "../PaymentPorts.ts"
import { ClientSecretRepo } from "../ClientSecretPorts.ts"
import { CardVault } from "../Ports.ts"
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
import { cardDetails, clientSecretAction, revealCard } from "./Cards.ts"
import { decided, guarded, loadTxn, lockOrder, newTransaction, nowIso, saveOrder, saveTxn, unitOfWork } from "./Kit.ts"
import { ANSWER_LOST, callAndRecord, idempotencyKey, reserve, type StepName } from "./ProviderStep.ts"
import { recordTransfer, transferOf } from "./RecordTransfer.ts"
import { cardInstrument } from "./Instrument.ts"
import { refuseTakenReference } from "./Target.ts"
import { onRoute, providerOf, transferRoute } from "./Route.ts"

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

/** What a transfer order leaves empty: it has no customer, return URLs, session or consent of a payment. */
const NO_PAYMENT_FIELDS = {
  customer: null,
  success_url: null,
  cancel_url: null,
  checkout_session_id: null,
  payment_instrument: null,
  received_amount: null,
  refunded_amount: 0,
  customer_id: null,
  card_storage_consent: null
} as const

/** A card destination: a card of the account's vault whose issuer country is known (binLookup). */
const cardDestination = (accountId: string, details: DestinationDetails) =>
  Effect.gen(function*() {
    const token = details.card_token!
    const card = yield* (yield* CardVault).find(accountId as AccountId, token)
    if (Option.isNone(card)) {
      const message = "is not a card token of this account's vault"
      return yield* new TransferDestinationInvalid({ message: `card_token ${message}`, errors: [{ field: "payment_method.details.card_token", message }] })
    }
    const facts = yield* (yield* PaymentProvider).binLookup(card.value.bin)
    if (facts.country_code === undefined) {
      return yield* new TransferDestinationCountryUnknown({ message: `The card behind card_token (BIN ${card.value.bin}) has no known issuer country` })
    }
    // The card's instrument as a payment's, with the holder the destination names.
    return { ...cardInstrument(card.value, undefined, { id: yield* (yield* Ids).make("paymentInstrument"), issuer: facts }), ...cardHolderOf(details, card.value) }
  })

/** Inserts a transfer's rows; the order's insert claims the reference (409 for a duplicate, even concurrent). */
const claim = (order: Order, txn: Transaction, transfer: Transfer) =>
  unitOfWork(Effect.gen(function*() {
    yield* (yield* OrderRepo).insert(order)
    yield* (yield* TransactionRepo).insert(txn)
    yield* (yield* TransferRepo).insert(transfer)
  }))

/**
 * Call → record for a reserved payout call; the caller holds the order's lock. A lost answer is
 * `transfer_in_progress` (left for reconciliation); a refusal the spec names is answered as its error.
 */
const sendPayout = (step: StepName, order: Order, txn: Transaction) =>
  Effect.gen(function*() {
    const provider = yield* providerOf(txn)
    const key = txn.pending_call!.key
    const card = order.card_token === null ? undefined : cardDetails(yield* revealCard(order.account_id, order.card_token), undefined)
    const recorded = yield* callAndRecord(step, "transfer", provider.payout({
      reference: txn.id,
      idempotency_key: key,
      method: order.payment_method,
      destination: txn.payment_instrument!,
      card,
      amount: txn.amount,
      currency: txn.currency,
      country: order.country
    }), (answer) => recordTransfer(order.id, txn.id, answer, key), "The payout provider is unreachable; the transfer was recorded as failed").pipe(
      Effect.catchTag("CardPaymentInProgress", () => Effect.fail(new TransferInProgress({ message: `A transfer is in progress: ${ANSWER_LOST}` })))
    )
    const refused = declineError(recorded.transfer)
    if (refused !== undefined) return yield* refused
    return transferView(recorded.transfer, recorded.order)
  })

export const createTransfer = Effect.fn("Transfers.create")(function*(account: Account, input: CreateTransferInput) {
  yield* refuseTakenReference(account.id, input.merchant_reference)
  const valid = validateTransfer(account, input)
  if (valid instanceof Error) return yield* Effect.fail(valid)
  const route = yield* transferRoute(account, valid.channel_id, { method: valid.destination.code, currency: valid.currency, country: valid.country }, valid.processing_profile)
  // The sandbox's own table of where each destination can be paid (contract.md, Transfers).
  const unpayable = route[0].channel_id === undefined ? routeDestination(valid) : undefined
  if (unpayable !== undefined) return yield* Effect.fail(unpayable)
  return yield* onRoute(route)(createOn(account, valid))
})

/** Claim → call → record of a new transfer, on its route's provider (in context). */
const createOn = Effect.fnUntraced(function*(account: Account, valid: ValidTransfer) {
  const ids = yield* Ids
  const instrument: PaymentInstrument = valid.card_token !== undefined
    ? yield* cardDestination(account.id, valid.details)
    : destinationInstrument(yield* ids.make("paymentInstrument"), valid)
  const at = yield* nowIso
  const born = OrderAggregate.born({
    id: yield* ids.make("order"),
    account_id: account.id,
    livemode: account.mode === "live",
    merchant_reference: valid.merchant_reference,
    subtype: "transfer",
    amount: valid.amount,
    currency: valid.currency,
    country: valid.country,
    payment_method: valid.destination.code,
    capture_method: "automatic",
    processing_profile: valid.processing_profile,
    card_token: valid.card_token ?? null,
    ...NO_PAYMENT_FIELDS,
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
  // From the claim on, nothing interrupts the call: its outcome must be recorded.
  return yield* Effect.uninterruptible(Effect.andThen(claim(order, txn, transfer), guarded(order.id, sendPayout("transfer", order, txn))))
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
    replacement = yield* cardDestination(account.id, details)
  }
  return yield* guarded(orderId, Effect.gen(function*() {
    const claimed = yield* unitOfWork(Effect.gen(function*() {
      const order = yield* lockOrder(orderId)
      const transfer = yield* transferOf(orderId)
      if (transfer.status !== "requires_action") return yield* Effect.fail(notAwaiting(transfer))
      const instrument = replacement ?? transfer.payment_instrument
      const attempt = yield* loadTxn(transfer.transaction_id)
      const at = yield* nowIso
      const txn = yield* reserve({ ...attempt, payment_instrument: instrument }, "payout", idempotencyKey(attempt, "payout"), at)
      yield* saveTxn(txn)
      const sent = yield* decided(OrderAggregate.transition(order, "action_completed", at, { card_token: input.card_token ?? order.card_token }))
      yield* saveOrder(sent.next)
      yield* (yield* TransferRepo).update((yield* decided(transferTransition(transfer, "sent", at, { next_action: null, payment_instrument: instrument }))).next)
      return { order: sent.next, txn }
    }))
    return yield* sendPayout("transfer_execute", claimed.order, claimed.txn)
  }))
})
