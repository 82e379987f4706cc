/**
 * The console reads' contract (issue 26): what ConsoleReads promises whatever holds the data. The
 * memory and PostgreSQL storages pass the same assertions (test/consoleReads.memory.test.ts,
 * test/consoleReads.postgres.test.ts).
 *
 * The data is made the way production makes it: the use cases over the whole infrastructure (the
 * sandbox provider and its test cards, captures, refunds, payouts, transfers, sessions, customers)
 * and real webhook deliveries over HTTP to a loopback receiver, one answering 200 and one port
 * refusing connections. So the story's shape is the one an operator will read.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { expect, layer as layerTests } from "@effect/vitest"
import {
  type Account,
  Accounts,
  CardTokens,
  type ConsoleQuery,
  ConsoleReads,
  type ConsoleRow,
  Customers,
  Outflows,
  Payments,
  Sessions,
  Transfers,
  UseCases,
  Webhooks
} from "@tender/domain"
import { Context, type Duration, Effect, Layer, Option } from "effect"
import type { Ports } from "../Infrastructure.ts"

const CARDS = {
  visa: "4242424242424242",
  mastercard: "5555555555554444",
  declined: "4000000000000002",
  challenge: "4000000000003220"
} as const
const CVC = "737"
const URLS = { success_url: "https://merchant.example/ok", cancel_url: "https://merchant.example/cancel" }

/** What the seed made, for the assertions. */
interface Facts {
  readonly a: Account.Account
  readonly b: Account.Account
  /** A manual 100.00 USD visa payment: 30.00 captured (not final), 10.00 of it refunded. */
  readonly manual: string
  readonly captureRefund: string
  /** An automatic 25.00 EUR mastercard payment with a 5.00 payout. */
  readonly eur: string
  readonly payout: string
  /** A declined 50.00 USD payment (card_declined, last four 0002). */
  readonly declined: string
  /** A 3-D Secure challenge, approved. */
  readonly challenged: string
  /** Account C's session order, paid at its second attempt (visa) after a declined one (last four 0002). */
  readonly retried: string
  readonly session: string
  readonly transfer: string
  readonly customer: string
  /** Account B's 100.00 USD visa payment under the same reference as `manual`. */
  readonly other: string
  /** Strings that must never reach a console page. */
  readonly secrets: ReadonlyArray<string>
  /** The endpoint answering 200, and the one whose port refuses connections. */
  readonly okUrl: string
  readonly refusedUrl: string
}

class Seeded extends Context.Service<Seeded, Facts>()("@tender/adapters/testing/ConsoleReadsContract/Seeded") {}

/** A loopback receiver answering 200 to every webhook, for the scope. */
const receiver = Effect.acquireRelease(
  Effect.callback<http.Server>((resume) => {
    const server = http.createServer((request, response) => {
      request.resume()
      request.on("end", () => response.writeHead(200, { "content-type": "text/plain" }).end("received"))
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.callback<void>((resume) => {
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })
).pipe(Effect.map((server) => (server.address() as AddressInfo).port))

/** A loopback port nothing listens on (a server's, closed again). */
const closedPort = Effect.callback<number>((resume) => {
  const server = http.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

let run = 0

const seed = Effect.gen(function*() {
  const accounts = yield* Accounts
  const tokens = yield* CardTokens
  const payments = yield* Payments
  const outflows = yield* Outflows
  const webhooks = yield* Webhooks
  const tag = `${Date.now()}-${++run}`
  const account = (name: string) => Effect.flatMap(accounts.create({ name, mode: "test" }), (c) => accounts.get(c.account_id))
  const a = yield* account(`console-a-${tag}`)
  const b = yield* account(`console-b-${tag}`)
  const okUrl = `http://127.0.0.1:${yield* receiver}/hooks`
  const refusedUrl = `http://127.0.0.1:${yield* closedPort}/hooks`
  yield* webhooks.createEndpoint(a, { url: okUrl })
  yield* webhooks.createEndpoint(a, { url: refusedUrl })

  const card = (owner: Account.Account, number: string) =>
    Effect.map(tokens.tokenize(owner, { number, exp_month: 12, exp_year: 2031, cvc: CVC }), (t) => t.token)
  const charge = (owner: Account.Account, number: string, input: { amount: string; currency: string; reference: string; manual?: boolean }) =>
    Effect.flatMap(card(owner, number), (token) =>
      payments.create(owner, {
        amount: input.amount,
        currency: input.currency,
        country: input.currency === "EUR" ? "NL" : "US",
        merchant_reference: input.reference,
        ...(input.manual === true ? { capture_method: "manual" as const } : {}),
        payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
      }))

  const manual = yield* charge(a, CARDS.visa, { amount: "100.00", currency: "USD", reference: `ref-manual-${tag}`, manual: true })
  yield* payments.capture(a, { order_id: manual.order_id, amount: "30.00", final: false })
  const captureRefund = yield* outflows.refund(a, { order_id: manual.order_id, amount: "10.00", refund_reference: `rf-${tag}` })
  const eur = yield* charge(a, CARDS.mastercard, { amount: "25.00", currency: "EUR", reference: `ref-eur-${tag}` })
  const payout = yield* outflows.payout(a, { order_id: eur.order_id, amount: "5.00" })
  // Declined: the create answers the refusal; the order and its failed attempt stay, found below by their last four.
  yield* Effect.ignore(charge(a, CARDS.declined, { amount: "50.00", currency: "USD", reference: `ref-declined-${tag}` }))
  const challengeToken = yield* card(a, CARDS.challenge)
  const challenged = yield* payments.create(a, {
    amount: "12.34",
    currency: "USD",
    country: "US",
    merchant_reference: `ref-3ds-${tag}`,
    collect_cvv: false,
    payment_method: { code: "card", details: { card_token: challengeToken } },
    ...URLS
  })
  yield* payments.answerChallenge(challenged.transaction_id, true)
  yield* payments.completeThreeDs(a, challenged.order_id)
  const session = yield* (yield* Sessions).create(a, { amount: "40.00", currency: "USD", country: "US", merchant_reference: `ref-session-${tag}`, ...URLS })
  // In an account of its own, so that the searches over account A find what they did before.
  const c = yield* account(`console-c-${tag}`)
  const retried = yield* (yield* Sessions).create(c, {
    amount: "15.00",
    currency: "USD",
    country: "US",
    merchant_reference: `ref-retried-${tag}`,
    payment_methods: ["card"],
    max_payment_attempts: 2,
    ...URLS
  })
  const attempt = (number: string) =>
    Effect.flatMap(card(c, number), (token) => payments.attemptSession(retried.id, { payment_method: { code: "card", details: { card_token: token } } }))
  yield* Effect.ignore(attempt(CARDS.declined))
  yield* attempt(CARDS.visa)
  const transfer = yield* (yield* Transfers).create(a, {
    amount: "120.50",
    currency: "USD",
    country: "US",
    merchant_reference: `ref-transfer-${tag}`,
    payment_method: { code: "bank_transfer", details: { account_number: "000123456789", holder_name: "Ada Lovelace" } }
  })
  const customer = yield* (yield* Customers).create(a, { name: "Grace Hopper", email: "grace@example.com" })
  const other = yield* charge(b, CARDS.visa, { amount: "100.00", currency: "USD", reference: `ref-manual-${tag}` })
  // Every event's first attempt: one delivery answered 200, the other refused (a retry due later).
  while ((yield* webhooks.dispatchDue()) > 0) {
    // until nothing is due now
  }

  const declinedOrder = (yield* (yield* ConsoleReads).search({ kind: "orders", accounts: [a.id], last4: "0002", limit: 1 })).data[0]!
  return Seeded.of({
    a,
    b,
    manual: manual.order_id,
    captureRefund: captureRefund.id,
    eur: eur.order_id,
    payout: payout.id,
    declined: declinedOrder.id,
    challenged: challenged.order_id,
    retried: retried.order_id,
    session: session.id,
    transfer: transfer.id,
    customer: customer.id,
    other: other.order_id,
    secrets: [...Object.values(CARDS), a.signing_secret, b.signing_secret, challengeToken],
    okUrl,
    refusedUrl
  })
}).pipe(Effect.orDie)

/** The grant of account A alone, and the query every test narrows. */
const of = (facts: Facts, query: Partial<ConsoleQuery>): ConsoleQuery => ({ kind: "orders", accounts: [facts.a.id], limit: 100, ...query })

const search = (query: ConsoleQuery) => Effect.flatMap(ConsoleReads, (reads) => reads.search(query))
const ids = (rows: { readonly data: ReadonlyArray<ConsoleRow> }) => rows.data.map((r) => r.id)

/** Every page of a search at `limit` rows a page, following each page's last row as the cursor. */
const allPages = (query: ConsoleQuery) =>
  Effect.gen(function*() {
    const seen: Array<ConsoleRow> = []
    let cursor: ConsoleQuery["cursor"]
    for (let page = 0; page < 100; page++) {
      const result = yield* search({ ...query, cursor })
      seen.push(...result.data)
      if (!result.has_more) return seen
      const last = result.data.at(-1)!
      cursor = { created_at: last.created_at, id: last.id }
    }
    throw new Error("paging never ended")
  })

/** No sensitive string, nor a key that would hold one, anywhere in what the console reads. */
const expectNothingSensitive = (facts: Facts, value: unknown) => {
  const text = JSON.stringify(value)
  for (const secret of facts.secrets) expect(text).not.toContain(secret)
  for (const key of ["number", "cvc", "client_secret", "signing_secret", "secret", "card_token", "bin", "holder_name"]) {
    expect(text).not.toContain(`"${key}"`)
  }
}

export interface ConsoleReadsContractOptions {
  readonly timeout?: Duration.Input
}

/**
 * Registers the contract over `ports` (the whole infrastructure of one storage: Infrastructure.layer).
 * The use cases run over it to seed one world, shared by every test of the block.
 */
export const consoleReadsContract = <E>(name: string, ports: Layer.Layer<Ports, E>, options: ConsoleReadsContractOptions = {}): void => {
  const world = Layer.effect(Seeded, seed).pipe(Layer.provideMerge(UseCases.layer), Layer.provideMerge(ports))
  layerTests(world, { excludeTestServices: true, timeout: options.timeout ?? "2 minutes" })(name, (it) => {
    it.effect("orders: by id, reference, amount with currency, status, method, channel, last four, dates", () =>
      Effect.gen(function*() {
        const f = yield* Seeded
        const manual = (yield* search(of(f, { id: f.manual }))).data
        expect(manual).toHaveLength(1)
        expect(manual[0]).toMatchObject({
          kind: "orders", id: f.manual, account_id: f.a.id, status: "authorized", amount: 10000, currency: "USD",
          method: "card", channel: "sandbox", last4: "4242", order_id: f.manual, label: null
        })
        expect(ids(yield* search(of(f, { reference: manual[0]!.reference! })))).toEqual([f.manual])
        expect(ids(yield* search(of(f, { amount: 2500, currency: "EUR" })))).toEqual([f.eur])
        expect(ids(yield* search(of(f, { amount: 2500, currency: "USD" })))).toEqual([])
        expect(ids(yield* search(of(f, { currency: "EUR" })))).toEqual([f.eur])
        expect(ids(yield* search(of(f, { status: "failed" })))).toEqual([f.declined])
        expect(ids(yield* search(of(f, { method: "card", last4: "4444" })))).toEqual([f.eur])
        expect(ids(yield* search(of(f, { last4: "0002" })))).toEqual([f.declined])
        expect(ids(yield* search(of(f, { last4: "4242" })))).toEqual([f.manual])
        expect(ids(yield* search(of(f, { last4: "9999" })))).toEqual([])
        // The provider's name, or a channel id none of these went through.
        expect(new Set(ids(yield* search(of(f, { channel: "sandbox" }))))).toEqual(new Set([f.manual, f.eur, f.declined, f.challenged, ...orderOf(yield* search(of(f, { kind: "transfers" })))]))
        expect(ids(yield* search(of(f, { channel: "ch_doesnotexist0" })))).toEqual([])
        expect(ids(yield* search(of(f, { method: "pix" })))).toEqual([])
        // Dates: all of today's, none before, none from tomorrow.
        const now = Date.now()
        expect(ids(yield* search(of(f, { id: f.manual, created_from: new Date(now - 3_600_000).toISOString() })))).toEqual([f.manual])
        expect(ids(yield* search(of(f, { id: f.manual, created_to: new Date(now - 3_600_000).toISOString() })))).toEqual([])
        expect(ids(yield* search(of(f, { id: f.manual, created_from: new Date(now + 3_600_000).toISOString() })))).toEqual([])
      }))

    it.effect("transactions: by their order's id and reference, status, amount, channel and last four", () =>
      Effect.gen(function*() {
        const f = yield* Seeded
        const txns = (yield* search(of(f, { kind: "transactions", id: f.manual }))).data
        // The authorization, the capture and the refund: newest first.
        expect(txns.map((t) => t.status)).toHaveLength(3)
        for (const t of txns) expect(t).toMatchObject({ kind: "transactions", order_id: f.manual, account_id: f.a.id })
        expect(ids(yield* search(of(f, { kind: "transactions", id: txns[0]!.id })))).toEqual([txns[0]!.id])
        const reference = (yield* search(of(f, { id: f.manual }))).data[0]!.reference!
        expect(ids(yield* search(of(f, { kind: "transactions", reference })))).toEqual(ids({ data: txns }))
        expect((yield* search(of(f, { kind: "transactions", amount: 3000, currency: "USD" }))).data.map((t) => t.order_id)).toEqual([f.manual])
        const declined = (yield* search(of(f, { kind: "transactions", last4: "0002" }))).data
        expect(declined.map((t) => [t.order_id, t.status, t.last4, t.channel])).toEqual([[f.declined, "failed", "0002", "sandbox"]])
        expect((yield* search(of(f, { kind: "transactions", status: "failed" }))).data.map((t) => t.order_id)).toContain(f.declined)
      }))

    it.effect("sessions, refunds, payouts, transfers and customers: their own filters", () =>
      Effect.gen(function*() {
        const f = yield* Seeded
        expect((yield* search(of(f, { kind: "sessions" }))).data).toMatchObject([{ id: f.session, status: "open", amount: 4000, currency: "USD" }])
        expect(ids(yield* search(of(f, { kind: "sessions", status: "expired" })))).toEqual([])
        expect((yield* search(of(f, { kind: "refunds", id: f.manual }))).data).toMatchObject([{ id: f.captureRefund, amount: 1000, order_id: f.manual, status: "succeeded" }])
        const refund = (yield* search(of(f, { kind: "refunds" }))).data[0]!
        expect(ids(yield* search(of(f, { kind: "refunds", reference: refund.reference! })))).toEqual([f.captureRefund])
        expect((yield* search(of(f, { kind: "payouts", amount: 500, currency: "EUR" }))).data).toMatchObject([{ id: f.payout, order_id: f.eur }])
        expect((yield* search(of(f, { kind: "transfers", method: "bank_transfer" }))).data).toMatchObject([{ id: f.transfer, amount: 12050, method: "bank_transfer" }])
        expect(ids(yield* search(of(f, { kind: "transfers", method: "pix" })))).toEqual([])
        expect((yield* search(of(f, { kind: "customers" }))).data).toMatchObject([{ id: f.customer, label: "Grace Hopper", amount: null, status: null }])
        expect(ids(yield* search(of(f, { kind: "customers", id: f.customer })))).toEqual([f.customer])
      }))

    it.effect("only the granted accounts: another account's payment under the same reference stays out", () =>
      Effect.gen(function*() {
        const f = yield* Seeded
        const reference = (yield* search(of(f, { id: f.manual }))).data[0]!.reference!
        expect(ids(yield* search(of(f, { reference })))).toEqual([f.manual])
        expect(ids(yield* search({ ...of(f, { reference }), accounts: [f.b.id] }))).toEqual([f.other])
        expect(new Set(ids(yield* search({ ...of(f, { reference }), accounts: [f.a.id, f.b.id] })))).toEqual(new Set([f.manual, f.other]))
        expect(new Set(ids(yield* search({ ...of(f, { reference }), accounts: "all" })))).toEqual(new Set([f.manual, f.other]))
        expect(ids(yield* search({ ...of(f, { reference }), accounts: [] }))).toEqual([])
        expect(ids(yield* search(of(f, { id: f.other })))).toEqual([])
        expect(ids(yield* search(of(f, { kind: "transactions", id: f.other })))).toEqual([])
        for (const kind of ["orders", "transactions", "sessions", "refunds", "payouts", "transfers", "customers"] as const) {
          for (const row of (yield* search({ ...of(f, { kind }), accounts: [f.b.id] })).data) expect(row.account_id).toBe(f.b.id)
        }
      }))

    it.effect("paging: newest first, every row once, at any page size", () =>
      Effect.gen(function*() {
        const f = yield* Seeded
        for (const kind of ["orders", "transactions"] as const) {
          const whole = (yield* search(of(f, { kind }))).data
          expect(whole.length).toBeGreaterThan(4)
          const times = whole.map((r) => Date.parse(r.created_at))
          expect(times).toEqual([...times].sort((x, y) => y - x))
          for (const limit of [1, 2, 3]) expect(ids({ data: yield* allPages(of(f, { kind, limit })) })).toEqual(ids({ data: whole }))
        }
        // Across two accounts the pages merge both accounts' rows in one order.
        const both = { ...of(f, {}), accounts: [f.a.id, f.b.id] }
        const merged = (yield* search(both)).data
        expect(merged.map((r) => r.account_id)).toContain(f.b.id)
        for (const limit of [1, 4]) expect(ids({ data: yield* allPages({ ...both, limit }) })).toEqual(ids({ data: merged }))
        const first = yield* search(of(f, { limit: 2 }))
        expect(first.has_more).toBe(true)
        expect(first.data).toHaveLength(2)
      }))

    it.effect("the story: the timeline oldest first, outflows, and every event's deliveries with their attempts", () =>
      Effect.gen(function*() {
        const f = yield* Seeded
        const story = Option.getOrThrow(yield* (yield* ConsoleReads).story(f.manual))
        expect(story.order).toMatchObject({
          id: f.manual, account_id: f.a.id, status: "authorized", amount: 10000, currency: "USD", captured_amount: 3000,
          refunded_amount: 1000, payment_method: "card", capture_method: "manual", livemode: false
        })
        expect(story.transactions.map((t) => [t.kind, t.status, t.amount])).toEqual([
          ["authorization", "completed", 10000],
          ["capture", "completed", 3000],
          ["refund", "completed", 1000]
        ])
        const [authorization, capture] = story.transactions
        expect(capture!.parent_transaction_id).toBe(authorization!.id)
        expect(authorization).toMatchObject({ provider: "sandbox", channel_id: null, decline_code: null, routing: "sandbox (built in)" })
        expect(authorization!.provider_transaction_id).not.toBeNull()
        expect(authorization!.card).toMatchObject({ brand: "visa", last4: "4242", exp_month: null, exp_year: null, funding: "credit" })
        expect(story.outflows).toMatchObject([{ kind: "refund", id: f.captureRefund, amount: 1000, status: "succeeded" }])

        const times = story.events.map((e) => Date.parse(e.created_at))
        expect(times).toEqual([...times].sort((x, y) => x - y))
        expect(story.events.map((e) => e.type)).toContain("refund.succeeded")
        for (const event of story.events) {
          expect(event.deliveries.map((d) => d.endpoint_url).sort()).toEqual([f.okUrl, f.refusedUrl].sort())
          const answered = event.deliveries.find((d) => d.endpoint_url === f.okUrl)!
          expect(answered.status).toBe("succeeded")
          expect(answered.next_attempt_at).toBeNull()
          expect(answered.attempts).toHaveLength(1)
          // The receiver's own answer, as it sent it.
          expect(answered.attempts[0]).toMatchObject({ status_code: 200, error: null, response: "received" })
          expect(answered.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(0)
          const refused = event.deliveries.find((d) => d.endpoint_url === f.refusedUrl)!
          expect(refused.status).toBe("failed")
          expect(Date.parse(refused.next_attempt_at!)).toBeGreaterThan(Date.parse(refused.attempts[0]!.at))
          expect(refused.attempts).toHaveLength(1)
          expect(refused.attempts[0]!.status_code).toBeNull()
          expect(refused.attempts[0]!.response).toBeNull()
          expect(refused.attempts[0]!.error).toEqual(expect.any(String))
        }
      }))

    it.effect("the story of a declined payment, a 3-D Secure challenge and a payout", () =>
      Effect.gen(function*() {
        const f = yield* Seeded
        const reads = yield* ConsoleReads
        const declined = Option.getOrThrow(yield* reads.story(f.declined))
        expect(declined.order.status).toBe("failed")
        expect(declined.transactions.map((t) => [t.status, t.decline_code, t.card?.last4])).toEqual([["failed", "card_declined", "0002"]])
        const challenged = Option.getOrThrow(yield* reads.story(f.challenged))
        expect(challenged.transactions.map((t) => t.three_ds)).toContain("approved")
        // 3-D Secure's steps from the events: the challenge asked, then its verdict and what came of it.
        const requiresAction = challenged.events.find((e) => e.type === "payment.requires_action")!
        const paid = challenged.events.find((e) => e.type === "payment.succeeded")!
        expect(challenged.three_ds_steps).toEqual([
          { at: requiresAction.created_at, step: "3-D Secure challenge asked of the customer (payment.requires_action)" },
          { at: paid.created_at, step: "3-D Secure approved: payment paid (payment.succeeded)" }
        ])
        expect(declined.three_ds_steps).toEqual([])
        // One attempt: its channel alone. Two: each one's place, and how the one before it ended.
        expect(challenged.transactions[0]!.routing).toBe("sandbox (built in)")
        const retried = Option.getOrThrow(yield* reads.story(f.retried))
        expect(retried.transactions.map((t) => [t.status, t.card?.last4, t.routing])).toEqual([
          ["failed", "0002", "sandbox (built in); attempt 1 of the cascade"],
          ["completed", "4242", "sandbox (built in); attempt 2 of the cascade, after sandbox (built in) declined"]
        ])
        expect(retried.three_ds_steps).toEqual([])
        expect(challenged.order.status).toBe("succeeded")
        expect(challenged.order.captured_amount).toBe(1234)
        const eur = Option.getOrThrow(yield* reads.story(f.eur))
        expect(eur.outflows).toMatchObject([{ kind: "payout", id: f.payout, amount: 500, currency: "EUR" }])
        expect(yield* reads.story("ord_doesnotexist0000")).toEqual(Option.none())
      }))

    it.effect("locate: the kind by prefix and the order it belongs to", () =>
      Effect.gen(function*() {
        const f = yield* Seeded
        const reads = yield* ConsoleReads
        const story = Option.getOrThrow(yield* reads.story(f.manual))
        const at = (id: string) => Effect.map(reads.locate(id), Option.getOrUndefined)
        expect(yield* at(f.manual)).toEqual({ kind: "orders", account_id: f.a.id, order_id: f.manual })
        expect(yield* at(story.transactions[1]!.id)).toEqual({ kind: "transactions", account_id: f.a.id, order_id: f.manual })
        expect(yield* at(f.captureRefund)).toEqual({ kind: "refunds", account_id: f.a.id, order_id: f.manual })
        expect(yield* at(f.payout)).toEqual({ kind: "payouts", account_id: f.a.id, order_id: f.eur })
        expect(yield* at(story.events[0]!.id)).toEqual({ kind: "event", account_id: f.a.id, order_id: f.manual })
        expect((yield* at(f.session))?.kind).toBe("sessions")
        expect((yield* at(f.transfer))?.kind).toBe("transfers")
        expect(yield* at(f.customer)).toEqual({ kind: "customers", account_id: f.a.id, order_id: null })
        expect(yield* at(f.other)).toEqual({ kind: "orders", account_id: f.b.id, order_id: f.other })
        for (const unknown of ["ord_doesnotexist0000", "evt_doesnotexist0000", "acct_whatever", "nonsense"]) expect(yield* at(unknown)).toBeUndefined()
      }))

    it.effect("no card number, CVC, client secret or signing secret in any row or story", () =>
      Effect.gen(function*() {
        const f = yield* Seeded
        const reads = yield* ConsoleReads
        for (const kind of ["orders", "transactions", "sessions", "refunds", "payouts", "transfers", "customers"] as const) {
          expectNothingSensitive(f, yield* search({ ...of(f, { kind }), accounts: "all" }))
        }
        for (const order of [f.manual, f.eur, f.declined, f.challenged]) expectNothingSensitive(f, yield* reads.story(order))
      }))
  })
}

const orderOf = (rows: { readonly data: ReadonlyArray<ConsoleRow> }) => rows.data.map((r) => r.order_id!)
