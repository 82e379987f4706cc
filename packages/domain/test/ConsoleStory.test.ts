/**
 * The story's routing and 3-D Secure steps (review S4), from records as storage reads them: the
 * contract (ConsoleReadsContract.ts) checks them over real payments; this, the cases the sandbox
 * cannot make (an unreachable channel, a pinning profile, a denied challenge).
 */
import { describe, expect, it } from "vitest"
import { type StoryRecords, storyOf, type StoryTransactionRecord } from "../src/console/Story.ts"

const txn = (id: string, over: Partial<StoryTransactionRecord>): StoryTransactionRecord => ({
  id,
  kind: "authorization",
  status: "completed",
  amount: 1000,
  currency: "USD",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  parent_transaction_id: null,
  provider: "sandbox",
  channel_id: null,
  processing_profile: null,
  provider_transaction_id: null,
  decline_code: null,
  three_ds: null,
  payment_instrument: null,
  ...over
})

const records = (transactions: ReadonlyArray<StoryTransactionRecord>, events: StoryRecords["events"] = []): StoryRecords => ({
  order: {
    id: "ord_1", account_id: "acct_1", status: "failed", amount: 1000, currency: "USD", refunded_amount: 0, payment_method: "card",
    capture_method: "manual", merchant_reference: null, processing_profile: "eu", livemode: false,
    created_at: "2026-01-01T00:00:00.000Z", updated_at: "2026-01-01T00:00:00.000Z"
  },
  transactions,
  outflows: [],
  events,
  deliveries: [],
  attempts: []
})

describe("the story's routing and 3-D Secure steps", () => {
  it("each attempt's place in the cascade and how the one before ended; what follows an attempt keeps its channel alone", () => {
    const story = storyOf(records([
      txn("txn_1", { provider: "stripe", channel_id: "ch_1", processing_profile: "eu", status: "failed", decline_code: "provider_unavailable" }),
      txn("txn_2", { provider: "adyen", channel_id: "ch_2", processing_profile: "eu", status: "failed", decline_code: "do_not_honor" }),
      txn("txn_3", { provider: "adyen", channel_id: "ch_2", processing_profile: "eu" }),
      txn("txn_4", { kind: "capture", parent_transaction_id: "txn_3", provider: "adyen", channel_id: "ch_2", processing_profile: "eu" })
    ]))
    expect(story.transactions.map((t) => t.routing)).toEqual([
      "channel ch_1 (stripe), processing profile eu; attempt 1 of the cascade",
      "channel ch_2 (adyen), processing profile eu; attempt 2 of the cascade, after channel ch_1 (stripe) unreachable",
      "channel ch_2 (adyen), processing profile eu; attempt 3 of the cascade, after channel ch_2 (adyen) declined",
      "channel ch_2 (adyen), processing profile eu"
    ])
    expect(story.three_ds_steps).toEqual([])
  })

  it("an attempt that recorded its routing (issue 27) explains it: rule, version, candidates, why, which try; older rows keep the old text", () => {
    const routing = { rule: "eu-cards", version: 3, candidates: ["ch_1", "ch_2"], channel: "ch_1", reason: "rule", attempt: 1 } as const
    const story = storyOf(records([
      txn("txn_1", { provider: "stripe", channel_id: "ch_1", processing_profile: null, status: "failed", decline_code: "processing_error", routing }),
      txn("txn_2", { provider: "adyen", channel_id: "ch_2", processing_profile: null, routing: { ...routing, channel: "ch_2", reason: "retry", attempt: 2 } }),
      txn("txn_3", { kind: "capture", parent_transaction_id: "txn_2", provider: "adyen", channel_id: "ch_2", processing_profile: null, routing: null })
    ]))
    expect(story.transactions.map((t) => t.routing)).toEqual([
      "channel ch_1 (stripe); rule eu-cards of rules v3; candidates ch_1, ch_2; the first channel of the rule (rule), try 1; attempt 1 of the cascade",
      "channel ch_2 (adyen); rule eu-cards of rules v3; candidates ch_1, ch_2; the next candidate after the previous try (retry), try 2; attempt 2 of the cascade, after channel ch_1 (stripe) declined",
      "channel ch_2 (adyen)"
    ])
  })

  it("3-D Secure: each challenge asked and its result; a customer step without 3-D Secure is none", () => {
    const at = (s: number) => `2026-01-01T00:00:0${s}.000Z`
    const events = [
      { id: "evt_0", type: "payment.requires_action", created_at: at(0), next_action_type: "collect_cvv" },
      { id: "evt_1", type: "payment.requires_action", created_at: at(1), next_action_type: "redirect" },
      { id: "evt_2", type: "payment.failed", created_at: at(2), next_action_type: null }
    ]
    // The security code asked first (evt_0) is no 3-D Secure step.
    const denied = storyOf(records([txn("txn_1", { status: "failed", decline_code: "authentication_failed", three_ds: "denied" })], events))
    expect(denied.three_ds_steps).toEqual([
      { at: at(1), step: "3-D Secure challenge asked of the customer (payment.requires_action)" },
      { at: at(2), step: "3-D Secure denied: payment failed (payment.failed)" }
    ])
    // A redirect method's customer step: the same event, no 3-D Secure.
    expect(storyOf(records([txn("txn_1", { kind: "payment" })], events)).three_ds_steps).toEqual([])
  })
})

describe("the timeline's order", () => {
  it("made in the same millisecond, a parent comes before its children, whatever their ids", () => {
    // Storage orders a tie by id: here the capture's and the void's ids sort before the authorization's.
    const story = storyOf(records([
      txn("txn_a_capture", { kind: "capture", parent_transaction_id: "txn_z_auth" }),
      txn("txn_b_release", { kind: "void", parent_transaction_id: "txn_a_capture" }),
      txn("txn_z_auth", {})
    ]))
    expect(story.transactions.map((t) => t.id)).toEqual(["txn_z_auth", "txn_a_capture", "txn_b_release"])
    // Time still comes first.
    const later = storyOf(records([txn("txn_z_auth", { created_at: "2026-01-01T00:00:01.000Z" }), txn("txn_a", {})]))
    expect(later.transactions.map((t) => t.id)).toEqual(["txn_a", "txn_z_auth"])
  })
})
