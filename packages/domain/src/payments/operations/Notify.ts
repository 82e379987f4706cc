/**
 * Operation: a provider's notification (POST /providers/{channel_id}/notifications). The channel's
 * provider verifies it with the channel's own secret (ChannelProviders.notifications) and reads it
 * into notices about our transactions; each is applied through the same record step as a call's
 * answer (Reconcile.apply) while that call is still in doubt, or through the settlement step
 * (SettleDue.settlerOf) to a capture or refund accepted for later. Anything else was recorded
 * already, from the call's own answer or an earlier delivery: nothing changes, so a provider's
 * redelivery is harmless.
 *
 * An unknown channel and a signature that does not verify answer alike (401): the route is public,
 * and must not tell a prober which channel ids exist. A notice whose amount or currency disagrees
 * with its transaction refuses the whole delivery (422) before anything of it is applied (a void's
 * notice may report the payment's whole amount: `agreeingAmounts`).
 */
import { Effect, Option } from "effect"
import type { Channel, ProviderName } from "../../channels/Channel.ts"
import { ChannelProviders, ChannelRepo, type NotificationDelivery, type ProviderNotice } from "../../channels/ChannelPorts.ts"
import { InvalidSignature, NotificationMismatch } from "../../kernel/Errors.ts"
import type { PendingCall, Transaction } from "../Payment.ts"
import { TransactionRepo } from "../PaymentPorts.ts"
import { awaitsSettlement } from "../Transaction.ts"
import { guarded, loadTxn } from "./Load.ts"
import { apply } from "./Reconcile.ts"
import { settlerOf } from "./SettleDue.ts"

type Operation = PendingCall["operation"]

/** The call a notice answers, and the transaction kinds that make that call. */
const CALLS: Readonly<Record<ProviderNotice["answer"]["_tag"], { readonly operation: Operation; readonly kinds: ReadonlyArray<Transaction["kind"]> }>> = {
  Authorize: { operation: "authorize", kinds: ["payment", "authorization"] },
  Start: { operation: "start", kinds: ["payment", "authorization"] },
  Capture: { operation: "capture", kinds: ["capture"] },
  Void: { operation: "void", kinds: ["void"] },
  Refund: { operation: "refund", kinds: ["refund"] },
  Payout: { operation: "payout", kinds: ["payout", "transfer"] }
}

/** What to do with one notice, decided from the transactions as they stood when it arrived. */
type Plan =
  | { readonly _tag: "Answer"; readonly txn: Transaction; readonly notice: ProviderNotice }
  | { readonly _tag: "Settle"; readonly txn: Transaction }
  | { readonly _tag: "Recorded" }

const providerIdOf = (notice: ProviderNotice): string | undefined => {
  const result = notice.answer.result
  return "provider_transaction_id" in result && result.provider_transaction_id !== null ? result.provider_transaction_id : notice.provider_transaction_id
}

const unverified = () => new InvalidSignature({ message: "The notification could not be verified for this channel" })

/**
 * The transaction a notice is about: the one the provider's id names (already answered), else the
 * referenced transaction when its own call of that operation is in doubt, else the one follow-up of
 * its order with such a call in doubt (a provider may name a follow-up by its payment's reference).
 */
const targetOf = (channel: Channel, notice: ProviderNotice, referenced: Transaction, order: ReadonlyArray<Transaction>) => {
  const { kinds, operation } = CALLS[notice.answer._tag]
  const providerId = providerIdOf(notice)
  const named = providerId === undefined
    ? undefined
    : order.find((t) => kinds.includes(t.kind) && t.channel_id === channel.id && t.provider_transaction_id === providerId)
  if (named !== undefined) return named
  if (referenced.pending_call?.operation === operation) return referenced
  // Only a follow-up is named by its payment's reference; an attempt's notice is about that attempt
  // alone (another attempt of the order, cascaded to another channel, is never its target).
  if (notice.answer._tag === "Authorize" || notice.answer._tag === "Start") return undefined
  const inDoubt = order.filter((t) => kinds.includes(t.kind) && t.channel_id === channel.id && t.pending_call?.operation === operation)
  // Two calls of one kind in doubt at once (two partial captures): which one is not told; reconciliation resolves them.
  return inDoubt.length === 1 ? inDoubt[0] : undefined
}

/**
 * The amounts a notice may carry for its transaction: its own, for every kind but a void. A void
 * releases "what remains" and neither Stripe's cancel nor Adyen's /cancels takes an amount: their
 * notice reports the payment's whole amount, not the void's (a void behind a capture, a release of
 * what a failed capture held). So a void's agrees from what it releases up to what its
 * authorization held; more than that, or less than the void, still disagrees.
 */
const agreeingAmounts = (target: Transaction, order: ReadonlyArray<Transaction>) => {
  if (target.kind !== "void") return { min: target.amount, max: target.amount }
  // A merchant's void names the authorization; a release, the void it completes.
  let authorization: Transaction | undefined = target
  while (authorization?.kind === "void") {
    const parent: string | null = authorization.parent_transaction_id
    authorization = order.find((t) => t.id === parent)
  }
  return { min: target.amount, max: authorization?.amount ?? target.amount }
}

const planOf = (channel: Channel, notice: ProviderNotice) =>
  Effect.gen(function*() {
    const transactions = yield* TransactionRepo
    const referenced = Option.getOrUndefined(yield* transactions.findAny(notice.reference))
    // A payment made outside Tender, or on another channel or account: the provider's business, not ours.
    if (referenced === undefined || referenced.account_id !== channel.account_id || referenced.channel_id !== channel.id) {
      return { _tag: "Recorded" } as Plan
    }
    const order = yield* transactions.listByOrder(referenced.order_id)
    const target = targetOf(channel, notice, referenced, order)
    if (target === undefined) return { _tag: "Recorded" } as Plan
    const answers = target.pending_call?.operation === CALLS[notice.answer._tag].operation
    const settles = notice.settlement !== undefined && awaitsSettlement(target)
    // Only what would be applied is checked: a notice about something already recorded (a refused
    // cancel reporting the payment's whole amount, say) is acknowledged, never refused for ever.
    if (!answers && !settles) return { _tag: "Recorded" } as Plan
    const agreeing = agreeingAmounts(target, order)
    if (notice.amount < agreeing.min || notice.amount > agreeing.max || notice.currency !== target.currency) {
      const expected = agreeing.min === agreeing.max ? `${target.amount}` : `${agreeing.min} to ${agreeing.max}`
      return yield* new NotificationMismatch({
        message: `The notification's amount (${notice.amount} ${notice.currency}, minor units) disagrees with transaction ${target.id} ` +
          `(${expected} ${target.currency}); nothing was applied`
      })
    }
    if (answers) return { _tag: "Answer", txn: target, notice } as Plan
    // Settled or failed: the settlement step asks the provider itself, so a forged notice settles nothing.
    return { _tag: "Settle", txn: target } as Plan
  })

/** Applies one plan; answers whether anything changed. */
const carry = (plan: Plan) => {
  switch (plan._tag) {
    case "Recorded":
      return Effect.succeed(false)
    case "Settle":
      // Guarded inside, and re-checked there against the transaction as it stands then.
      return settlerOf(plan.txn)
    case "Answer":
      return guarded(plan.txn.order_id, Effect.gen(function*() {
        // Another delivery, the caller's own answer or reconciliation may have recorded it since.
        const current = yield* loadTxn(plan.txn.id)
        const call = current.pending_call
        if (call === null || call.operation !== CALLS[plan.notice.answer._tag].operation) return false
        yield* apply(current, call.key, plan.notice.answer)
        return true
      }))
  }
}

/** Verifies and applies one delivery; answers the channel's provider (its acknowledgement) and how many notices changed something. */
export const notify = (channelId: string, delivery: NotificationDelivery) =>
  Effect.gen(function*() {
    const channel = Option.getOrUndefined(yield* (yield* ChannelRepo).getAny(channelId))
    if (channel === undefined) {
      yield* Effect.logWarning("provider notification for an unknown channel refused").pipe(Effect.annotateLogs({ channel_id: channelId }))
      return yield* unverified()
    }
    const { accept, notices } = yield* (yield* ChannelProviders).notifications(channel, delivery).pipe(
      Effect.tapError((error) =>
        // The verifier's reason (never a secret) helps an operator fix the endpoint's configuration.
        Effect.logWarning(`provider notification refused: ${error.message}`).pipe(Effect.annotateLogs({ channel_id: channel.id }))),
      Effect.mapError(unverified)
    )
    const plans: Array<Plan> = []
    for (const notice of notices) plans.push(yield* planOf(channel, notice))
    // Every notice passed its checks: only now may the adapter keep what the delivery says.
    yield* accept
    let applied = 0
    for (const plan of plans) if (yield* carry(plan)) applied++
    return { provider: channel.provider as ProviderName, applied }
  })
