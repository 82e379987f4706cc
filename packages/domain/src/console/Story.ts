/**
 * A payment's story assembled from the records storage reads for it (issue 26). Both read adapters
 * fetch the same records (each list in one statement, whatever its size) and hand them here, so the
 * story's order, its figures and what it leaves out have one home.
 *
 * What it leaves out: the instrument's BIN, holder and token, the next action's client secret, the
 * endpoint's signing secret and the event's payload: the console page needs none of them.
 */
import { type CardFacts, type PaymentStory, type StoryDelivery, type StoryOutflow, type StoryStep, type StoryTransaction } from "./ConsoleReads.ts"
import { cardFactsOf, channelOf, routingOf } from "./ConsoleSearch.ts"
import type { Routing } from "../channels/RoutingModel.ts"

/** A transaction as the story reads it (a stored transaction has these fields and more). */
export interface StoryTransactionRecord extends
  Pick<
    StoryTransaction,
    | "id" | "kind" | "status" | "amount" | "currency" | "created_at" | "updated_at" | "parent_transaction_id"
    | "provider" | "channel_id" | "provider_transaction_id" | "decline_code" | "three_ds"
  >
{
  readonly processing_profile: string | null
  readonly payment_instrument: Parameters<typeof cardFactsOf>[0]
  /** How the attempt was routed (issue 27); null or absent on follow-ups, the sandbox and older rows. */
  readonly routing?: Routing | null | undefined
}

/** The records of one order's story, as storage reads them. */
export interface StoryRecords {
  readonly order: Omit<PaymentStory["order"], "captured_amount">
  /** Oldest first. */
  readonly transactions: ReadonlyArray<StoryTransactionRecord>
  /** The order's refunds and payouts, any order. */
  readonly outflows: ReadonlyArray<StoryOutflow>
  /** The order's events, oldest first. */
  readonly events: ReadonlyArray<{
    readonly id: string
    readonly type: string
    readonly created_at: string
    /** The `next_action.type` the event's data carries (a requires_action's), else null. */
    readonly next_action_type: string | null
  }>
  /** Their deliveries; `endpoint_url` null once the endpoint was deleted (deliveries outlive it). */
  readonly deliveries: ReadonlyArray<
    Omit<StoryDelivery, "attempts" | "endpoint_url"> & {
      readonly event_id: string
      readonly created_at: string
      readonly endpoint_url: string | null
    }
  >
  /** Their attempts, in the order they were made. */
  readonly attempts: ReadonlyArray<{
    readonly delivery_id: string
    readonly attempted_at: string
    readonly status_code: number | null
    readonly duration_ms: number
    readonly error: string | null
    /** The start of the receiver's answer body; absent in attempts logged before it was kept. */
    readonly response?: string | null | undefined
  }>
}

const byTimeThenId = (a: { readonly created_at: string; readonly id: string }, b: { readonly created_at: string; readonly id: string }) => {
  const at = Date.parse(a.created_at) - Date.parse(b.created_at)
  return at !== 0 ? at : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/** What the order has captured: completed captures, and completed payments (an automatic capture). */
const capturedAmount = (txns: ReadonlyArray<StoryTransactionRecord>) =>
  txns.filter((t) => (t.kind === "capture" || t.kind === "payment") && t.status === "completed").reduce((sum, t) => sum + t.amount, 0)

/** The kinds of transaction that are an attempt to pay (the rest follow one: captures, voids, refunds…). */
const ATTEMPT_KINDS: ReadonlySet<string> = new Set(["payment", "authorization"])

/** How an attempt ended, as the next one's routing says it. */
const endedAs = (t: StoryTransactionRecord) =>
  t.decline_code === "provider_unavailable" ? "unreachable" : t.status === "failed" ? "declined" : t.status

/** Why the recorded routing chose the channel, in the console's words. */
const REASONS: Readonly<Record<Routing["reason"], string>> = {
  rule: "the first channel of the rule",
  split: "drawn by the rule's volume split",
  success_rate: "the best success rate among the candidates",
  exploration: "exploring a candidate (a recovered channel's probe, or the exploration share)",
  breaker: "a better-ranked channel's breaker was open",
  // No rule matched (or there are none): the default's first open candidate, in its listed order,
  // by priority when it lists none (a success-rate default with one open candidate reads so too).
  default: "the first open candidate of the default (its listed order, else by priority)",
  retry: "the next candidate after the previous try"
}

/**
 * What a recorded routing says (issue 27): the rule and its version that decided, the candidates
 * as ranked, why this channel, and which try of the payment it is.
 */
const decisionOf = (routing: Routing): string => {
  const rules = routing.version === 0 ? "no routing rules" : `${routing.rule === null ? "the default" : `rule ${routing.rule}`} of rules v${routing.version}`
  return `${rules}; candidates ${routing.candidates.join(", ")}; ${REASONS[routing.reason]} (${routing.reason}), try ${routing.attempt}`
}

/**
 * Each transaction's routing (transactions oldest first): its channel and profile (routingOf), the
 * decision it recorded when it has one (issue 27), and for an order of several attempts, its place
 * among them and how the one before it ended.
 */
const routingsOf = (txns: ReadonlyArray<StoryTransactionRecord>): ReadonlyMap<string, string> => {
  const attempts = txns.filter((t) => ATTEMPT_KINDS.has(t.kind))
  return new Map(txns.map((t) => {
    const n = attempts.indexOf(t)
    const decided = t.routing === null || t.routing === undefined ? "" : `; ${decisionOf(t.routing)}`
    if (n < 0 || attempts.length === 1) return [t.id, `${routingOf(t)}${decided}`]
    const previous = attempts[n - 1]
    const after = previous === undefined ? "" : `, after ${channelOf(previous)} ${endedAs(previous)}`
    return [t.id, `${routingOf(t)}${decided}; attempt ${n + 1} of the cascade${after}`]
  }))
}

/** What ends a 3-D Secure step: the payment's next outcome after the challenge was asked. */
const OUTCOMES: Readonly<Record<string, string>> = {
  "payment.authorized": "authorized",
  "payment.succeeded": "paid",
  "payment.failed": "failed",
  "payment.canceled": "canceled"
}

/** A customer step that asks for the card's security code or details: not 3-D Secure. */
const NOT_THREE_DS = new Set(["collect_cvv", "collect_card"])

/**
 * 3-D Secure from the order's events (oldest first): each `payment.requires_action` while an attempt
 * carries 3-D Secure is a challenge asked, and the next outcome event is its result, told with the
 * attempt's verdict (approved or denied). An order without 3-D Secure (its customer steps are
 * redirects, QR codes, vouchers) has none.
 */
const threeDsStepsOf = (records: StoryRecords): ReadonlyArray<StoryStep> => {
  const secured = records.transactions.filter((t) => ATTEMPT_KINDS.has(t.kind) && t.three_ds !== null)
  if (secured.length === 0) return []
  /** The 3-D Secure attempt under way at `at`: the latest made by then. */
  const attemptAt = (at: string) => secured.filter((t) => Date.parse(t.created_at) <= Date.parse(at)).at(-1) ?? secured[0]!
  const steps: Array<StoryStep> = []
  let asked = false
  for (const event of records.events) {
    if (event.type === "payment.requires_action" && NOT_THREE_DS.has(event.next_action_type ?? "")) continue
    if (event.type === "payment.requires_action") {
      asked = true
      steps.push({ at: event.created_at, step: `3-D Secure challenge asked of the customer (${event.type})` })
    } else if (asked && OUTCOMES[event.type] !== undefined) {
      asked = false
      const verdict = attemptAt(event.created_at).three_ds
      const judged = verdict === "approved" || verdict === "denied" ? `3-D Secure ${verdict}` : "3-D Secure answered"
      steps.push({ at: event.created_at, step: `${judged}: payment ${OUTCOMES[event.type]} (${event.type})` })
    }
  }
  return steps
}

/**
 * Transactions oldest first; of two made in the same millisecond (an authorization and the capture
 * that follows it, on a fast machine), the parent before its child: storage orders such a tie by id,
 * which is random.
 */
const inOrder = (transactions: ReadonlyArray<StoryTransactionRecord>): ReadonlyArray<StoryTransactionRecord> => {
  const byId = new Map(transactions.map((t) => [t.id, t]))
  const depth = (t: StoryTransactionRecord): number => {
    let n = 0
    for (let p = t.parent_transaction_id; p !== null && n < transactions.length; p = byId.get(p)?.parent_transaction_id ?? null) n++
    return n
  }
  return [...transactions].sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || depth(a) - depth(b))
}

/** The story: every list oldest first; each event with its deliveries, each delivery with its attempts. */
export const storyOf = (unordered: StoryRecords): PaymentStory => {
  const records = { ...unordered, transactions: inOrder(unordered.transactions) }
  const attemptsOf = new Map<string, Array<StoryDelivery["attempts"][number]>>()
  for (const a of records.attempts) {
    const list = attemptsOf.get(a.delivery_id) ?? []
    list.push({ at: a.attempted_at, status_code: a.status_code, latency_ms: a.duration_ms, response: a.response ?? null, error: a.error })
    attemptsOf.set(a.delivery_id, list)
  }
  const deliveriesOf = new Map<string, Array<StoryDelivery>>()
  for (const d of [...records.deliveries].sort(byTimeThenId)) {
    const list = deliveriesOf.get(d.event_id) ?? []
    list.push({
      id: d.id,
      endpoint_id: d.endpoint_id,
      endpoint_url: d.endpoint_url ?? "(endpoint deleted)",
      status: d.status,
      next_attempt_at: d.next_attempt_at,
      attempts: attemptsOf.get(d.id) ?? []
    })
    deliveriesOf.set(d.event_id, list)
  }
  const routings = routingsOf(records.transactions)
  return {
    order: { ...records.order, captured_amount: capturedAmount(records.transactions) },
    transactions: records.transactions.map((t) => ({
      id: t.id,
      kind: t.kind,
      status: t.status,
      amount: t.amount,
      currency: t.currency,
      created_at: t.created_at,
      updated_at: t.updated_at,
      parent_transaction_id: t.parent_transaction_id,
      provider: t.provider,
      channel_id: t.channel_id,
      provider_transaction_id: t.provider_transaction_id,
      decline_code: t.decline_code,
      three_ds: t.three_ds,
      routing: routings.get(t.id)!,
      card: cardFactsOf(t.payment_instrument) satisfies CardFacts | null
    })),
    outflows: [...records.outflows].sort(byTimeThenId),
    events: records.events.map((e) => ({ id: e.id, type: e.type, created_at: e.created_at, deliveries: deliveriesOf.get(e.id) ?? [] })),
    three_ds_steps: threeDsStepsOf(records)
  }
}
