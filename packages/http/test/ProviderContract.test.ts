/**
 * One scenario table, run through Tender's HTTP API against every provider: the built-in sandbox
 * (a test account without channels) and one row per provider of the list (providers/Providers.ts), a
 * channel on that provider's fake (test accounts whose only channel is that one; added as the
 * operator's CLI adds them). A new provider's row is its cards, how it settles, and its fake's probe.
 * The server's config points every channel at the wire-level fakes (real HTTP, the official SDKs).
 * Then the live proofs of issue 11, over PostgreSQL: a live Stripe channel takes a card through
 * POST /v1/payments and through the hosted checkout; with Stripe refusing connections the payment
 * cascades to a lower Adyen channel; a charge whose answer was dropped is reconciled to exactly one
 * charge; transfers and channel-less live accounts are refused with the spec's codes.
 */
import { inspect } from "node:util"
import { Payments } from "@tender/domain"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { HOLDER_NAME_REFUSALS, REFUSAL_REASONS } from "@tender/adapters/providers/adyen/AdyenFake"
import { TEST_CARDS } from "@tender/adapters/providers/stripe/StripeFake"
import { send } from "@tender/client/Testing"
import type * as Providers from "@tender/adapters/providers/Providers"
import { type Merchant, payInBrowser, type Rig, startRig } from "./support/ProviderKit.ts"
import { apiError, type TenderPromiseClient, typedClient } from "./support/Typed.ts"

type ProviderName = "sandbox" | Providers.ProviderName

/** What the suite counts and breaks at a provider's fake (the sandbox has none: it answers in-process). */
interface FakeProbe {
  /** The charges the fake holds for a payment transaction (its reference), and in all. */
  readonly chargesAt: (rig: Rig, transactionId: string) => number
  readonly charges: (rig: Rig) => number
  /** The refunds the fake holds for a refund transaction. */
  readonly refundsAt: (rig: Rig, transactionId: string) => number
  /**
   * The fake applies the next charge or refund and loses its answer: cuts the connection
   * (`applyThenDrop`) or never answers (`timeout`: the rig gives a call 5 s, ProviderKit.ts).
   */
  readonly loseNext: (rig: Rig, call: "charge" | "refund", fault: "applyThenDrop" | "timeout") => void
}

/**
 * What differs between providers, and nothing else: each scenario below reads its cards and its
 * expectations from here.
 */
interface Row {
  readonly provider: ProviderName
  /** Approved, multicapture granted when the provider grants it. */
  readonly approve: string
  /** The provider's decline test cards, each with the normalized decline_code it must read as. */
  readonly declines: ReadonlyArray<readonly [card: string, declineCode: string]>
  /**
   * How an accepted capture or refund settles: in its answer (sandbox, Stripe), or by the provider's
   * notification (Adyen: a modification answers `received`, the capture is `settling` and the refund
   * `pending` until the CAPTURE / REFUND notification reaches /providers/{channel_id}/notifications).
   */
  readonly settles: "by answer" | "by notification"
  /**
   * A second capture of one authorization: the sandbox grants it, Stripe too (manual-capture intents
   * ask for multicapture); an Adyen channel has no setting for the merchant account's "multiple
   * partial captures", so its adapter refuses a second capture (multicapture_not_supported).
   */
  readonly multicapture: boolean
  readonly fake?: FakeProbe
}

/** contract.md: test mode takes the sandbox's test cards only, on every provider. */
const DECLINES: Row["declines"] = [["4000000000009995", "insufficient_funds"], ["4000000000000002", "card_declined"]]

const ROWS: ReadonlyArray<Row> = [
  { provider: "sandbox", approve: "4242424242424242", declines: DECLINES, settles: "by answer", multicapture: true },
  {
    provider: "stripe", approve: "4242424242424242", declines: DECLINES, settles: "by answer", multicapture: true,
    fake: {
      chargesAt: (rig, id) => rig.fakes.stripe.paymentIntents().filter((pi) => pi.metadata["tender_reference"] === id).length,
      charges: (rig) => rig.fakes.stripe.paymentIntents().length,
      refundsAt: (rig, id) => rig.fakes.stripe.refunds().filter((r) => r.metadata["tender_reference"] === id).length,
      // Stripe's SDK resends a cut request once: a replay that is cut too.
      loseNext: (rig, call, fault) => rig.fakes.stripe.fault(call === "charge" ? "create" : "refund", fault, fault === "applyThenDrop" ? 2 : 1)
    }
  },
  // The Adyen adapter asks Adyen's test environment for the declines by holder name (NOT_ENOUGH_BALANCE, DECLINED).
  {
    provider: "adyen", approve: "4242424242424242", declines: DECLINES, settles: "by notification", multicapture: false,
    fake: {
      chargesAt: (rig, id) => rig.fakes.adyen.payments().filter((p) => p.merchantReference === id).length,
      charges: (rig) => rig.fakes.adyen.payments().length,
      refundsAt: (rig, id) => rig.fakes.adyen.modifications().filter((m) => m.kind === "refund" && m.reference === id).length,
      loseNext: (rig, call, fault) => rig.fakes.adyen.fault(call === "charge" ? "payments" : "refunds", fault)
    }
  },
  {
    provider: "testpay", approve: "4242424242424242", declines: DECLINES, settles: "by answer", multicapture: true,
    fake: {
      chargesAt: (rig, id) => rig.fakes.testpay.charges().filter((c) => c.reference === id).length,
      charges: (rig) => rig.fakes.testpay.charges().length,
      refundsAt: (rig, id) => rig.fakes.testpay.refunds().filter((r) => r.reference === id).length,
      loseNext: (rig, call, fault) => rig.fakes.testpay.fault(call, fault)
    }
  }
]

// The table's cards are the fakes' own: a renamed or dropped test card fails here, not in a scenario.
expect(TEST_CARDS["4000000000009995"]?.outcome).toMatchObject({ decline_code: "insufficient_funds" })
expect(TEST_CARDS["4000000000000002"]?.outcome).toMatchObject({ decline_code: "generic_decline" })
expect(REFUSAL_REASONS[HOLDER_NAME_REFUSALS["NOT_ENOUGH_BALANCE"]!]).toBe("Not enough balance")
expect(REFUSAL_REASONS[HOLDER_NAME_REFUSALS["DECLINED"]!]).toBe("Refused")

/** One reconciliation round now (the server's own worker waits out a 60 s grace). */
const reconcile = (rig: Rig) =>
  rig.server.run(Effect.gen(function*() {
    return yield* (yield* Payments).reconcileDue({ graceMs: 0, horizonMs: 60_000 })
  }))

let seq = 0
const ref = (label: string) => `${label}-${Date.now()}-${++seq}`

describe.each(ROWS)("contract: $provider", (row) => {
  let rig: Rig
  let merchant: Merchant
  let tender: TenderPromiseClient
  /** The channel the payments go to; null for the sandbox. */
  let channelId: string | null = null

  beforeAll(async () => {
    rig = await startRig()
    merchant = await rig.merchant("test")
    tender = typedClient(rig.server, merchant)
    if (row.provider !== "sandbox") channelId = (await rig.addChannel(merchant, row.provider, "test")).id
  }, 60_000)
  afterAll(() => rig?.close())

  const tokenize = async (number: string) =>
    (await tender.testHelpers.createCardToken({ number, exp_month: 12, exp_year: 2035, cvc: "123", holder_name: "Ada Lovelace" })).token

  /** A merchant-initiated card charge on a vaulted card token (it authorizes in the create). */
  const charge = async (number: string, extra: { capture_method?: "automatic" | "manual"; merchant_reference?: string; reason?: string | undefined } = {}) => {
    const { reason, ...rest } = { reason: "unscheduled", ...extra }
    return tender.payments.create({
      amount: "100.00",
      currency: "USD",
      country: "US",
      merchant_reference: ref(row.provider),
      payment_method: {
        code: "card",
        details: { card_token: await tokenize(number), stored_credential: { initiator: "merchant", ...(reason === undefined ? {} : { reason }) } }
      },
      ...rest
    })
  }

  /**
   * Runs `steps` with the provider's notifications delivered to the channel when it settles by them
   * (the sandbox and Stripe settle in the answer: nothing to deliver); `settled` waits until what
   * was delivered so far is applied.
   */
  const settling = (steps: () => Promise<void>) =>
    row.settles === "by notification" ? rig.notifying(channelId!, steps) : steps()
  const settled = () => row.settles === "by notification" ? rig.delivered() : Promise.resolve()

  /** The refunds the provider holds for a refund transaction. */
  const refundsAt = (transactionId: string) => row.fake!.refundsAt(rig, transactionId)

  /** Every charge the provider holds (the sandbox keeps no inspectable count: 0). */
  const chargesCount = () => row.fake?.charges(rig) ?? 0

  /** The charges the provider holds for a payment transaction (the sandbox keeps no inspectable count). */
  const chargesAt = (transactionId: string) => row.fake?.chargesAt(rig, transactionId)

  // Spec: "`payment_method.details` fields named: `card_token`, `stored_credential` (`initiator`,
  // `reason`)"; "A merchant-initiated charge (`stored_credential.initiator` = `merchant`, with a
  // `reason` such as `unscheduled`) authorizes in the create itself."
  it.each([
    ["unscheduled", "unscheduled", "UnscheduledCardOnFile"],
    ["recurring", "recurring", "Subscription"],
    ["installment", "installment", "Subscription"],
    [undefined, "unscheduled", "UnscheduledCardOnFile"]
  ] as const)("stored_credential.reason %s reaches the provider as its own field (Stripe %s, Adyen %s)", async (reason, stripeUsage, adyenModel) => {
    const paid = await charge(row.approve, { reason })
    expect(paid.status).toBe("completed")
    if (row.provider === "stripe") {
      const intent = rig.fakes.stripe.paymentIntents().find((pi) => pi.metadata["tender_reference"] === paid.transaction_id)!
      expect({ off_session: intent.off_session, usage: intent.payment_method_options.card.stored_credential_usage }).toEqual({ off_session: true, usage: stripeUsage })
    }
    if (row.provider === "adyen") {
      const payment = rig.fakes.adyen.payments().find((p) => p.merchantReference === paid.transaction_id)!
      expect({ interaction: payment.shopperInteraction, model: payment.recurringProcessingModel }).toEqual({ interaction: "ContAuth", model: adyenModel })
    }
  })

  it("a stored_credential.reason outside unscheduled, recurring, installment: 400 naming it, nothing sent", async () => {
    const before = chargesCount()
    const refused = await send(rig.server, merchant, "POST", "/v1/payments", {
      body: JSON.stringify({
        amount: "100.00", currency: "USD", country: "US", merchant_reference: ref(row.provider),
        payment_method: { code: "card", details: { card_token: await tokenize(row.approve), stored_credential: { initiator: "merchant", reason: "whenever" } } }
      })
    })
    expect(refused.status).toBe(400)
    expect(refused.json).toMatchObject({ code: "validation_failed", errors: [{ field: "payment_method.details.stored_credential.reason" }] })
    expect(chargesCount()).toBe(before)
  })

  it("approve with automatic capture: completed, the order succeeded, one charge on the channel", async () => {
    const paid = await charge(row.approve)
    expect(paid).toMatchObject({ status: "completed", provider_transaction_id: expect.any(String) })
    expect((await tender.orders.get({ params: { id: paid.order_id } })).status).toBe("succeeded")
    expect((await rig.transactionsOf(paid.order_id)).map((t) => [t.kind, t.channel_id])).toEqual([["payment", channelId]])
    if (row.provider !== "sandbox") expect(chargesAt(paid.transaction_id)).toBe(1)
  })

  it.each(row.declines)("decline %s: failed, decline_code %s", async (card, declineCode) => {
    const declined = await charge(card)
    expect(declined.status).toBe("failed")
    expect((await tender.transactions.get({ params: { id: declined.transaction_id } })).decline_code).toBe(declineCode)
    expect((await tender.orders.get({ params: { id: declined.order_id } })).status).toBe("failed")
  })

  it(`manual capture: a partial capture, then the final one (settled ${row.settles}; multicapture ${row.multicapture ? "granted" : "not granted"})`, async () => {
    const auth = await charge(row.approve, { capture_method: "manual" })
    expect(auth.status).toBe("authorized")
    await settling(async () => {
      const part = await tender.payments.capture({ order_id: auth.order_id, amount: "40.00", final: false })
      expect(part).toMatchObject(row.settles === "by answer" ? { status: "authorized", captured_amount: 40 } : { status: "settling", captured_amount: 0 })
      await settled()
      expect(await tender.orders.get({ params: { id: auth.order_id } })).toMatchObject({ status: "authorized", captured_amount: 40 })
      const last = await tender.payments.capture({ order_id: auth.order_id })
      if (row.multicapture) {
        expect(last).toMatchObject({ status: row.settles === "by answer" ? "completed" : "settling" })
        await settled()
        expect(await tender.orders.get({ params: { id: auth.order_id } })).toMatchObject({ status: "succeeded", captured_amount: 100 })
      } else {
        expect(last).toMatchObject({ status: "failed", captured_amount: 40 })
        expect((await tender.transactions.get({ params: { id: last.transaction_id } })).decline_code).toBe("multicapture_not_supported")
        // The authorization stands: what is left of it is voidable.
        expect(await tender.payments.void({ order_id: auth.order_id })).toMatchObject({ voided_amount: 60, captured_amount: 40 })
      }
    })
    // Every follow-up went to the authorization's own channel.
    expect(new Set((await rig.transactionsOf(auth.order_id)).map((t) => t.channel_id))).toEqual(new Set([channelId]))
  })

  it("checkout session: a declined attempt leaves it open, the next card completes it, both on the channel", async () => {
    const post = (path: string, body: unknown) => send(rig.server, merchant, "POST", path, { body: JSON.stringify(body) })
    const attempt = (id: string, number: string) =>
      post(`/v1/test_helpers/checkout/sessions/${id}/attempt`, { payment_method: { code: "card", details: { card: { number, exp_month: 12, exp_year: 2035, cvc: "123" } } } })
    const session = (await post("/v1/checkout/sessions", {
      amount: "30.00", currency: "USD", country: "US", merchant_reference: ref("cs"), success_url: "https://shop.example/ok", cancel_url: "https://shop.example/no"
    })).json
    const [declineCard, declineCode] = row.declines[0]!
    expect((await attempt(session.id, declineCard)).json).toMatchObject({ status: "open", attempts: 1 })
    const paid = await attempt(session.id, row.approve)
    expect(paid.json).toMatchObject({ status: "completed", attempts: 2, transaction_id: expect.stringMatching(/^txn_/) })
    const [declined, settled] = await rig.transactionsOf(session.order_id)
    expect(declined).toMatchObject({ status: "failed", decline_code: declineCode, channel_id: channelId })
    expect(settled).toMatchObject({ id: paid.json.transaction_id, channel_id: channelId })
    if (row.provider !== "sandbox") expect([chargesAt(declined!.id), chargesAt(settled!.id)]).toEqual([1, 1])
  })

  it("void: canceled, the whole hold voided", async () => {
    const auth = await charge(row.approve, { capture_method: "manual" })
    const voided = await tender.payments.void({ order_id: auth.order_id })
    expect(voided).toMatchObject({ status: "canceled", voided_amount: 100 })
    expect((await tender.orders.get({ params: { id: auth.order_id } })).status).toBe("canceled")
  })

  it(`refund, partial then the rest (settled ${row.settles})`, async () => {
    const paid = await charge(row.approve)
    const answered = row.settles === "by answer" ? "succeeded" : "pending"
    await settling(async () => {
      const part = await tender.refunds.create({ order_id: paid.order_id, amount: "30.00" })
      expect(part).toMatchObject({ status: answered, amount: 30, original_transaction_id: paid.transaction_id })
      await settled()
      expect((await tender.refunds.get({ params: { id: part.id } })).status).toBe("succeeded")
      const rest = await tender.refunds.create({ order_id: paid.order_id })
      expect(rest).toMatchObject({ status: answered, amount: 70 })
      await settled()
      expect((await tender.refunds.get({ params: { id: rest.id } })).status).toBe("succeeded")
    })
    await apiError(tender.refunds.create({ order_id: paid.order_id, amount: "1.00" }), 409, "refund_already_fully_refunded")
    expect((await tender.orders.get({ params: { id: paid.order_id } })).refunded_amount).toBe(100)
    const refunds = (await rig.transactionsOf(paid.order_id)).filter((t) => t.kind === "refund")
    expect(refunds.map((t) => t.channel_id)).toEqual([channelId, channelId])
  })

  const loseNext = (call: "charge" | "refund", fault: "applyThenDrop" | "timeout") => row.fake!.loseNext(rig, call, fault)

  // The sandbox answers in-process and sends no notifications: only a crash of Tender loses its
  // answer (the crash tests, packages/cli/test/Faults.test.ts), so its row has none of these cases.
  describe.skipIf(row.fake === undefined)("lost answers and notifications", () => {
    it.each(["applyThenDrop", "timeout"] as const)("a charge's answer lost (%s): in progress, then reconciled by lookup to one charge", async (fault) => {
      loseNext("charge", fault)
      const reference = ref(fault)
      await apiError(charge(row.approve, { merchant_reference: reference }), 409, "card_payment_in_progress")
      const order = await tender.orders.byReference({ params: { merchant_reference: reference } })
      expect(order.status).not.toBe("succeeded")
      const [payment] = order.transactions
      expect(chargesAt(payment!)).toBe(1)
      expect(await reconcile(rig)).toBeGreaterThanOrEqual(1)
      expect((await tender.orders.get({ params: { id: order.id } })).status).toBe("succeeded")
      expect(chargesAt(payment!)).toBe(1)
    }, 60_000)

    // The fake sends its notification as it answers: which reaches Tender first is the race itself.
    it("an approved charge and its notification, in whichever order they land: one payment.succeeded", async () => {
      const paid = await rig.notifying(channelId!, () => charge(row.approve))
      expect(paid.status).toBe("completed")
      expect((await tender.orders.get({ params: { id: paid.order_id } })).status).toBe("succeeded")
      expect((await Effect.runPromise(rig.server.events(paid.order_id))).map((e) => e.type)).toEqual(["payment.succeeded"])
    })

    it("a charge's answer lost, the provider's notification delivered: recorded from the notification, no reconciliation needed", async () => {
      const reference = ref("notified")
      await rig.notifying(channelId!, async () => {
        loseNext("charge", "applyThenDrop")
        await apiError(charge(row.approve, { merchant_reference: reference }), 409, "card_payment_in_progress")
      })
      const order = await tender.orders.byReference({ params: { merchant_reference: reference } })
      expect(order.status).toBe("succeeded")
      expect(chargesAt(order.transactions[0]!)).toBe(1)
    })

    it(`a refund's answer lost: in progress, then reconciled by lookup to one refund`, async () => {
      const paid = await charge(row.approve)
      loseNext("refund", "applyThenDrop")
      await apiError(tender.refunds.create({ order_id: paid.order_id, amount: "25.00" }), 409, "refund_in_progress")
      const refundOf = async () => (await rig.transactionsOf(paid.order_id)).find((t) => t.kind === "refund")!
      const inDoubt = await refundOf()
      // In flight: the call stays reserved (its key) for reconciliation to ask about.
      expect(inDoubt.pending_call).not.toBeNull()
      expect(refundsAt(inDoubt.id)).toBe(1)
      expect(await reconcile(rig)).toBeGreaterThanOrEqual(1)
      expect((await refundOf()).pending_call).toBeNull()
      // Adyen's refund is still pending at the provider (no notification is delivered here): contract.md,
      // a refund "waiting at the provider (queued, settling later) reads pending".
      const read = await tender.transactions.get({ params: { id: inDoubt.id } })
      expect(read).toMatchObject({ subtype: "refund", amount: 25, status: row.settles === "by answer" ? "completed" : "pending" })
      expect(refundsAt(inDoubt.id)).toBe(1)
      if (row.settles === "by answer") expect((await tender.orders.get({ params: { id: paid.order_id } })).refunded_amount).toBe(25)
    })
  })
})

describe("live mode on the fakes (PostgreSQL storage)", () => {
  const LIVE_KEY = "sk_live_contract"
  // A fresh embedded PostgreSQL: channels, their sealed credentials, transactions' channel_id and the
  // Adyen journal as production stores them.
  let rig: Rig
  /** A live account whose only channel is Stripe. */
  let stripeShop: Merchant
  let stripeChannel: string
  /** A live account with Stripe first (priority 10) and Adyen after it. */
  let cascadeShop: Merchant
  let cascadeStripe: string
  let cascadeAdyen: string
  /** A live account without channels. */
  let bareShop: Merchant
  /** Every line the process wrote while the block ran (the server logs in-process, e.g. a cascade). */
  const written: Array<string> = []
  /** Every answer a browser got (tender.js's calls). */
  const answered: Array<string> = []

  beforeAll(async () => {
    for (const stream of [process.stdout, process.stderr]) {
      const original = stream.write.bind(stream)
      vi.spyOn(stream, "write").mockImplementation(((chunk: unknown, ...rest: Array<unknown>) => {
        written.push(String(chunk))
        return (original as (...args: Array<unknown>) => boolean)(chunk, ...rest)
      }) as typeof stream.write)
    }
    for (const method of ["log", "info", "warn", "error", "debug"] as const) {
      vi.spyOn(console, method).mockImplementation((...args: Array<unknown>) => void written.push(args.map((arg) => typeof arg === "string" ? arg : inspect(arg, { depth: 10 })).join(" ")))
    }
    rig = await startRig({ stripeKey: LIVE_KEY, postgres: true })
    stripeShop = await rig.merchant("live")
    stripeChannel = (await rig.addChannel(stripeShop, "stripe", "live")).id
    cascadeShop = await rig.merchant("live")
    cascadeStripe = (await rig.addChannel(cascadeShop, "stripe", "live", 10)).id
    cascadeAdyen = (await rig.addChannel(cascadeShop, "adyen", "live", 0)).id
    bareShop = await rig.merchant("live")
  }, 120_000)
  afterAll(async () => {
    vi.restoreAllMocks()
    await rig?.close()
  })

  const urls = { success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" }
  const post = (as: Merchant, path: string, body: unknown) => send(rig.server, as, "POST", path, { body: JSON.stringify(body) })
  const get = (as: Merchant, path: string) => send(rig.server, as, "GET", path)

  /** A customer-present live card payment: POST /v1/payments waits for the card (collect_card); the browser pays it. */
  // contract.md: live mode takes no test card (4242… is one): a card of the providers' own.
  const livePayment = async (as: Merchant, number = "4111111111111111") => {
    const created = await post(as, "/v1/payments", {
      amount: "42.00", currency: "EUR", country: "NL", merchant_reference: ref("live"), payment_method: { code: "card" }, ...urls
    })
    expect(created.status, created.text).toBe(200)
    expect(created.json).toMatchObject({ status: "requires_action", next_action: { type: "collect_card" } })
    const paid = await payInBrowser(rig.server.baseUrl, as.publishable_key, created.json.next_action.client_secret, number)
    answered.push(paid.text)
    return { order_id: created.json.order_id as string, paid }
  }
  const intentsFor = (transactionId: string) =>
    rig.fakes.stripe.paymentIntents().filter((pi) => pi.metadata["tender_reference"] === transactionId)
  const adyenPaymentsFor = (transactionId: string) => rig.fakes.adyen.payments().filter((p) => p.merchantReference === transactionId)

  it("a Stripe channel takes a card through POST /v1/payments: succeeded, the transaction on the channel, one live PaymentIntent", async () => {
    const { order_id, paid } = await livePayment(stripeShop)
    expect(paid.status, paid.text).toBe(200)
    expect(paid.json).toMatchObject({ status: "succeeded" })
    expect((await get(stripeShop, `/v1/orders/${order_id}`)).json).toMatchObject({ status: "succeeded", livemode: true })
    const [txn] = await rig.transactionsOf(order_id)
    expect(txn).toMatchObject({ kind: "payment", provider: "stripe", channel_id: stripeChannel })
    expect(intentsFor(txn!.id).map((pi) => pi.status)).toEqual(["succeeded"])
  })

  it("a Stripe channel takes a card through the hosted checkout (non-3DS card), page by page over HTTP", async () => {
    const created = await post(stripeShop, "/v1/checkout/sessions", { amount: "19.90", currency: "EUR", country: "NL", merchant_reference: ref("live-cs"), ...urls })
    expect(created.status, created.text).toBe(201)
    const session = created.json
    const page = await fetch(session.url)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain("<form")
    // The page's card glue starts the card attempt: the customer fields in, the collect_card secret out.
    const started = await fetch(`${session.url}/card`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "method=card",
      redirect: "manual"
    })
    const startedBody = await started.text()
    expect(started.status, startedBody).toBe(200)
    const secret = JSON.parse(startedBody).client_secret as string
    const paid = await payInBrowser(rig.server.baseUrl, stripeShop.publishable_key, secret, "4111111111111111")
    expect(paid.json, paid.text).toMatchObject({ status: "succeeded" })
    // After pay the glue goes on to where the session stands: the merchant's success page.
    const next = await fetch(`${session.url}/continue`, { redirect: "manual" })
    expect(next.status).toBe(303)
    expect(next.headers.get("location")).toContain("https://shop.example/ok")
    expect((await get(stripeShop, `/v1/checkout/sessions/${session.id}`)).json).toMatchObject({ status: "completed" })
    const [txn] = await rig.transactionsOf(session.order_id)
    expect(txn).toMatchObject({ provider: "stripe", channel_id: stripeChannel })
    expect(intentsFor(txn!.id)).toHaveLength(1)
  })

  it("Stripe refusing connections: the payment cascades to the Adyen channel of lower priority, one payment at Adyen, none at Stripe", async () => {
    await rig.fakes.stripe.refuse()
    try {
      const { order_id, paid } = await livePayment(cascadeShop, "4111111111111111")
      expect(paid.json, paid.text).toMatchObject({ status: "succeeded" })
      const [txn] = await rig.transactionsOf(order_id)
      expect(txn).toMatchObject({ provider: "adyen", channel_id: cascadeAdyen })
      expect(adyenPaymentsFor(txn!.id).map((p) => p.status)).toEqual(["Authorised"])
      expect(intentsFor(txn!.id)).toEqual([])
      expect((await get(cascadeShop, `/v1/orders/${order_id}`)).json.status).toBe("succeeded")
    } finally {
      await rig.fakes.stripe.accept()
    }
    // Stripe back: the next payment goes to it again (priority, not a sticky failover).
    const { order_id } = await livePayment(cascadeShop)
    expect((await rig.transactionsOf(order_id))[0]).toMatchObject({ channel_id: cascadeStripe })
  })

  it("both channels refusing connections: the attempt failed provider_unavailable on the last channel, nothing charged", async () => {
    await Promise.all([rig.fakes.stripe.refuse(), rig.fakes.adyen.refuse()])
    try {
      const { order_id, paid } = await livePayment(cascadeShop, "4111111111111111")
      // tender.js's pay answers the payment's outcome (the server API's create would be 502).
      expect(paid.json, paid.text).toMatchObject({ status: "failed", decline_code: "provider_unavailable" })
      const [txn] = await rig.transactionsOf(order_id)
      expect(txn).toMatchObject({ channel_id: cascadeAdyen, status: "failed", decline_code: "provider_unavailable" })
      expect(adyenPaymentsFor(txn!.id)).toEqual([])
      expect(intentsFor(txn!.id)).toEqual([])
    } finally {
      await Promise.all([rig.fakes.stripe.accept(), rig.fakes.adyen.accept()])
    }
  })

  it("an answer in doubt never cascades: Stripe's dropped answer stays with Stripe, reconciled there; Adyen never sees the payment", async () => {
    rig.fakes.stripe.fault("create", "applyThenDrop", 2)
    const { order_id, paid } = await livePayment(cascadeShop)
    expect(paid.status, paid.text).toBe(409)
    const [txn] = await rig.transactionsOf(order_id)
    expect(txn).toMatchObject({ channel_id: cascadeStripe })
    expect(await reconcile(rig)).toBeGreaterThanOrEqual(1)
    expect((await get(cascadeShop, `/v1/orders/${order_id}`)).json.status).toBe("succeeded")
    expect(intentsFor(txn!.id)).toHaveLength(1)
    expect(adyenPaymentsFor(txn!.id)).toEqual([])
  })

  it("the response dropped after the charge: in progress, then exactly one charge at Stripe after reconciliation, and the payment succeeded", async () => {
    rig.fakes.stripe.fault("create", "applyThenDrop", 2) // the SDK resends a dropped request once
    const { order_id, paid } = await livePayment(stripeShop)
    expect(paid.status, paid.text).toBe(409)
    const [txn] = await rig.transactionsOf(order_id)
    expect(intentsFor(txn!.id)).toHaveLength(1)
    expect((await get(stripeShop, `/v1/orders/${order_id}`)).json.status).not.toBe("succeeded")
    expect(await reconcile(rig)).toBeGreaterThanOrEqual(1)
    expect((await get(stripeShop, `/v1/orders/${order_id}`)).json.status).toBe("succeeded")
    expect(intentsFor(txn!.id).map((pi) => pi.status)).toEqual(["succeeded"])
  })

  describe("transfers on an account whose channels pay none (operations/Route.ts transferRoute)", () => {
    const transfer = (as: Merchant, extra: Record<string, unknown> = {}) =>
      post(as, "/v1/transfers", {
        amount: "50.00", currency: "EUR", country: "NL", merchant_reference: ref("tr"),
        payment_method: { code: "bank_transfer", details: { account_number: "NL91ABNA0417164300", holder_name: "Ada Lovelace" } },
        ...extra
      })
    const expectCode = (reply: { status: number; json?: any }, status: number, code: string) =>
      expect({ status: reply.status, code: reply.json?.code }).toEqual({ status, code })

    it("without channel_id: 400 transfer_unroutable", async () => {
      expectCode(await transfer(stripeShop), 400, "transfer_unroutable")
    })

    it("with the Stripe channel's id: 409 transfer_not_supported_by_provider", async () => {
      expectCode(await transfer(stripeShop, { channel_id: stripeChannel }), 409, "transfer_not_supported_by_provider")
    })

    it("with an unknown, another account's, or a disabled channel id: 409 provider_not_enabled_for_merchant", async () => {
      expectCode(await transfer(stripeShop, { channel_id: "ch_unknown" }), 409, "provider_not_enabled_for_merchant")
      expectCode(await transfer(stripeShop, { channel_id: cascadeAdyen }), 409, "provider_not_enabled_for_merchant")
      const shop = await rig.merchant("live")
      const channel = await rig.addChannel(shop, "adyen", "live")
      await rig.disableChannel(shop, channel.id)
      expectCode(await transfer(shop, { channel_id: channel.id }), 409, "provider_not_enabled_for_merchant")
    })
  })

  it("a live account without channels: payments, sessions and transfers are 404 payment_unroutable", async () => {
    const reference = ref("bare")
    const payment = await post(bareShop, "/v1/payments", { amount: "10.00", currency: "EUR", country: "NL", merchant_reference: reference, payment_method: { code: "card" }, ...urls })
    expect({ status: payment.status, code: payment.json?.code }).toEqual({ status: 404, code: "payment_unroutable" })
    const session = await post(bareShop, "/v1/checkout/sessions", { amount: "10.00", currency: "EUR", merchant_reference: ref("bare-cs"), ...urls })
    expect({ status: session.status, code: session.json?.code }).toEqual({ status: 404, code: "payment_unroutable" })
    const transfer = await post(bareShop, "/v1/transfers", {
      amount: "10.00", currency: "EUR", country: "NL", merchant_reference: ref("bare-tr"),
      payment_method: { code: "bank_transfer", details: { account_number: "NL91ABNA0417164300", holder_name: "Ada Lovelace" } }
    })
    expect({ status: transfer.status, code: transfer.json?.code }).toEqual({ status: 404, code: "payment_unroutable" })
    // Refused before anything is stored.
    expect((await post(bareShop, "/v1/orders/search", { merchant_reference: reference })).json.data).toEqual([])
  })

  it("no card number, CVC, expiry or provider secret in what the process wrote or the browser got (house rule)", async () => {
    // The capture works: the cascade's log line is among what was written.
    expect(written.join("")).toContain(`cascading to adyen channel ${cascadeAdyen}`)
    const secrets = [LIVE_KEY, rig.fakes.adyen.apiKey, "4242424242424242", "4111111111111111", "whsec_contract", "2035"]
    for (const text of [...written, ...answered]) {
      for (const secret of secrets) expect(text).not.toContain(secret)
      expect(text).not.toMatch(/"cvc"/)
    }
  })
})
