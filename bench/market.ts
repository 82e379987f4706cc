/**
 * Smart routing on a simulated market (issue 27): the same stream of card payments routed by three
 * strategies, and what each one's authorization rate and outage handling come to.
 *
 *   npm run bench:market                                   # 50,000 payments per strategy, 20 per simulated second
 *   npm run bench:market -- --payments 5000 --strategies static,success_rate
 *
 * The payments go through the use cases in-process (Payments.create over memory storage, the
 * channel registry, the Testpay channel client) to one Testpay fake over real HTTP, on which three
 * Testpay channels (distinct API keys) stand for three acquirers. The fake's behaviour hook plays
 * the market (below): which acquirer approves which card in which country, a decline rate that
 * says nothing about the acquirer, a drift and an outage. Time is simulated: the domain's Effect
 * Clock and the market read one virtual clock that the bench moves to each payment's arrival (a
 * fixed rate per simulated second), so the breaker's 30 s cool-down and the success rate's
 * 5-minute window are simulated time, and 50,000 payments take minutes, not hours.
 *
 * Strategies, each over the same stream (same seed, a fresh account, fresh health):
 *   static        no rules: the channels by priority (what Tender did before issue 27, plus breakers)
 *   success_rate  a rules file whose default holds the three channels, strategy success_rate
 *   oracle        the best channel in hindsight per segment (brand × country, from the model's true
 *                 rates averaged over the run), one rule per segment, strategy ordered (the
 *                 others follow as the retry order)
 * Payments are customer-initiated card payments (the token's card, `collect_cvv: false`), so a
 * `do_not_honor` is retried once on the next channel of the route (smart retries): the first-try
 * and the final rates are reported apart.
 *
 * Prints figures only (nothing is asserted against a target): a markdown table per strategy, the
 * outage's figures, the segments' rates. bench/README.md, "Issue 27", holds one run and says what
 * the figures mean.
 */
import { parseArgs } from "node:util"
import * as IdsRandom from "@tender/adapters/crypto/IdsRandom"
import * as KeyHasherSha256 from "@tender/adapters/crypto/KeyHasherSha256"
import { memoryStorage } from "@tender/adapters/Infrastructure"
import * as LocksMemory from "@tender/adapters/locks/LocksMemory"
import * as ChannelProviders from "@tender/adapters/providers/channels/ChannelProviders"
import * as PaymentProviderSandbox from "@tender/adapters/providers/sandbox/PaymentProviderSandbox"
import * as SandboxLedgerMemory from "@tender/adapters/providers/sandbox/SandboxLedgerMemory"
import * as TestpayFake from "@tender/adapters/providers/testpay/TestpayFake"
import { Accounts, Breaker, CardTokens, ChannelHealth, Channels, Outbox, Outflows, PaymentProvider, Payments, PublicUrl, TransactionRepo, Transfers } from "@tender/domain"
import { Clock, Duration, Effect, Layer, Random, References, Result } from "effect"
import * as Harness from "./harness.ts"
import { fixed, positive } from "./harness.ts"

Harness.requireNode("bench:market")

const STRATEGIES = ["static", "success_rate", "oracle"] as const
type Strategy = (typeof STRATEGIES)[number]

const { values: options } = parseArgs({
  options: {
    payments: { type: "string", default: "50000" },
    rate: { type: "string", default: "20" },
    seed: { type: "string", default: "27" },
    strategies: { type: "string", default: STRATEGIES.join(",") },
    "outage-at": { type: "string", default: "0.6" },
    "outage-seconds": { type: "string", default: "180" },
    "drift-at": { type: "string", default: "0.4" },
    "latency-scale": { type: "string", default: "0" },
    help: { type: "boolean", default: false }
  }
})
if (options.help) {
  console.log(`npm run bench:market -- [--payments N=50000] [--rate N=20] [--seed N=27] [--strategies ${STRATEGIES.join(",")}]
                              [--outage-at F=0.6] [--outage-seconds S=180] [--drift-at F=0.4] [--latency-scale F=0]

  --payments        payments per strategy (the same stream for each)
  --rate            payments per simulated second (arrivals at a fixed rate)
  --seed            the stream's and the domain's Random seed
  --strategies      which of static, success_rate, oracle to run, in that order
  --outage-at       when the outage starts, as a fraction of the run's simulated time
  --outage-seconds  how long the outage lasts, in simulated seconds
  --drift-at        when the drifting segment's rate changes, as a fraction of the run's simulated time
  --latency-scale   real delay the fake adds per call, as a fraction of the channel's simulated latency
                    (0: none; the simulated latency is reported either way)`)
  process.exit(0)
}

const PAYMENTS = Math.round(positive("payments", options.payments))
const RATE = positive("rate", options.rate)
const SEED = Math.round(Number(options.seed)) | 0
const CHOSEN: ReadonlyArray<Strategy> = options.strategies.split(",").map((s) => s.trim()).map((s) => {
  if (!(STRATEGIES as ReadonlyArray<string>).includes(s)) {
    console.error(`--strategies: unknown strategy ${s} (known: ${STRATEGIES.join(", ")})`)
    process.exit(2)
  }
  return s as Strategy
})
const LATENCY_SCALE = Number(options["latency-scale"])

// --- the market ---------------------------------------------------------------------------------

/** Simulated milliseconds between two arrivals. */
const GAP_MS = 1000 / RATE
/** The run's simulated length. */
const RUN_MS = PAYMENTS * GAP_MS

interface Acquirer {
  readonly name: string
  readonly apiKey: string
  /** Channel priority: static routing's order (the highest first). */
  readonly priority: number
  /** Simulated answer time of one call, ms. */
  readonly latencyMs: number
}

/** Three acquirers; the one static routing prefers is the one the outage takes down. */
const ACQUIRERS: ReadonlyArray<Acquirer> = [
  { name: "alpha", apiKey: "tp_test_alpha", priority: 30, latencyMs: 180 },
  { name: "beta", apiKey: "tp_test_beta", priority: 20, latencyMs: 240 },
  { name: "gamma", apiKey: "tp_test_gamma", priority: 10, latencyMs: 310 }
]

type Brand = "visa" | "mastercard" | "amex"

/** The contract's test cards (test mode takes no others), with their share of the payments. */
const CARDS: ReadonlyArray<{ readonly number: string; readonly brand: Brand; readonly cvc: string; readonly share: number }> = [
  { number: "4242424242424242", brand: "visa", cvc: "123", share: 0.4 },
  { number: "4000056655665556", brand: "visa", cvc: "123", share: 0.2 }, // visa debit
  { number: "5555555555554444", brand: "mastercard", cvc: "123", share: 0.3 },
  { number: "378282246310005", brand: "amex", cvc: "1234", share: 0.1 }
]

/**
 * The payment countries, each paying in its own currency: success-rate routing keys its windows by
 * currency (and brand), so a country is what it can tell apart (docs: bench/README.md, "The model").
 */
const COUNTRIES: ReadonlyArray<{ readonly country: string; readonly currency: string; readonly share: number }> = [
  { country: "US", currency: "USD", share: 0.35 },
  { country: "DE", currency: "EUR", share: 0.25 },
  { country: "GB", currency: "GBP", share: 0.2 },
  { country: "BR", currency: "BRL", share: 0.2 }
]

/**
 * Each acquirer's approval probability per brand and country, for a payment that no acquirer
 * would decline for the customer's own reasons (NEUTRAL below): none is best everywhere.
 */
const APPROVAL: Readonly<Record<string, Readonly<Record<Brand, Readonly<Record<string, number>>>>>> = {
  alpha: {
    visa: { US: 0.93, DE: 0.85, GB: 0.88, BR: 0.7 },
    mastercard: { US: 0.92, DE: 0.84, GB: 0.87, BR: 0.72 },
    amex: { US: 0.9, DE: 0.7, GB: 0.8, BR: 0.6 }
  },
  beta: {
    visa: { US: 0.89, DE: 0.92, GB: 0.86, BR: 0.8 },
    mastercard: { US: 0.9, DE: 0.91, GB: 0.89, BR: 0.78 },
    amex: { US: 0.93, DE: 0.78, GB: 0.82, BR: 0.66 }
  },
  gamma: {
    visa: { US: 0.86, DE: 0.88, GB: 0.91, BR: 0.86 },
    mastercard: { US: 0.85, DE: 0.86, GB: 0.84, BR: 0.83 },
    amex: { US: 0.88, DE: 0.85, GB: 0.79, BR: 0.74 }
  }
}

/** Declines that say nothing about the acquirer (insufficient_funds), the same on every channel. */
const NEUTRAL = 0.06

/** The drift: from DRIFT_AT on, one acquirer's rate for one segment changes. */
const DRIFT = { acquirer: "beta", brand: "mastercard" as Brand, country: "GB", to: 0.7 }
const DRIFT_AT = Number(options["drift-at"]) * RUN_MS

/** The outage: the acquirer static routing prefers answers Unavailable from T1 to T2. */
const OUTAGE = {
  acquirer: "alpha",
  from: Number(options["outage-at"]) * RUN_MS,
  to: Number(options["outage-at"]) * RUN_MS + positive("outage-seconds", options["outage-seconds"]) * 1000
}

/** The approval probability of `acquirer` for a segment at simulated time `at` (ms from the start). */
const approval = (acquirer: string, brand: Brand, country: string, at: number) =>
  acquirer === DRIFT.acquirer && brand === DRIFT.brand && country === DRIFT.country && at >= DRIFT_AT
    ? DRIFT.to
    : APPROVAL[acquirer]![brand][country]!

/** The model's true rate of a segment on an acquirer, averaged over the run (what the oracle knows). */
const meanApproval = (acquirer: string, brand: Brand, country: string) => {
  const before = Math.min(Math.max(DRIFT_AT, 0), RUN_MS) / RUN_MS
  return before * APPROVAL[acquirer]![brand][country]! + (1 - before) * approval(acquirer, brand, country, RUN_MS)
}

/** A uniform draw in [0, 1) from (seed, parts): the same payment draws the same on every strategy. */
const uniform = (...parts: ReadonlyArray<number>) => {
  let h = (SEED ^ 0x9e3779b9) >>> 0
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x85ebca6b)
    h ^= h >>> 13
    h = Math.imul(h, 0xc2b2ae35)
    h ^= h >>> 16
    h = (h + 0x9e3779b9) >>> 0
  }
  h ^= h >>> 15
  h = Math.imul(h, 0x2c1b3c6d)
  h ^= h >>> 12
  return (h >>> 0) / 2 ** 32
}

const pick = <A extends { readonly share: number }>(items: ReadonlyArray<A>, u: number): A => {
  let sum = 0
  for (const item of items) {
    sum += item.share
    if (u < sum) return item
  }
  return items[items.length - 1]!
}

interface Arrival {
  readonly index: number
  readonly at: number
  readonly card: (typeof CARDS)[number]
  readonly country: (typeof COUNTRIES)[number]
  readonly neutral: boolean
}

const STREAM: ReadonlyArray<Arrival> = Array.from({ length: PAYMENTS }, (_, index) => ({
  index,
  at: index * GAP_MS,
  card: pick(CARDS, uniform(index, 1)),
  country: pick(COUNTRIES, uniform(index, 2)),
  neutral: uniform(index, 3) < NEUTRAL
}))

/**
 * Each payment's amount names it (minor units: AMOUNT_BASE + index), so the fake's hook knows which
 * payment a charge belongs to, and so its country (Testpay is not told the country).
 */
const AMOUNT_BASE = 1_000

type Verdict = TestpayFake.ChargeVerdict

/** One call the fake received: which payment, on which acquirer, when, and what it answered. */
interface Call {
  readonly acquirer: number
  readonly at: number
  readonly verdict: Verdict["_tag"]
}

/** What the market answers a charge of `arrival` on `acquirer` at simulated `at`. */
const verdictOf = (arrival: Arrival, acquirer: number, at: number): Verdict => {
  const name = ACQUIRERS[acquirer]!.name
  if (name === OUTAGE.acquirer && at >= OUTAGE.from && at < OUTAGE.to) return { _tag: "Unavailable" }
  if (arrival.neutral) return { _tag: "Decline", code: "insufficient_funds" }
  return uniform(arrival.index, 10 + acquirer) < approval(name, arrival.card.brand, arrival.country.country, at)
    ? { _tag: "Approve" }
    : { _tag: "Decline", code: "do_not_honor" }
}

// --- the simulated clock --------------------------------------------------------------------------

/** The run's epoch: real now, so cards' expiry dates and the like read as they would. */
const EPOCH = Math.floor(Date.now() / 1000) * 1000

/**
 * The virtual clock the domain and the market share: its wall time is EPOCH + `offset`, moved by
 * the bench; its monotonic time and its sleeps stay real (timeouts are real time: a fetch's timeout
 * racing a sleep that never waited would fire at once).
 */
const virtual = { offset: 0 }
const realClock = Clock.Clock.defaultValue()
const simulatedClock: Clock.Clock = {
  currentTimeMillisUnsafe: () => EPOCH + virtual.offset,
  currentTimeMillis: Effect.sync(() => EPOCH + virtual.offset),
  currentTimeNanosUnsafe: () => BigInt(Math.round(EPOCH + virtual.offset)) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => BigInt(Math.round(EPOCH + virtual.offset)) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => realClock.monotonicTimeNanosUnsafe(),
  monotonicTimeNanos: realClock.monotonicTimeNanos,
  sleep: (duration: Duration.Duration) => realClock.sleep(duration)
}

// --- one strategy's run ---------------------------------------------------------------------------

const PUBLIC_URL = "http://tender.bench"

/** Every use case over memory storage; the Testpay channels' client reaches `fakeUrl`. */
const world = (fakeUrl: string) => {
  const ports = Layer.mergeAll(
    memoryStorage,
    LocksMemory.layer,
    Layer.succeed(PaymentProvider, PaymentProviderSandbox.make({ publicUrl: PUBLIC_URL }, SandboxLedgerMemory.make())),
    Layer.succeed(PublicUrl, PUBLIC_URL)
  ).pipe(Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer)))
  const routed = ChannelProviders.layer({ publicUrl: PUBLIC_URL, endpoints: { testpay: { apiUrl: fakeUrl } }, timeoutMs: 10_000 })
    .pipe(Layer.provideMerge(ports))
  return Channels.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Accounts.layer, CardTokens.layer, Payments.layer, Transfers.layer, Outflows.layer)),
    Layer.provideMerge(Outbox.layer),
    Layer.provideMerge(routed)
  )
}

/** What one payment came to. */
interface Outcome {
  readonly calls: ReadonlyArray<Call>
  /** The create's answer: the order's status, or the error's code. */
  readonly status: string
  /** The first transaction's routing reason (null before smart routing records one). */
  readonly reason: string | null
}

interface StrategyRun {
  readonly strategy: Strategy
  readonly outcomes: ReadonlyArray<Outcome>
  readonly wallSeconds: number
  /** Simulated ms from the outage's start until the down channel's breaker was seen open; undefined: never. */
  readonly breakerOpenedAfter: number | undefined
}

/** The rules document each strategy sets (null: none, channels by priority). */
const rulesFor = (strategy: Strategy, channelIds: ReadonlyArray<string>): unknown => {
  switch (strategy) {
    case "static":
      return null
    case "success_rate":
      return { rules: [], default: { channels: [...channelIds] }, strategy: "success_rate" }
    case "oracle":
      return {
        rules: CARDS.filter((c, i) => CARDS.findIndex((d) => d.brand === c.brand) === i).flatMap(({ brand }) =>
          COUNTRIES.map(({ country, currency }) => ({
            id: `${brand}-${country}`,
            when: { card_brand: [brand], currency: [currency] },
            then: {
              channels: ACQUIRERS.map((a, i) => ({ i, rate: meanApproval(a.name, brand, country) }))
                .sort((x, y) => y.rate - x.rate)
                .map(({ i }) => channelIds[i]!)
            }
          }))
        ),
        default: { channels: [...channelIds] },
        strategy: "ordered"
      }
  }
}

const runStrategy = async (strategy: Strategy): Promise<StrategyRun> => {
  const calls: Array<Array<Call>> = STREAM.map(() => [])
  const byKey = new Map(ACQUIRERS.map((a, i) => [a.apiKey, i]))
  const fake = await TestpayFake.start({
    decide: (asked) => {
      const acquirer = byKey.get(asked.apiKey)
      const arrival = STREAM[asked.amount - AMOUNT_BASE]
      if (acquirer === undefined || arrival === undefined) throw new Error(`the market does not know this charge: ${JSON.stringify(asked)}`)
      const at = virtual.offset
      const verdict = verdictOf(arrival, acquirer, at)
      calls[arrival.index]!.push({ acquirer, at, verdict: verdict._tag })
      return verdict
    },
    ...(LATENCY_SCALE > 0 ? { delayMs: (asked: TestpayFake.ChargeAsked) => ACQUIRERS[byKey.get(asked.apiKey) ?? 0]!.latencyMs * LATENCY_SCALE } : {})
  })
  try {
    const outcomes: Array<Outcome> = []
    let breakerOpenedAt: number | undefined
    const program = Effect.gen(function*() {
      const accounts = yield* Accounts
      const account = yield* accounts.get((yield* accounts.create({ name: `market-${strategy}`, mode: "test" })).account_id)
      const channels = yield* Channels
      const channelIds: Array<string> = []
      for (const acquirer of ACQUIRERS) {
        const added = yield* channels.add(account.id, {
          provider: "testpay",
          mode: "test",
          methods: null,
          currencies: null,
          countries: null,
          priority: acquirer.priority,
          credentials: { api_key: acquirer.apiKey, webhook_secret: `whsec_${acquirer.name}` }
        })
        channelIds.push(added.id)
      }
      const rules = rulesFor(strategy, channelIds)
      if (rules !== null) yield* setRules(account.id, rules)
      const tokens = new Map<string, string>()
      for (const card of CARDS) {
        const made = yield* (yield* CardTokens).tokenize(account, { number: card.number, exp_month: 12, exp_year: new Date(EPOCH).getUTCFullYear() + 3, cvc: card.cvc })
        tokens.set(card.number, made.token)
      }
      const payments = yield* Payments
      const t0 = performance.now()
      for (const arrival of STREAM) {
        virtual.offset = arrival.at
        const answer = yield* Effect.result(payments.create(account, {
          amount: ((AMOUNT_BASE + arrival.index) / 100).toFixed(2),
          currency: arrival.country.currency,
          country: arrival.country.country,
          merchant_reference: `market-${arrival.index}`,
          collect_cvv: false,
          payment_method: { code: "card", details: { card_token: tokens.get(arrival.card.number)! } }
        }))
        const status = answer._tag === "Success" ? answer.success.status : `error: ${answer.failure.code}`
        outcomes.push({ calls: calls[arrival.index]!, status, reason: yield* reasonOf(answer) })
        if (breakerOpenedAt === undefined && arrival.at >= OUTAGE.from && arrival.at < OUTAGE.to) {
          if (yield* breakerOpen(channelIds[ACQUIRERS.findIndex((a) => a.name === OUTAGE.acquirer)]!, EPOCH + arrival.at)) breakerOpenedAt = arrival.at
        }
        if ((arrival.index + 1) % 10_000 === 0) {
          console.log(`  ${strategy}: ${arrival.index + 1} payments, ${fixed((arrival.index + 1) / ((performance.now() - t0) / 1000), 0)}/s`)
        }
      }
      return (performance.now() - t0) / 1000
    })
    const wallSeconds = await Effect.runPromise(program.pipe(
      Effect.provide(world(fake.url)),
      Effect.provideService(Clock.Clock, simulatedClock),
      // Each cascade logs a line at info: thousands during the outage.
      Effect.provideService(References.MinimumLogLevel, "Warn"),
      Random.withSeed(SEED)
    ))
    return { strategy, outcomes, wallSeconds, breakerOpenedAfter: breakerOpenedAt === undefined ? undefined : breakerOpenedAt - OUTAGE.from }
  } finally {
    await fake.close()
  }
}

/** Sets the account's rules (the bench's own documents: a refusal is the bench's bug). */
const setRules = (accountId: string, rules: unknown) =>
  Effect.gen(function*() {
    yield* (yield* Channels).setRouting(accountId, null, rules)
  }).pipe(Effect.orDie)

/**
 * Why the route chose the payment's first transaction's channel (its routing's reason). A cascade
 * rewrites that routing (reason "retry"), so a payment that cascaded reads "retry" here. The first
 * transaction is the lowest attempt: a smart retry's is created in the same simulated millisecond,
 * so the listing's order (time, then id) would not tell them apart.
 */
const reasonOf = (answer: Result.Result<{ readonly order_id: string }, unknown>) =>
  Effect.gen(function*() {
    if (answer._tag !== "Success") return null
    const routed = (yield* (yield* TransactionRepo).listByOrder(answer.success.order_id)).flatMap((t) => (t.routing === null ? [] : [t.routing]))
    return routed.sort((x, y) => x.attempt - y.attempt)[0]?.reason ?? null
  })

/** Whether `channelId`'s breaker is open (or half open) at `now`. */
const breakerOpen = (channelId: string, now: number) =>
  Effect.gen(function*() {
    const all = yield* (yield* ChannelHealth).breakers(now)
    return all.some((b) => b.channel_id === channelId && Breaker.position(b.state, now) !== "closed")
  })

// --- the figures ----------------------------------------------------------------------------------

const approved = (calls: ReadonlyArray<Call>) => calls.some((c) => c.verdict === "Approve")
/** The first try's answer: the first call that was not Unavailable (a cascade is part of the try). */
const firstAnswer = (calls: ReadonlyArray<Call>) => calls.find((c) => c.verdict !== "Unavailable")
/** The acquirer the route chose first (where its first call went). */
const chosen = (calls: ReadonlyArray<Call>) => calls[0]?.acquirer

interface Figures {
  readonly strategy: Strategy
  readonly firstTry: number
  readonly final: number
  readonly retried: number
  readonly exploration: number | undefined
  /** Each routing reason's share of the payments' first transactions. */
  readonly reasons: ReadonlyMap<string, number>
  readonly meanProviderMs: number
  readonly paymentsPerSecond: number
  readonly errors: number
  readonly mismatches: number
  readonly outage: {
    readonly breakerOpenedAfter: number | undefined
    readonly downShareAfter30s: number
    readonly downCallsAfter30s: number
    readonly firstApprovalAfter: number | undefined
    readonly halfShareAfter: number | undefined
    readonly preShare: number
  }
  readonly segments: ReadonlyMap<string, { readonly n: number; readonly firstTry: number }>
}

const BUCKET_MS = 10_000

const figuresOf = (run: StrategyRun): Figures => {
  const { outcomes } = run
  const n = outcomes.length
  const down = ACQUIRERS.findIndex((a) => a.name === OUTAGE.acquirer)
  const firstTry = outcomes.filter((o) => firstAnswer(o.calls)?.verdict === "Approve").length / n
  const final = outcomes.filter((o) => approved(o.calls)).length / n
  // A smart retry is a second answered try: two calls that were not Unavailable.
  const retried = outcomes.filter((o) => o.calls.filter((c) => c.verdict !== "Unavailable").length > 1).length / n
  const reasons = outcomes.filter((o) => o.reason !== null)
  const exploration = reasons.length === 0 ? undefined : reasons.filter((o) => o.reason === "exploration").length / reasons.length
  const byReason = new Map<string, number>()
  for (const o of reasons) byReason.set(o.reason!, (byReason.get(o.reason!) ?? 0) + 1 / reasons.length)
  const meanProviderMs = outcomes.reduce((sum, o) => sum + o.calls.reduce((s, c) => s + ACQUIRERS[c.acquirer]!.latencyMs, 0), 0) / n
  const errors = outcomes.filter((o) => o.status.startsWith("error")).length
  // The create's answer agrees with the market's: approved ⇔ completed.
  const mismatches = outcomes.filter((o) => approved(o.calls) !== (o.status === "completed")).length

  // The outage, from where the calls went.
  const window = (from: number, to: number) => STREAM.filter((a) => a.at >= from && a.at < to)
  const after30 = window(OUTAGE.from + 30_000, OUTAGE.to)
  const downCallsAfter30s = after30.filter((a) => outcomes[a.index]!.calls.some((c) => c.acquirer === down)).length
  const pre = window(OUTAGE.from - 5 * 60_000, OUTAGE.from)
  const preShare = pre.filter((a) => chosen(outcomes[a.index]!.calls) === down).length / Math.max(pre.length, 1)
  const firstApproval = STREAM.find((a) => a.at >= OUTAGE.to && outcomes[a.index]!.calls.some((c) => c.acquirer === down && c.verdict === "Approve"))
  let halfShareAfter: number | undefined
  for (let from = OUTAGE.to; from < RUN_MS; from += BUCKET_MS) {
    const bucket = window(from, from + BUCKET_MS)
    if (bucket.length === 0) break
    if (bucket.filter((a) => chosen(outcomes[a.index]!.calls) === down).length / bucket.length >= preShare / 2) {
      halfShareAfter = from + BUCKET_MS - OUTAGE.to
      break
    }
  }

  const segments = new Map<string, { n: number; firstTry: number }>()
  for (const a of STREAM) {
    const key = `${a.card.brand} ${a.country.country}`
    const s = segments.get(key) ?? { n: 0, firstTry: 0 }
    s.n++
    if (firstAnswer(outcomes[a.index]!.calls)?.verdict === "Approve") s.firstTry++
    segments.set(key, s)
  }
  return {
    strategy: run.strategy,
    firstTry,
    final,
    retried,
    exploration,
    reasons: byReason,
    meanProviderMs,
    paymentsPerSecond: n / run.wallSeconds,
    errors,
    mismatches,
    outage: {
      breakerOpenedAfter: run.breakerOpenedAfter,
      downShareAfter30s: downCallsAfter30s / Math.max(after30.length, 1),
      downCallsAfter30s,
      firstApprovalAfter: firstApproval === undefined ? undefined : firstApproval.at - OUTAGE.to,
      halfShareAfter,
      preShare
    },
    segments
  }
}

const pct = (x: number | undefined, digits = 2) => (x === undefined ? "–" : `${fixed(100 * x, digits)} %`)
const seconds = (ms: number | undefined) => (ms === undefined ? "–" : `${fixed(ms / 1000, 1)} s`)

const tables = (all: ReadonlyArray<Figures>) => {
  const oracle = all.find((f) => f.strategy === "oracle")
  const ratio = (f: Figures, key: "firstTry" | "final") => (oracle === undefined ? "–" : pct(f[key] / oracle[key], 1))
  const lines = [
    "| strategy | first-try auth rate | final auth rate (smart retries) | first-try / oracle | final / oracle | retried | exploration | provider time per payment (simulated) | payments/s (wall) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  ]
  for (const f of all) {
    lines.push(
      `| ${f.strategy} | ${pct(f.firstTry)} | ${pct(f.final)} | ${ratio(f, "firstTry")} | ${ratio(f, "final")} | ${pct(f.retried)} | ${pct(f.exploration)} | ${
        fixed(f.meanProviderMs, 0)
      } ms | ${fixed(f.paymentsPerSecond, 0)} |`
    )
  }
  lines.push("")
  for (const f of all) {
    const shares = [...f.reasons.entries()].sort((x, y) => y[1] - x[1]).map(([reason, share]) => `${reason} ${pct(share)}`)
    lines.push(`- ${f.strategy}: routing reasons of the first transactions: ${shares.length === 0 ? "none recorded" : shares.join(", ")}`)
  }
  lines.push(
    "",
    `Outage: ${OUTAGE.acquirer} answers Unavailable from ${seconds(OUTAGE.from)} to ${seconds(OUTAGE.to)} (simulated).`,
    "",
    "| strategy | its share before | breaker open after | sent to it after the first 30 s | first approval after the end | back to half its share after |",
    "|---|---:|---:|---:|---:|---:|"
  )
  for (const f of all) {
    const o = f.outage
    lines.push(
      `| ${f.strategy} | ${pct(o.preShare, 1)} | ${seconds(o.breakerOpenedAfter)} | ${pct(o.downShareAfter30s)} (${o.downCallsAfter30s}) | ${seconds(o.firstApprovalAfter)} | ${
        o.halfShareAfter === undefined ? "–" : `≤ ${seconds(o.halfShareAfter)}`
      } |`
    )
  }
  const keys = [...(all[0]?.segments.keys() ?? [])].sort()
  lines.push(
    "",
    `| segment | payments | best acquirer (run average) | ${all.map((f) => `${f.strategy} first try`).join(" | ")} |`,
    `|---|---:|---|${all.map(() => "---:").join("|")}|`
  )
  for (const key of keys) {
    const [brand, country] = key.split(" ") as [Brand, string]
    const best = ACQUIRERS.map((a) => ({ name: a.name, rate: meanApproval(a.name, brand, country) })).sort((x, y) => y.rate - x.rate)[0]!
    const n = all[0]!.segments.get(key)!.n
    lines.push(`| ${key} | ${n} | ${best.name} (${fixed(100 * (1 - NEUTRAL) * best.rate, 1)} %) | ${all.map((f) => pct(f.segments.get(key)!.firstTry / n, 1)).join(" | ")} |`)
  }
  return lines.join("\n")
}

const main = async () => {
  console.log(Harness.machine())
  console.log(
    `run: ${PAYMENTS} payments per strategy at ${RATE}/simulated s (${seconds(RUN_MS)} simulated), seed ${SEED}; drift at ${seconds(DRIFT_AT)} (${DRIFT.acquirer} ${DRIFT.brand} ${DRIFT.country} → ${
      DRIFT.to
    }); outage of ${OUTAGE.acquirer} ${seconds(OUTAGE.from)}–${seconds(OUTAGE.to)}; neutral declines ${pct(NEUTRAL, 0)}`
  )
  const all: Array<Figures> = []
  const t0 = performance.now()
  for (const strategy of CHOSEN) {
    console.log(`${strategy}: running`)
    all.push(figuresOf(await runStrategy(strategy)))
  }
  console.log(`\n${tables(all)}`)
  console.log(`\n${all.length} strategies × ${PAYMENTS} payments in ${fixed((performance.now() - t0) / 1000, 0)} s (wall)`)
  const bad = all.filter((f) => f.errors > 0 || f.mismatches > 0)
  if (bad.length > 0) {
    Harness.invalidBanner(bad.map((f) => `${f.strategy}: ${f.errors} creates failed, ${f.mismatches} answers disagree with the market`).join("; "))
    process.exit(1)
  }
}

await main()
