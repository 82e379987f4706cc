/**
 * The storage contract: what AccountRepo, UnitOfWork, CardVault, OrderRepo, TransactionRepo,
 * EventRepo, WebhookEndpointRepo, WebhookDeliveryRepo, CheckoutSessionRepo, RefundRepo, PayoutRepo,
 * CustomerRepo, TransferRepo, ClientSecretRepo, ChannelRepo, ServerListeners and Pruning promise, whatever
 * holds the data. `storageContract(name, layer)` registers all of it over one storage layer; the
 * memory and PostgreSQL storages pass exactly the same assertions (test/storage.memory.test.ts,
 * test/storage.postgres.test.ts), and so must a team's own storage adapter
 * (`@tender/adapters/testing`, docs/packaging.md "Proving your own adapter").
 *
 * Its parts (`coreStorageContract(it)`, `customersContract(it)`, …) take an `it` of
 * @effect/vitest's `layer(…)` block, for a suite that adds tests of its own over the same layer; the
 * fixtures (`newAccount`, `newOrder`, …) build fully populated records for such tests.
 */
import type { Vitest } from "@effect/vitest"
import { expect, layer as layerTests } from "@effect/vitest"
import {
  StateMachine,
  type CheckoutSessionId,
  type OrderId,
  type Account,
  type AccountId,
  AccountRepo,
  Accounts,
  CardVault,
  Channel,
  type ProviderCatalog,
  ChannelRepo,
  CheckoutSession,
  CheckoutSessionRepo,
  ClientSecretRepo,
  CustomerRepo,
  Errors,
  EventFeed,
  EventRepo,
  Ids,
  KeyHasher,
  ORDER_STATUSES,
  OrderRepo,
  Payment,
  TRANSACTION_STATUSES,
  TransactionRepo,
  TransferRepo,
  MoneyOut,
  type Customer,
  UnitOfWork,
  Webhook,
  WebhookDeliveryRepo,
  WebhookEndpointRepo,
  type OutflowStore,
  PayoutRepo,
  Pruning,
  RefundRepo,
  Retention,
  ServerListeners,
  AuditLog,
  ConsoleSessionRepo,
  type Operator,
  OperatorRepo
} from "@tender/domain"
import { Cause, Clock, Deferred, type Duration, Effect, Exit, Fiber, type Layer, Option, Result } from "effect"
import { ChannelCredentials } from "../storage/ChannelCredentials.ts"

export type StorageServices =
  | AccountRepo
  | UnitOfWork
  | CardVault
  | OrderRepo
  | TransactionRepo
  | EventRepo
  | WebhookEndpointRepo
  | WebhookDeliveryRepo
  | CheckoutSessionRepo
  | RefundRepo
  | PayoutRepo
  | Ids
  | KeyHasher
  | ServerListeners

/** A distinct, fully populated account (every column non-default), with its plain secret key. */
export const newAccount = (overrides: Partial<Account.Account> = {}) =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const hasher = yield* KeyHasher
    const secretKey = `sk_test_${yield* ids.randomHex(24)}`
    const revokedKey = `sk_test_${yield* ids.randomHex(24)}`
    const created = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678) + Math.floor(Math.random() * 1e9)).toISOString()
    const account: Account.Account = {
      id: (yield* ids.make("account")) as AccountId,
      name: "Acme Café ☕",
      mode: "test",
      status: "active",
      secret_keys: [
        { hash: yield* hasher.hash(revokedKey), hint: "sk_test_aaaa…", created_at: created, revoked_at: created },
        { hash: yield* hasher.hash(secretKey), hint: "sk_test_bbbb…", created_at: created, revoked_at: null }
      ],
      publishable_key: `pk_test_${yield* ids.randomHex(24)}`,
      signing_secret: `whsec_${yield* ids.randomHex(32)}`,
      previous_signing_secret: null,
      previous_signing_secret_expires_at: null,
      ip_allowlist: ["10.0.0.0/8", "2001:db8::/32"],
      processing_profiles: [{ code: "eu", name: "Europe", status: "active", created_at: created }],
      vault_enabled: true,
      three_ds_display_mode: "popup",
      rate_limit: { per_second: 5, burst: 10 },
      created_at: created,
      updated_at: created,
      version: 1,
      // The account's default (currency null, whole units), then per-currency overrides.
      payout_limits: [
        { currency: null, max_per_payout: 300, max_per_day: 1_000 },
        { currency: "CLP", max_per_payout: 90_000, max_per_day: 250_000 },
        { currency: "USD", max_per_payout: 50_000, max_per_day: 200_000 }
      ],
      ...overrides
    }
    return { account, secretKey, revokedKey }
  })

const later = (iso: string, ms = 1000) => new Date(Date.parse(iso) + ms).toISOString()

const CARD = {
  number: "4242424242424242",
  brand: "visa",
  last4: "4242",
  bin: "42424242",
  exp_month: 12,
  exp_year: 2030,
  funding: "credit",
  holder_name: "Ada Lovelace"
} as const

class Boom {
  readonly _tag = "Boom"
}

/** An account stored for the test: every order, transaction and event row needs one. */
const storedAccount = Effect.gen(function*() {
  const { account } = yield* newAccount()
  yield* (yield* AccountRepo).insert(account)
  return account.id
})

const T0 = "2025-03-01T10:00:00.123Z"

/** A fully populated direct-payment order (an amount past 32 bits, every nullable column set). */
export const newOrder = (accountId: AccountId, overrides: Partial<Payment.Order> = {}) =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const order: Payment.Order = {
      id: yield* ids.make("order"),
      account_id: accountId,
      livemode: false,
      merchant_reference: `ref-${yield* ids.randomHex(8)}`,
      subtype: "direct_payment",
      checkout_session_id: null,
      status: "authorized",
      amount: 3_000_000_000,
      currency: "IDR",
      country: "ID",
      payment_method: "card",
      capture_method: "manual",
      processing_profile: "eu",
      customer: { email: "ada@example.com", name: "Ada Lovelace" },
      success_url: "https://shop.example/ok",
      cancel_url: "https://shop.example/cancel",
      card_token: yield* ids.make("cardToken"),
      payment_instrument: {
        type: "card",
        card_brand: "visa",
        last4_digits: "4242",
        bin: "42424242",
        card_funding: "credit",
        holder_name: "Ada Lovelace"
      },
      received_amount: 2_999_999_999,
      refunded_amount: 0,
      // customer_id is a customers row (a foreign key): the customer contract sets it.
      customer_id: null,
      card_storage_consent: { granted: true, usage: "recurring" },
      request_hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      retry_until: later(T0, 86_400_000),
      created_at: T0,
      updated_at: T0,
      version: 1,
      ...overrides
    }
    return order
  })

/** The contract writes arbitrary rows on purpose: what a transition would decide is not its concern. */
const decided = <R>(row: R) => row as StateMachine.Decided<R>

/** Whether a write was refused as a defect (a broken storage invariant, as PostgreSQL's check_violation is). */
const refusedAsDefect = (effect: Effect.Effect<unknown, unknown>) =>
  Effect.map(Effect.exit(effect), (exit) => Exit.isFailure(exit) && Cause.hasDies(exit.cause))

export const newTransaction = (order: Payment.Order, overrides: Partial<Payment.Transaction> = {}) =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const transaction: Payment.Transaction = {
      id: yield* ids.make("transaction"),
      order_id: order.id,
      account_id: order.account_id,
      livemode: order.livemode,
      kind: "authorization",
      status: "completed",
      amount: order.amount,
      currency: order.currency,
      payment_method: order.payment_method,
      processing_profile: order.processing_profile,
      provider: "sandbox",
      channel_id: null,
      provider_transaction_id: `sbx_${yield* ids.randomHex(8)}`,
      decline_code: null,
      payment_instrument: order.payment_instrument,
      parent_transaction_id: null,
      final: null,
      multicapture: true,
      next_action: null,
      three_ds: "approved",
      customer_return_url: null,
      browser_flow: false,
      expires_at: null,
      pending_call: null,
      settlement_check_at: null,
      routing: null,
      created_at: order.created_at,
      updated_at: order.created_at,
      version: 1,
      ...overrides
    }
    return transaction
  })

const newEvent = (order: Payment.Order, overrides: Partial<Payment.PaymentEvent> = {}) =>
  Effect.gen(function*() {
    const event: Payment.PaymentEvent = {
      id: yield* (yield* Ids).make("event"),
      account_id: order.account_id,
      type: "order.updated",
      created_at: order.created_at,
      livemode: order.livemode,
      processing_profile: order.processing_profile,
      order_id: order.id,
      data: { order: { id: order.id, status: order.status, amount: order.amount }, tags: ["a", 1, null] },
      ...overrides
    }
    return event
  })

/** An event of its own (no order), stored: a delivery's row needs its event. */
export const storedEvent = (accountId: string, overrides: Partial<Payment.PaymentEvent> = {}) =>
  Effect.gen(function*() {
    const event: Payment.PaymentEvent = {
      id: yield* (yield* Ids).make("event"),
      account_id: accountId,
      type: "payment.succeeded",
      created_at: T0,
      livemode: false,
      processing_profile: null,
      order_id: null,
      data: { payment: { id: "ord_unknown", amount: 1 } },
      ...overrides
    }
    yield* (yield* EventRepo).append(event)
    return event
  })

/**
 * A fully populated open checkout session (an amount past 32 bits, every nullable column set, the
 * lists and nested records non-empty), and its checkout order, stored now as the use case stores it
 * first: a session's row needs its order. Its transaction is a name only.
 */
export const newSession = (accountId: AccountId, overrides: Partial<CheckoutSession.CheckoutSession> = {}) =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const merchant_reference = overrides.merchant_reference ?? `ref-${yield* ids.randomHex(8)}`
    const id = overrides.id ?? (yield* ids.make("checkoutSession"))
    const order = yield* newOrder(accountId, { subtype: "checkout", checkout_session_id: id, status: "pending", merchant_reference })
    yield* (yield* OrderRepo).insert(order)
    const session: CheckoutSession.CheckoutSession = {
      id,
      account_id: accountId,
      livemode: false,
      order_id: order.id,
      merchant_reference,
      status: "open",
      amount: 3_000_000_000,
      currency: "IDR",
      country: "ID",
      capture_method: "manual",
      payment_methods: ["card", "ovo"],
      straight_through: true,
      max_payment_attempts: 3,
      attempts: 1,
      expires_at: later(T0, 3_600_000),
      transaction_id: yield* ids.make("transaction"),
      next_action: {
        type: "qr",
        expires_at: "2025-03-01T10:30:00.000Z",
        qr: { data: "000201", deep_links: [{ label: "Open", url: "bank://pay", target: "app" }] }
      },
      customer: { email: "ada@example.com", name: "Ada Lovelace" },
      success_url: "https://shop.example/ok?session={id}",
      cancel_url: "https://shop.example/cancel",
      locale: "id-ID",
      line_items: [{ name: "Kopi ☕", quantity: 2, unit_amount: 1_500_000_000 }, { name: "Gula", quantity: 1, unit_amount: 0 }],
      collect_address: true,
      collect_phone: true,
      processing_profile: "eu",
      created_at: T0,
      updated_at: T0,
      version: 1,
      ...overrides
    }
    return session
  })

export const newEndpoint = (accountId: string, overrides: Partial<Webhook.WebhookEndpoint> = {}) =>
  Effect.gen(function*() {
    const endpoint: Webhook.WebhookEndpoint = {
      id: yield* (yield* Ids).make("webhookEndpoint"),
      account_id: accountId,
      url: "https://shop.example/hooks?src=tender&ü=1",
      enabled_events: ["payment.succeeded", "refund.failed"],
      description: "Orders ☕",
      status: "enabled",
      created_at: T0,
      updated_at: T0,
      version: 1,
      ...overrides
    }
    return endpoint
  })

/** A delivery of `event` to `endpointId`, due when the event was recorded (as the outbox makes them). */
export const newDelivery = (
  event: Payment.PaymentEvent,
  endpointId: string,
  overrides: Partial<Webhook.WebhookDelivery> = {}
) =>
  Effect.gen(function*() {
    const delivery: Webhook.WebhookDelivery = {
      id: yield* (yield* Ids).make("webhookDelivery"),
      account_id: event.account_id,
      endpoint_id: endpointId,
      event_id: event.id,
      event_type: event.type,
      status: "pending",
      attempts: 0,
      next_attempt_at: event.created_at,
      last_attempt_at: null,
      created_at: event.created_at,
      updated_at: event.created_at,
      lease_token: null,
      ...overrides
    }
    return delivery
  })

/**
 * `claimDue` reads every account, so its tests keep to a window of time no other row is due in
 * (deliveries elsewhere are due from T0 on, in 2025) and start by leasing whatever an earlier
 * test left due in it to the far future.
 */
export const CLAIM_WINDOW = { from: "1980-01-01T00:00:00.000Z", to: "1980-01-02T00:00:00.000Z" } as const
const FAR_FUTURE = "2999-01-01T00:00:00.000Z"

/** One attempt recorded alone (a batch of one): whether its fence held. */
const recordAttempt = (delivery: Webhook.WebhookDelivery, attempt: Webhook.DeliveryAttempt) =>
  WebhookDeliveryRepo.use((deliveries) => Effect.map(deliveries.recordAttempts([{ delivery, attempt }]), ([recorded]) => recorded))

/** An endpoint cap no contract test reaches (the cap has its own test). */
const MAX_TEST_ENDPOINTS = 1000

type ClaimOptions = Parameters<WebhookDeliveryRepo["Service"]["claimDue"]>[0]

/**
 * A claim with no per-account or per-endpoint bound and nothing excluded, unless `options` says:
 * each delivery with what the claim read with it.
 */
export const claimFully = (
  options: Pick<ClaimOptions, "now" | "leaseUntil" | "limit"> & Partial<ClaimOptions>
) =>
  WebhookDeliveryRepo.use((deliveries) =>
    deliveries.claimDue({
      lease: "lease-test",
      perAccount: 1000,
      perEndpoint: 1000,
      excludeEndpoints: [],
      excludeAccounts: [],
      ...options
    }))

/** The deliveries `claimFully` claims. */
export const claimWith = (options: Parameters<typeof claimFully>[0]) =>
  Effect.map(claimFully(options), (claimed) => claimed.map(({ delivery }) => delivery))

export const clearClaimWindow = Effect.gen(function*() {
  for (;;) {
    const claimed = yield* claimWith({ now: CLAIM_WINDOW.to, leaseUntil: FAR_FUTURE, limit: 1000 })
    if (claimed.length < 1000) return
  }
})

/** The only delivery due in the claim window: stored, due at its start. */
const oneDueInClaimWindow = Effect.gen(function*() {
  yield* clearClaimWindow
  const event = yield* storedEvent(yield* storedAccount)
  const delivery = yield* newDelivery(event, yield* (yield* Ids).make("webhookEndpoint"), {
    next_attempt_at: CLAIM_WINDOW.from
  })
  yield* (yield* WebhookDeliveryRepo).insert(delivery)
  return delivery
})

/**
 * The fairness tests' cast: a busy account (endpoints a1, a2) and a quiet one (b1), an event of each,
 * and `due`, a delivery due `ms` into the claim window.
 */
const busyAndQuiet = Effect.gen(function*() {
  const ids = yield* Ids
  const busy = yield* storedAccount
  const quiet = yield* storedAccount
  const [a1, a2, b1] = [yield* ids.make("webhookEndpoint"), yield* ids.make("webhookEndpoint"), yield* ids.make("webhookEndpoint")]
  const due = (event: Payment.PaymentEvent, endpointId: string, ms: number) =>
    newDelivery(event, endpointId, { next_attempt_at: later(CLAIM_WINDOW.from, ms) })
  return { busy, quiet, busyEvent: yield* storedEvent(busy), quietEvent: yield* storedEvent(quiet), a1, a2, b1, due }
})

/** The rows of one test's account, newest first by (created_at, id): what every search must agree with. */
const newestFirst = <A extends { readonly created_at: string; readonly id: string }>(rows: ReadonlyArray<A>) =>
  [...rows].sort((a, b) => a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : a.id < b.id ? 1 : -1)

const idsOf = (rows: ReadonlyArray<{ readonly id: string }>) => rows.map((row) => row.id)

/** Every page of a search, following the cursor from the last row of each page. */
const allPages = <A extends { readonly created_at: string; readonly id: string }, Q extends Pick<Payment.SearchQuery, "limit" | "cursor">>(
  search: (query: Q) => Effect.Effect<Payment.Page<A>>,
  query: Q
) =>
  Effect.gen(function*() {
    const pages: Array<Payment.Page<A>> = []
    let cursor: Q["cursor"] = undefined
    for (;;) {
      const page: Payment.Page<A> = yield* search({ ...query, cursor })
      pages.push(page)
      const last = page.data.at(-1)
      if (!page.has_more || last === undefined || pages.length > 20) return pages
      cursor = { created_at: last.created_at, id: last.id }
    }
  })

/** The core of the contract (accounts, the unit of work, the vault, orders, transactions, events, webhooks, sessions, refunds, payouts, server listeners). */
export const coreStorageContract = (it: Vitest.MethodsNonLive<StorageServices>) => {
  it.effect("inserts an account and finds it by id, secret-key hash and publishable key", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const hasher = yield* KeyHasher
      const { account, revokedKey, secretKey } = yield* newAccount()
      yield* repo.insert(account)

      expect(yield* repo.findById(account.id)).toEqual(Option.some(account))
      expect(yield* repo.findBySecretKeyHash(yield* hasher.hash(secretKey))).toEqual(Option.some(account))
      // Revoked keys still resolve: refusing them is the use case's decision, not storage's.
      expect(yield* repo.findBySecretKeyHash(yield* hasher.hash(revokedKey))).toEqual(Option.some(account))
      expect(yield* repo.findByPublishableKey(account.publishable_key)).toEqual(Option.some(account))

      expect(yield* repo.findById("acct_doesnotexist000000" as AccountId)).toEqual(Option.none())
      expect(yield* repo.findBySecretKeyHash(yield* hasher.hash("sk_test_unknown"))).toEqual(Option.none())
      expect(yield* repo.findByPublishableKey("pk_test_unknown")).toEqual(Option.none())
    }))

  it.effect("round-trips an account with no rate limit and empty lists", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const { account } = yield* newAccount({ rate_limit: null, ip_allowlist: [], processing_profiles: [], payout_limits: [] })
      yield* repo.insert(account)
      expect(yield* repo.findById(account.id)).toEqual(Option.some(account))
    }))

  it.effect("round-trips a temporary key's end beside a merchant's key, and drops a key the account no longer lists", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const { account } = yield* newAccount()
      yield* repo.insert(account)
      const temporary = { hash: `tmp_${account.id}`, hint: "sk_test_tmp…", created_at: account.created_at, revoked_at: null, expires_at: later(account.created_at) }
      const v2: Account.Account = { ...account, secret_keys: [...account.secret_keys, temporary], updated_at: later(account.updated_at), version: 2 }
      yield* repo.update(decided(v2))
      expect(yield* repo.findById(account.id)).toEqual(Option.some(v2))
      expect(Option.map(yield* repo.findBySecretKeyHash(temporary.hash), (a) => a.id)).toEqual(Option.some(account.id))
      const v3: Account.Account = { ...v2, secret_keys: account.secret_keys, version: 3 }
      yield* repo.update(decided(v3))
      expect(yield* repo.findById(account.id)).toEqual(Option.some(v3))
      expect(yield* repo.findBySecretKeyHash(temporary.hash)).toEqual(Option.none())
    }))

  it.effect("refuses a second account with the same publishable key (a defect: keys are random)", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const { account } = yield* newAccount()
      const { account: clash } = yield* newAccount({ publishable_key: account.publishable_key })
      yield* repo.insert(account)
      const exit = yield* Effect.exit(repo.insert(clash))
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
      expect(yield* repo.findById(clash.id)).toEqual(Option.none())
    }))

  it.effect("updates when the stored version is the one before, and refuses a stale version", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const { account } = yield* newAccount()
      yield* repo.insert(account)

      const v2: Account.Account = { ...account, status: "suspended", updated_at: later(account.updated_at), version: 2 }
      yield* repo.update(decided(v2))
      expect(yield* repo.findById(account.id)).toEqual(Option.some(v2))

      // Written against version 1 again: someone else got there first.
      const stale: Account.Account = { ...account, name: "Lost update", version: 2 }
      const error = yield* Effect.flip(repo.update(decided(stale)))
      expect(error).toBeInstanceOf(Errors.Conflict)
      expect(error.code).toBe("conflict")
      expect(yield* repo.findById(account.id)).toEqual(Option.some(v2))

      const unknown = yield* Effect.flip(repo.update(decided({ ...v2, id: "acct_doesnotexist000000" as AccountId, version: 3 })))
      expect(unknown).toBeInstanceOf(Errors.Conflict)
    }))

  it.effect("updates secret keys: a revoked key is kept, a new key resolves, a dropped key no longer does", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const ids = yield* Ids
      const hasher = yield* KeyHasher
      const { account, revokedKey, secretKey } = yield* newAccount()
      yield* repo.insert(account)

      const now = later(account.updated_at)
      const freshKey = `sk_test_${yield* ids.randomHex(24)}`
      const [dropped, live] = account.secret_keys
      const v2: Account.Account = {
        ...account,
        secret_keys: [
          { ...live, revoked_at: now },
          { hash: yield* hasher.hash(freshKey), hint: "sk_test_cccc…", created_at: now, revoked_at: null }
        ],
        updated_at: now,
        version: 2
      }
      expect(dropped.hash).toBe(yield* hasher.hash(revokedKey))
      yield* repo.update(decided(v2))

      expect(yield* repo.findBySecretKeyHash(yield* hasher.hash(freshKey))).toEqual(Option.some(v2))
      expect(yield* repo.findBySecretKeyHash(yield* hasher.hash(secretKey))).toEqual(Option.some(v2))
      expect(yield* repo.findBySecretKeyHash(dropped.hash)).toEqual(Option.none())
    }))

  it.effect("lists accounts oldest first", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const { account: first } = yield* newAccount({ created_at: "2020-01-01T00:00:00.000Z" })
      const { account: second } = yield* newAccount({ created_at: "2020-01-01T00:00:00.001Z" })
      yield* repo.insert(second)
      yield* repo.insert(first)
      const listed = (yield* repo.list()).filter((a) => a.id === first.id || a.id === second.id)
      expect(listed).toEqual([first, second])
    }))

  it.effect("of 10 concurrent updates from the same version, exactly one wins", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const { account } = yield* newAccount()
      yield* repo.insert(account)
      const results = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, i) => i),
        (i) => Effect.result(repo.update(decided({ ...account, name: `Writer ${i}`, version: 2 }))),
        { concurrency: "unbounded" }
      )
      const winners = results.filter((r) => r._tag === "Success")
      const losers = results.filter((r) => r._tag === "Failure")
      expect(winners).toHaveLength(1)
      expect(losers).toHaveLength(9)
      for (const loser of losers) expect(loser._tag === "Failure" && loser.failure).toBeInstanceOf(Errors.Conflict)
      const stored = Option.getOrThrow(yield* repo.findById(account.id))
      expect(stored.version).toBe(2)
    }))

  it.effect("a unit of work that fails leaves nothing behind", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const uow = yield* UnitOfWork
      const { account } = yield* newAccount()
      const failed = yield* Effect.flip(uow.transaction(Effect.gen(function*() {
        yield* repo.insert(account)
        yield* repo.update(decided({ ...account, name: "Renamed", version: 2 }))
        // Inside, the transaction reads its own writes.
        expect(Option.map(yield* repo.findById(account.id), (a) => a.name)).toEqual(Option.some("Renamed"))
        return yield* Effect.fail(new Boom())
      })))
      expect(failed).toBeInstanceOf(Boom)
      expect(yield* repo.findById(account.id)).toEqual(Option.none())
      expect(yield* repo.findByPublishableKey(account.publishable_key)).toEqual(Option.none())
    }))

  it.effect("a unit of work that succeeds commits every write", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const uow = yield* UnitOfWork
      const { account } = yield* newAccount()
      const result = yield* uow.transaction(Effect.gen(function*() {
        yield* repo.insert(account)
        yield* repo.update(decided({ ...account, name: "Renamed", version: 2 }))
        return "done"
      }))
      expect(result).toBe("done")
      expect(Option.map(yield* repo.findById(account.id), (a) => [a.name, a.version])).toEqual(Option.some(["Renamed", 2]))
    }))

  it.effect("a nested unit of work joins the outer one: the outer failure undoes the inner writes", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const uow = yield* UnitOfWork
      const { account } = yield* newAccount()
      yield* Effect.flip(uow.transaction(Effect.gen(function*() {
        yield* uow.transaction(repo.insert(account))
        return yield* Effect.fail(new Boom())
      })))
      expect(yield* repo.findById(account.id)).toEqual(Option.none())
    }))

  it.effect("a nested unit of work has no rollback of its own: a caught inner failure keeps its writes", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const uow = yield* UnitOfWork
      const { account } = yield* newAccount()
      yield* uow.transaction(
        Effect.ignore(uow.transaction(Effect.andThen(repo.insert(account), Effect.fail(new Boom()))))
      )
      expect(Option.map(yield* repo.findById(account.id), (a) => a.id)).toEqual(Option.some(account.id))
    }))

  it.effect("a failed unit of work does not discard a write made beside it", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const uow = yield* UnitOfWork
      const { account: inside } = yield* newAccount()
      const { account: beside } = yield* newAccount()
      const transaction = yield* Effect.forkChild(uow.transaction(Effect.gen(function*() {
        yield* repo.insert(inside)
        yield* Effect.sleep("50 millis")
        return yield* Effect.fail(new Boom())
      })))
      yield* Effect.sleep("10 millis")
      yield* repo.insert(beside)
      yield* Effect.flip(Fiber.join(transaction))
      expect(yield* repo.findById(inside.id)).toEqual(Option.none())
      expect(yield* repo.findById(beside.id)).toEqual(Option.some(beside))
    }))

  it.effect("server listeners: each process's place while fresh by the storage's clock; a refresh moves it on; a stale one is deleted by anyone's beat", () =>
    Effect.gen(function*() {
      const listeners = yield* ServerListeners
      // Ports of this test's own (the table is shared with whatever else ran on this storage).
      const [a, b, c] = [61_001, 61_002, 61_003]
      const tag = `${Date.now()}-${Math.random()}`
      const FRESH = 60_000
      const mine = (rows: ReadonlyArray<{ readonly port: number; readonly addresses: ReadonlyArray<string> }>) =>
        rows.filter((row) => [a, b, c].includes(row.port)).sort((x, y) => x.port - y.port || x.addresses.length - y.addresses.length)
      yield* listeners.register(`a-${tag}`, { port: a, addresses: ["10.0.0.1", "fd00::2"] }, FRESH)
      yield* Effect.sleep("2 seconds")
      yield* listeners.register(`b-${tag}`, { port: b, addresses: [] }, FRESH)
      // Two processes on one port (a cluster's children): each its row.
      yield* listeners.register(`b2-${tag}`, { port: b, addresses: ["10.0.0.2"] }, FRESH)
      expect(mine(yield* listeners.listening(FRESH))).toEqual([
        { port: a, addresses: ["10.0.0.1", "fd00::2"] },
        { port: b, addresses: [] },
        { port: b, addresses: ["10.0.0.2"] }
      ])
      // Older than a second: a stopped counting (b's were written just now).
      expect(mine(yield* listeners.listening(1_000)).map((row) => row.port)).toEqual([b, b])
      // A refresh (a heartbeat, or a restart on another port) replaces the process's row.
      yield* listeners.register(`b-${tag}`, { port: c, addresses: ["192.168.1.9"] }, FRESH)
      expect(mine(yield* listeners.listening(FRESH)).map((row) => row.port)).toEqual([a, b, c])
      yield* listeners.unregister(`b2-${tag}`)
      expect(mine(yield* listeners.listening(FRESH)).map((row) => row.port)).toEqual([a, c])
      // A beat with a shorter horizon deletes the rows older than it: a's is gone for every reader.
      yield* listeners.register(`b-${tag}`, { port: c, addresses: [] }, 1_000)
      expect(mine(yield* listeners.listening(FRESH))).toEqual([{ port: c, addresses: [] }])
      yield* listeners.unregister(`b-${tag}`)
      expect(mine(yield* listeners.listening(FRESH))).toEqual([])
    }))

  it.effect("vaults a card: find returns the safe fields, reveal the number", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const vault = yield* CardVault
      const { account } = yield* newAccount()
      yield* repo.insert(account)
      const { number, ...details } = CARD
      const stored = yield* vault.store({ ...CARD, account_id: account.id })

      expect(stored.token).toMatch(/^tok_[A-Za-z0-9]{24}$/)
      expect(stored).toEqual({ ...details, account_id: account.id, token: stored.token, created_at: stored.created_at })
      expect(Object.values(stored)).not.toContain(number)
      expect(Number.isNaN(Date.parse(stored.created_at))).toBe(false)
      expect(yield* vault.find(account.id, stored.token)).toEqual(Option.some(stored))
      // One read gives the card and its number (a charge reads the row once).
      expect(yield* vault.reveal(account.id, stored.token)).toEqual(Option.some({ card: stored, number, collectedForTransfer: false }))
    }))

  it.effect("find and reveal are scoped by account", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const vault = yield* CardVault
      const { account: owner } = yield* newAccount()
      const { account: other } = yield* newAccount()
      yield* repo.insert(owner)
      yield* repo.insert(other)
      const stored = yield* vault.store({ ...CARD, holder_name: null, account_id: owner.id })

      expect(Option.map(yield* vault.find(owner.id, stored.token), (c) => c.holder_name)).toEqual(Option.some(null))
      expect(yield* vault.find(other.id, stored.token)).toEqual(Option.none())
      expect(yield* vault.reveal(other.id, stored.token)).toEqual(Option.none())
      expect(yield* vault.reveal(owner.id, "tok_doesnotexist00000000")).toEqual(Option.none())
    }))

  it.effect("a card vaulted inside a failed unit of work is gone", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const vault = yield* CardVault
      const uow = yield* UnitOfWork
      const { account } = yield* newAccount()
      yield* repo.insert(account)
      let token = ""
      yield* Effect.flip(uow.transaction(Effect.gen(function*() {
        token = (yield* vault.store({ ...CARD, account_id: account.id })).token
        return yield* Effect.fail(new Boom())
      })))
      expect(token).not.toBe("")
      expect(yield* vault.find(account.id, token)).toEqual(Option.none())
    }))

  it.effect("the Accounts use case on this storage: rolling keys retires the old secret key", () => {
    const scenario = Effect.gen(function*() {
      const accounts = yield* Accounts
      const created = yield* accounts.create({ name: "Rolling Ltd", mode: "live" })
      expect((yield* accounts.authenticate(created.secret_key)).id).toBe(created.account_id)

      const rolled = yield* accounts.rollKeys(created.account_id)
      expect(rolled.account.version).toBe(2)
      expect((yield* Effect.flip(accounts.authenticate(created.secret_key)))._tag).toBe("InvalidApiKey")
      expect((yield* accounts.authenticate(rolled.secret_key)).id).toBe(created.account_id)
      expect((yield* Effect.flip(accounts.authenticate(created.publishable_key)))._tag).toBe(
        "PublishableApiKeyNotAllowed"
      )
    })
    return scenario.pipe(Effect.provide(Accounts.layer))
  })

  it.effect("orders: inserts and finds by id, from any account (operator) and by reference", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const accountId = yield* storedAccount
      const full = yield* newOrder(accountId)
      const bare = yield* newOrder(accountId, {
        subtype: "checkout",
        checkout_session_id: "cs_roundtrip0000000000",
        status: "pending",
        capture_method: "automatic",
        processing_profile: null,
        customer: null,
        success_url: null,
        cancel_url: null,
        card_token: null,
        payment_instrument: null,
        received_amount: null,
        refunded_amount: 0,
        customer_id: null,
        card_storage_consent: null,
        request_hash: null,
        retry_until: null,
        amount: Number.MAX_SAFE_INTEGER
      })
      yield* orders.insert(full)
      yield* orders.insert(bare)

      expect(yield* orders.find(accountId, full.id)).toEqual(Option.some(full))
      expect(yield* orders.find(accountId, bare.id)).toEqual(Option.some(bare))
      expect(yield* orders.findAny(full.id)).toEqual(Option.some(full))
      expect(yield* orders.findByReference(accountId, full.merchant_reference)).toEqual(Option.some(full))
      expect(yield* orders.findByReference(accountId, bare.merchant_reference)).toEqual(Option.some(bare))
      expect(yield* orders.find(accountId, "ord_doesnotexist000000")).toEqual(Option.none())
      expect(yield* orders.findAny("ord_doesnotexist000000")).toEqual(Option.none())
      expect(yield* orders.findByReference(accountId, "ref-unknown")).toEqual(Option.none())
    }))

  it.effect("orders: reads by account never return another account's order", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const owner = yield* storedAccount
      const other = yield* storedAccount
      const order = yield* newOrder(owner)
      yield* orders.insert(order)

      expect(yield* orders.find(other, order.id)).toEqual(Option.none())
      expect(yield* orders.findByReference(other, order.merchant_reference)).toEqual(Option.none())
      expect((yield* orders.search(other, { limit: 100 })).data).toEqual([])
      expect(idsOf((yield* orders.search(owner, { limit: 100 })).data)).toEqual([order.id])
      // a search page's orders, read at once: scoped by account, unknown ids absent
      expect(yield* orders.findMany(other, [order.id])).toEqual([])
      expect(yield* orders.findMany(owner, [order.id, "ord_doesnotexist000000"])).toEqual([order])
      expect(yield* orders.findMany(owner, [])).toEqual([])
    }))

  it.effect("orders: one reference space per account (contract.md, Idempotency): a direct payment or transfer refuses any holder; another account may reuse it", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const accountId = yield* storedAccount
      const other = yield* storedAccount
      const first = yield* newOrder(accountId, { merchant_reference: "order 42/ü" })
      yield* orders.insert(first)

      // Whatever the kind of the second: a direct payment, a transfer, a checkout order.
      for (const subtype of ["direct_payment", "transfer", "checkout"] as const) {
        const again = yield* newOrder(accountId, { merchant_reference: first.merchant_reference, amount: 1, subtype })
        const error = yield* Effect.flip(orders.insert(again))
        expect(error).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
        expect(error.code).toBe("duplicate_merchant_reference_id")
        expect(error.message).toBe(
          "merchant_reference order 42/ü already exists; fetch it with GET /v1/orders/by-reference/order%2042%2F%C3%BC"
        )
        expect(yield* orders.findAny(again.id)).toEqual(Option.none())
      }
      expect(yield* orders.listByReference(accountId, first.merchant_reference, 10)).toEqual([first])

      const elsewhere = yield* newOrder(other, { merchant_reference: first.merchant_reference })
      yield* orders.insert(elsewhere)
      expect(yield* orders.find(other, elsewhere.id)).toEqual(Option.some(elsewhere))
    }))

  it.effect("orders: checkout orders share a reference among themselves; then a direct payment or transfer is refused it", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const accountId = yield* storedAccount
      const checkout = yield* newOrder(accountId, { subtype: "checkout" })
      const secondCheckout = yield* newOrder(accountId, { merchant_reference: checkout.merchant_reference, subtype: "checkout" })
      yield* orders.insert(checkout)
      yield* orders.insert(secondCheckout)
      expect(yield* orders.find(accountId, secondCheckout.id)).toEqual(Option.some(secondCheckout))

      for (const subtype of ["direct_payment", "transfer"] as const) {
        const direct = yield* newOrder(accountId, { merchant_reference: checkout.merchant_reference, subtype })
        expect(yield* Effect.flip(orders.insert(direct))).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
        expect(yield* orders.findAny(direct.id)).toEqual(Option.none())
      }
    }))

  it.effect("orders: a direct payment and a checkout order inserted at once with one reference: exactly one is stored", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const uow = yield* UnitOfWork
      const accountId = yield* storedAccount
      const direct = yield* newOrder(accountId)
      const checkout = yield* newOrder(accountId, { merchant_reference: direct.merchant_reference, subtype: "checkout" })
      // Each in a unit of work that lingers after its insert, so that the other meets it uncommitted.
      const outcomes = yield* Effect.all(
        [direct, checkout].map((order) =>
          Effect.exit(uow.transaction(Effect.andThen(orders.insert(order), Effect.sleep("100 millis"))))
        ),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter(Exit.isSuccess)).toHaveLength(1)
      const refused = outcomes.find(Exit.isFailure)!
      expect(Cause.squash(refused.cause)).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
      expect(yield* orders.listByReference(accountId, direct.merchant_reference, 10)).toHaveLength(1)
    }))

  it.effect("orders: listRetryLapsed gives orders whose retry window ended at or before now, soonest first, ties by id, across accounts", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const first = yield* storedAccount
      const second = yield* storedAccount
      // Before any other test's retry windows (newOrder's end in 2025), so only these can be lapsed.
      const now = "2001-05-01T12:00:00.000Z"
      const due = yield* newOrder(first, { status: "pending", retry_until: later(now, -60_000) })
      const dueNow = yield* newOrder(second, { status: "pending", retry_until: now })
      const tiedA = yield* newOrder(first, { status: "pending", retry_until: later(now, -120_000) })
      const tiedB = yield* newOrder(second, { status: "pending", retry_until: later(now, -120_000) })
      const open = yield* newOrder(first, { status: "pending", retry_until: later(now, 1) })
      const none = yield* newOrder(first, { status: "failed", retry_until: null })
      for (const order of [due, dueNow, tiedA, tiedB, open, none]) yield* orders.insert(order)

      const lapsed = (yield* orders.listRetryLapsed(now, 100)).filter((o) => [due, dueNow, tiedA, tiedB, open, none].some((x) => x.id === o.id))
      const tied = [tiedA, tiedB].sort((a, b) => (a.id < b.id ? -1 : 1))
      expect(lapsed).toEqual([...tied, due, dueNow])
      expect((yield* orders.listRetryLapsed(now, 1))).toHaveLength(1)
    }))

  it.effect("orders: a refused duplicate leaves the unit of work usable, and it commits", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const uow = yield* UnitOfWork
      const accountId = yield* storedAccount
      const first = yield* newOrder(accountId)
      yield* orders.insert(first)
      const again = yield* newOrder(accountId, { merchant_reference: first.merchant_reference })
      const attempt = yield* newTransaction(first)

      const refused = yield* uow.transaction(Effect.gen(function*() {
        const error = yield* Effect.flip(orders.insert(again))
        // The use case answers the duplicate and records something in the same unit of work.
        yield* transactions.insert(attempt)
        return error
      }))
      expect(refused).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
      expect(yield* transactions.find(accountId, attempt.id)).toEqual(Option.some(attempt))
    }))

  it.effect("orders: findByReference gives the newest order with the reference (sessions reuse one)", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const accountId = yield* storedAccount
      const reference = "shared-ref"
      const olderCheckout = yield* newOrder(accountId, { merchant_reference: reference, subtype: "checkout" })
      const newerCheckout = yield* newOrder(accountId, {
        merchant_reference: reference,
        subtype: "checkout",
        created_at: later(T0)
      })
      yield* orders.insert(olderCheckout)
      yield* orders.insert(newerCheckout)
      expect(yield* orders.findByReference(accountId, reference)).toEqual(Option.some(newerCheckout))
    }))

  it.effect("orders: listByReference gives every order of the account with the reference, newest first, ties by id, at most the limit", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const accountId = yield* storedAccount
      const other = yield* storedAccount
      const reference = "reused ref/ü"
      const oldest = yield* newOrder(accountId, { merchant_reference: reference, subtype: "checkout", created_at: later(T0, -60_000) })
      const expired = yield* newOrder(accountId, { merchant_reference: reference, subtype: "checkout" })
      const sameInstant = yield* newOrder(accountId, { merchant_reference: reference, subtype: "checkout" })
      const newest = yield* newOrder(accountId, { merchant_reference: reference, subtype: "checkout", created_at: later(T0) })
      const elsewhere = yield* newOrder(other, { merchant_reference: reference })
      const unrelated = yield* newOrder(accountId)
      for (const order of [expired, newest, elsewhere, oldest, unrelated, sameInstant]) yield* orders.insert(order)

      const all = yield* orders.listByReference(accountId, reference, 100)
      expect(all).toEqual(newestFirst([oldest, expired, sameInstant, newest]))
      expect(all[0]).toEqual(newest)
      expect(yield* orders.listByReference(accountId, reference, 2)).toEqual(all.slice(0, 2))
      expect(yield* orders.listByReference(other, reference, 100)).toEqual([elsewhere])
      expect(yield* orders.listByReference(accountId, "ref-unknown", 100)).toEqual([])
    }))

  it.effect("orders: a checkout order keeps its session's id through insert and update; a direct payment has none", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const sessions = yield* CheckoutSessionRepo
      const accountId = yield* storedAccount
      const session = yield* newSession(accountId)
      yield* sessions.insert(session)
      const stored = Option.getOrThrow(yield* orders.find(accountId, session.order_id))
      expect([stored.subtype, stored.checkout_session_id]).toEqual(["checkout", session.id])

      const v2: Payment.Order = { ...stored, status: "succeeded", version: 2 }
      yield* orders.update(decided(v2))
      expect((yield* orders.findAny(stored.id)).pipe(Option.map((o) => o.checkout_session_id))).toEqual(Option.some(session.id))

      const direct = yield* newOrder(accountId)
      yield* orders.insert(direct)
      expect((yield* orders.find(accountId, direct.id)).pipe(Option.map((o) => o.checkout_session_id))).toEqual(Option.some(null))
    }))

  it.effect("orders: updates on the version before; refuses a stale version, an unknown id and another account", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const accountId = yield* storedAccount
      const other = yield* storedAccount
      const order = yield* newOrder(accountId)
      yield* orders.insert(order)

      const v2: Payment.Order = { ...order, status: "succeeded", received_amount: null, updated_at: later(T0), version: 2 }
      yield* orders.update(decided(v2))
      expect(yield* orders.find(accountId, order.id)).toEqual(Option.some(v2))

      const stale = yield* Effect.flip(orders.update(decided({ ...order, status: "canceled", version: 2 })))
      expect(stale).toBeInstanceOf(Errors.Conflict)
      expect(stale.message).toContain(order.id)
      expect((yield* Effect.flip(orders.update(decided({ ...v2, id: "ord_doesnotexist000000" as OrderId, version: 3 }))))._tag).toBe("Conflict")
      expect((yield* Effect.flip(orders.update(decided({ ...v2, account_id: other, version: 3 }))))._tag).toBe("Conflict")
      expect(yield* orders.findAny(order.id)).toEqual(Option.some(v2))
    }))

  it.effect("orders, transactions: every status and kind the domain defines can be stored", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const accountId = yield* storedAccount
      const kinds = Payment.TransactionKind.literals
      const stored: Array<Payment.Order> = []
      for (const status of ORDER_STATUSES) {
        const order = yield* newOrder(accountId, { status })
        yield* orders.insert(order)
        stored.push(order)
        expect(Option.map(yield* orders.find(accountId, order.id), (o) => o.status)).toEqual(Option.some(status))
      }
      // Every transaction status and every kind at least once.
      for (let i = 0; i < Math.max(TRANSACTION_STATUSES.length, kinds.length); i++) {
        const transaction = yield* newTransaction(stored[i % stored.length], {
          status: TRANSACTION_STATUSES[i % TRANSACTION_STATUSES.length],
          kind: kinds[i % kinds.length]
        })
        yield* transactions.insert(transaction)
        expect(yield* transactions.find(accountId, transaction.id)).toEqual(Option.some(transaction))
      }
    }))

  it.effect("orders: refunded_amount stays within what arrived (received_amount when set, else amount): past it is a defect and changes nothing (migrations 0028, 0036)", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const account = yield* storedAccount
      // contract.md: "After an accepted crypto overpayment the refundable balance is what arrived".
      const over = yield* newOrder(account, { status: "succeeded", capture_method: "automatic", payment_method: "crypto", amount: 10_000, currency: "USD", received_amount: 15_000 })
      yield* orders.insert(over)
      yield* orders.update(decided({ ...over, refunded_amount: 15_000, version: 2 }))
      expect(yield* refusedAsDefect(orders.update(decided({ ...over, refunded_amount: 15_001, version: 3 })))).toBe(true)
      // Nor what arrived lowered beneath what was refunded.
      expect(yield* refusedAsDefect(orders.update(decided({ ...over, refunded_amount: 15_000, received_amount: 14_999, version: 3 })))).toBe(true)
      expect(Option.map(yield* orders.findAny(over.id), (o) => [o.refunded_amount, o.version])).toEqual(Option.some([15_000, 2]))
      const plain = yield* newOrder(account, { status: "succeeded", capture_method: "automatic", amount: 10_000, currency: "USD", received_amount: null })
      yield* orders.insert(plain)
      expect(yield* refusedAsDefect(orders.update(decided({ ...plain, refunded_amount: 10_001, version: 2 })))).toBe(true)
      expect(yield* refusedAsDefect(orders.update(decided({ ...plain, refunded_amount: -1, version: 2 })))).toBe(true)
      yield* orders.update(decided({ ...plain, refunded_amount: 10_000, version: 2 }))
      const under = yield* newOrder(account, { status: "succeeded", capture_method: "automatic", payment_method: "crypto", amount: 10_000, currency: "USD", received_amount: 4_000 })
      expect(yield* refusedAsDefect(orders.insert({ ...under, refunded_amount: 4_001 }))).toBe(true)
      expect(yield* orders.findAny(under.id)).toEqual(Option.none())
    }))

  it.effect("orders: lock reads the order inside a unit of work; outside one it is a defect", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const uow = yield* UnitOfWork
      const order = yield* newOrder(yield* storedAccount)
      yield* orders.insert(order)

      expect(yield* uow.transaction(orders.lock(order.id))).toEqual(Option.some(order))
      expect(yield* uow.transaction(orders.lock("ord_doesnotexist000000"))).toEqual(Option.none())
      const outside = yield* Effect.exit(orders.lock(order.id))
      expect(Exit.isFailure(outside) && Cause.hasDies(outside.cause)).toBe(true)
    }))

  it.effect("orders: a locked order waits for the holder's unit of work, then reads its update", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const uow = yield* UnitOfWork
      const order = yield* newOrder(yield* storedAccount, { status: "processing" })
      yield* orders.insert(order)

      const locked = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(uow.transaction(Effect.gen(function*() {
        const current = Option.getOrThrow(yield* orders.lock(order.id))
        yield* Deferred.succeed(locked, undefined)
        yield* Effect.sleep("300 millis")
        yield* orders.update(decided({ ...current, status: "succeeded", version: current.version + 1 }))
      })))
      yield* Deferred.await(locked)
      const asked = yield* Clock.currentTimeMillis
      const seen = yield* uow.transaction(Effect.gen(function*() {
        const current = Option.getOrThrow(yield* orders.lock(order.id))
        // Decided on what the holder wrote, so this write does not conflict.
        yield* orders.update(decided({ ...current, received_amount: 1, version: current.version + 1 }))
        return current
      }))
      const waited = (yield* Clock.currentTimeMillis) - asked
      yield* Fiber.join(holder)

      expect([seen.status, seen.version]).toEqual(["succeeded", 2])
      expect(waited).toBeGreaterThanOrEqual(200)
      expect(Option.map(yield* orders.findAny(order.id), (o) => [o.status, o.received_amount, o.version]))
        .toEqual(Option.some(["succeeded", 1, 3]))
    }))

  it.effect("a failed unit of work leaves no order, transaction or event behind", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const events = yield* EventRepo
      const uow = yield* UnitOfWork
      const accountId = yield* storedAccount
      const order = yield* newOrder(accountId)
      const attempt = yield* newTransaction(order)
      const event = yield* newEvent(order)

      const failed = yield* Effect.flip(uow.transaction(Effect.gen(function*() {
        yield* orders.insert(order)
        yield* transactions.insert(attempt)
        yield* events.append(event)
        expect(yield* transactions.listByOrder(order.id)).toEqual([attempt])
        expect(yield* events.listByOrder(order.id)).toEqual([event])
        return yield* Effect.fail(new Boom())
      })))
      expect(failed).toBeInstanceOf(Boom)
      expect(yield* orders.findAny(order.id)).toEqual(Option.none())
      expect(yield* orders.findByReference(accountId, order.merchant_reference)).toEqual(Option.none())
      expect(yield* transactions.findAny(attempt.id)).toEqual(Option.none())
      expect(yield* transactions.listByOrder(order.id)).toEqual([])
      expect(yield* events.listByOrder(order.id)).toEqual([])
      // The reference was released with the rollback.
      yield* orders.insert(order)
    }))

  it.effect("a unit of work's writes read back as last written, inside it and after it (an order and its transaction inserted, then updated twice)", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const events = yield* EventRepo
      const uow = yield* UnitOfWork
      const accountId = yield* storedAccount
      const order = yield* newOrder(accountId)
      const attempt = yield* newTransaction(order)
      const v2: Payment.Order = { ...order, status: "processing", updated_at: later(T0), version: 2 }
      const v3: Payment.Order = { ...v2, status: "succeeded", updated_at: later(T0, 2000), version: 3 }
      const paid: Payment.Transaction = { ...attempt, status: "completed", updated_at: later(T0), version: attempt.version + 1 }
      const event = yield* newEvent(order)

      yield* uow.transaction(Effect.gen(function*() {
        yield* orders.insert(order, { refusedWithUnit: true })
        yield* transactions.insert(attempt)
        yield* orders.update(decided(v2))
        yield* transactions.update(decided(paid))
        expect(yield* orders.findAny(order.id)).toEqual(Option.some(v2))
        yield* orders.update(decided(v3))
        yield* events.append(event)
      }))
      expect(yield* orders.findAny(order.id)).toEqual(Option.some(v3))
      expect(yield* transactions.listByOrder(order.id)).toEqual([paid])
      expect(yield* events.listByOrder(order.id)).toEqual([event])
    }))

  it.effect("a unit of work with more writes than one statement takes (1,200 events) stores them all", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const events = yield* EventRepo
      const uow = yield* UnitOfWork
      const accountId = yield* storedAccount
      const order = yield* newOrder(accountId)
      yield* orders.insert(order)
      const many = yield* Effect.forEach(Array.from({ length: 1_200 }, (_, i) => i), (i) => newEvent(order, { created_at: later(T0, i) }))
      yield* uow.transaction(Effect.forEach(many, (event) => events.append(event), { discard: true }))
      expect((yield* events.listByOrder(order.id)).map((event) => event.id)).toEqual(many.map((event) => event.id))
    }))

  it.effect("a stale update inside a unit of work fails the unit with Conflict, and none of its writes lands", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const uow = yield* UnitOfWork
      const accountId = yield* storedAccount
      const order = yield* newOrder(accountId)
      yield* orders.insert(order)
      const attempt = yield* newTransaction(order)

      const failed = yield* Effect.flip(uow.transaction(Effect.gen(function*() {
        yield* transactions.insert(attempt)
        // Version 3 over a stored version 1: another writer's move, as far as this unit knows.
        yield* orders.update(decided({ ...order, status: "canceled", version: 3 }))
      })))
      expect(failed._tag).toBe("Conflict")
      expect(yield* orders.findAny(order.id)).toEqual(Option.some(order))
      expect(yield* transactions.findAny(attempt.id)).toEqual(Option.none())
    }))

  it.effect("an order whose refusal is left to its unit of work: a duplicate reference fails the unit whole, found at its end or before a read", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const uow = yield* UnitOfWork
      const accountId = yield* storedAccount
      const first = yield* newOrder(accountId)
      yield* orders.insert(first)

      const atEnd = yield* newOrder(accountId, { merchant_reference: first.merchant_reference })
      const atEndAttempt = yield* newTransaction(atEnd)
      const refusedAtEnd = yield* Effect.flip(uow.transaction(Effect.gen(function*() {
        yield* orders.insert(atEnd, { refusedWithUnit: true })
        yield* transactions.insert(atEndAttempt)
      })))
      expect(refusedAtEnd).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
      expect(yield* orders.findAny(atEnd.id)).toEqual(Option.none())
      expect(yield* transactions.findAny(atEndAttempt.id)).toEqual(Option.none())

      const beforeRead = yield* newOrder(accountId, { merchant_reference: first.merchant_reference })
      const refusedBeforeRead = yield* Effect.flip(uow.transaction(Effect.gen(function*() {
        yield* orders.insert(beforeRead, { refusedWithUnit: true })
        yield* orders.lock(first.id)
      })))
      expect(refusedBeforeRead).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
      expect(yield* orders.findAny(beforeRead.id)).toEqual(Option.none())
      expect(yield* orders.findByReference(accountId, first.merchant_reference)).toEqual(Option.some(first))
    }))

  it.effect("transactions: insert, find by account, findAny, listByOrder oldest first", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const accountId = yield* storedAccount
      const other = yield* storedAccount
      const order = yield* newOrder(accountId)
      const sibling = yield* newOrder(accountId)
      yield* orders.insert(order)
      yield* orders.insert(sibling)

      const authorization = yield* newTransaction(order, {
        status: "processing",
        decline_code: "do_not_honor",
        next_action: {
          type: "redirect",
          redirect_url: "https://acs.example/challenge",
          expires_at: "2025-03-01T10:15:00.000Z",
          qr: { data: "000201", deep_links: [{ label: "Open", url: "bank://pay", target: "app" }] }
        },
        three_ds: "required",
        expires_at: "2025-03-01T10:15:00.456Z"
      })
      const capture = yield* newTransaction(order, {
        kind: "capture",
        status: "processing",
        amount: 1_000,
        parent_transaction_id: authorization.id,
        final: true,
        multicapture: null,
        three_ds: null,
        payment_instrument: null,
        created_at: later(T0, 2)
      })
      // Same instant as the authorization: the id breaks the tie.
      const retry = yield* newTransaction(order, { kind: "payment", provider_transaction_id: null })
      // Inserted out of order (the capture after its authorization, which the foreign key needs).
      yield* transactions.insert(retry)
      yield* transactions.insert(authorization)
      yield* transactions.insert(capture)
      yield* transactions.insert(yield* newTransaction(sibling))

      expect(yield* transactions.find(accountId, authorization.id)).toEqual(Option.some(authorization))
      expect(yield* transactions.find(accountId, capture.id)).toEqual(Option.some(capture))
      expect(yield* transactions.findAny(capture.id)).toEqual(Option.some(capture))
      expect(yield* transactions.find(other, capture.id)).toEqual(Option.none())
      expect(yield* transactions.find(accountId, "txn_doesnotexist000000")).toEqual(Option.none())
      const tied = [authorization, retry].sort((a, b) => (a.id < b.id ? -1 : 1))
      expect(yield* transactions.listByOrder(order.id)).toEqual([...tied, capture])
      expect(yield* transactions.listByOrder("ord_doesnotexist000000")).toEqual([])
      // a search page's orders at once: each order's transactions in listByOrder's order
      expect(yield* transactions.listByOrders([order.id])).toEqual([...tied, capture])
      const both = yield* transactions.listByOrders([order.id, sibling.id, "ord_doesnotexist000000"])
      expect(both.filter((t) => t.order_id === order.id)).toEqual([...tied, capture])
      expect(both.filter((t) => t.order_id === sibling.id)).toEqual(yield* transactions.listByOrder(sibling.id))
      expect(both).toHaveLength(4)
      expect(yield* transactions.listByOrders([])).toEqual([])
    }))

  it.effect("transactions: updates on the version before; refuses a stale version and another account", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const other = yield* storedAccount
      const order = yield* newOrder(yield* storedAccount)
      yield* orders.insert(order)
      const attempt = yield* newTransaction(order, { status: "processing" })
      yield* transactions.insert(attempt)

      const v2: Payment.Transaction = { ...attempt, status: "failed", decline_code: "insufficient_funds", version: 2 }
      yield* transactions.update(decided(v2))
      expect(yield* transactions.findAny(attempt.id)).toEqual(Option.some(v2))
      expect(yield* Effect.flip(transactions.update(decided({ ...attempt, status: "completed", version: 2 })))).toBeInstanceOf(
        Errors.Conflict
      )
      expect((yield* Effect.flip(transactions.update(decided({ ...v2, account_id: other, version: 3 }))))._tag).toBe("Conflict")
      expect(yield* transactions.findAny(attempt.id)).toEqual(Option.some(v2))
    }))

  it.effect("events: appended events list by order, oldest first", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const events = yield* EventRepo
      const accountId = yield* storedAccount
      const order = yield* newOrder(accountId)
      const otherOrder = yield* newOrder(accountId)
      yield* orders.insert(order)
      yield* orders.insert(otherOrder)

      const created = yield* newEvent(order, { type: "order.created", processing_profile: null })
      const succeeded = yield* newEvent(order, { type: "order.succeeded", created_at: later(T0, 1) })
      yield* events.append(succeeded)
      yield* events.append(created)
      yield* events.append(yield* newEvent(otherOrder))
      yield* events.append(yield* newEvent(order, { order_id: null, type: "account.updated" }))

      expect(yield* events.listByOrder(order.id)).toEqual([created, succeeded])
      expect(yield* events.listByOrder("ord_doesnotexist000000")).toEqual([])
    }))

  it.effect("orders: search filters by status (any of), created_from (inclusive), created_to (exclusive), profile, reference", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const accountId = yield* storedAccount
      const at = (ms: number) => later(T0, ms)
      const a = yield* newOrder(accountId, { status: "pending", created_at: at(0), processing_profile: null })
      const b = yield* newOrder(accountId, { status: "succeeded", created_at: at(1) })
      const c = yield* newOrder(accountId, { status: "failed", created_at: at(2), processing_profile: "us" })
      const d = yield* newOrder(accountId, { status: "succeeded", created_at: at(3_000) })
      for (const order of [c, a, d, b]) yield* orders.insert(order)
      const search = (query: Omit<Payment.SearchQuery, "limit">) =>
        Effect.map(orders.search(accountId, { limit: 10, ...query }), (page) => idsOf(page.data))

      expect(yield* search({})).toEqual(idsOf([d, c, b, a]))
      expect(yield* search({ status: [] })).toEqual(idsOf([d, c, b, a]))
      expect(yield* search({ status: ["succeeded"] })).toEqual(idsOf([d, b]))
      expect(yield* search({ status: ["failed", "pending"] })).toEqual(idsOf([c, a]))
      expect(yield* search({ status: ["canceled"] })).toEqual([])
      expect(yield* search({ created_from: b.created_at })).toEqual(idsOf([d, c, b]))
      expect(yield* search({ created_to: c.created_at })).toEqual(idsOf([b, a]))
      expect(yield* search({ created_from: b.created_at, created_to: d.created_at })).toEqual(idsOf([c, b]))
      // Any ISO offset names the same instant.
      expect(yield* search({ created_from: "2025-03-01T11:00:00.124+01:00" })).toEqual(idsOf([d, c, b]))
      expect(yield* search({ processing_profile: "eu" })).toEqual(idsOf([d, b]))
      expect(yield* search({ merchant_reference: c.merchant_reference })).toEqual([c.id])
      expect(yield* search({ status: ["succeeded"], processing_profile: "eu", created_to: d.created_at })).toEqual([b.id])
      expect(yield* orders.search(accountId, { limit: 4 })).toEqual({ data: [d, c, b, a], has_more: false })
      expect(yield* orders.search(accountId, { limit: 3 })).toEqual({ data: [d, c, b], has_more: true })
    }))

  it.effect("orders: search pages newest first with a cursor, ties on created_at broken by id", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const accountId = yield* storedAccount
      const tied = yield* Effect.forEach(Array.from({ length: 6 }), () => newOrder(accountId))
      const newest = yield* newOrder(accountId, { created_at: later(T0, 1) })
      const oldest = yield* newOrder(accountId, { created_at: later(T0, -1) })
      const all = [...tied, newest, oldest]
      for (const order of all) yield* orders.insert(order)
      const expected = newestFirst(all)
      expect(expected[0]).toBe(newest)
      expect(expected.at(-1)).toBe(oldest)

      const pages = yield* allPages((query) => orders.search(accountId, query), { limit: 3 })
      expect(pages.map((page) => [page.data.length, page.has_more])).toEqual([[3, true], [3, true], [2, false]])
      expect(pages.flatMap((page) => idsOf(page.data))).toEqual(idsOf(expected))

      // A cursor is a position, not a page: any row's (created_at, id) starts strictly below that row.
      const page = yield* orders.search(accountId, { limit: 2, cursor: { created_at: T0, id: expected[3].id } })
      expect(page).toEqual({ data: expected.slice(4, 6), has_more: true })
    }))

  it.effect("transactions: search filters like orders; merchant_reference is the order's", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const accountId = yield* storedAccount
      const other = yield* storedAccount
      const first = yield* newOrder(accountId)
      const second = yield* newOrder(accountId)
      // Another account's order with the same reference must not pull its transactions in.
      const foreign = yield* newOrder(other, { merchant_reference: first.merchant_reference })
      for (const order of [first, second, foreign]) yield* orders.insert(order)

      const failed = yield* newTransaction(first, { status: "failed", created_at: later(T0, 1) })
      const completed = yield* newTransaction(first, { status: "completed", created_at: later(T0, 2) })
      const pending = yield* newTransaction(second, { status: "pending", created_at: later(T0, 3), processing_profile: null })
      const tiedA = yield* newTransaction(second, { created_at: later(T0, 4) })
      const tiedB = yield* newTransaction(second, { created_at: later(T0, 4) })
      const foreignAttempt = yield* newTransaction(foreign)
      const mine = [failed, completed, pending, tiedA, tiedB]
      for (const t of [...mine, foreignAttempt]) yield* transactions.insert(t)
      const search = (query: Omit<Payment.SearchQuery, "limit">) =>
        Effect.map(transactions.search(accountId, { limit: 10, ...query }), (page) => idsOf(page.data))

      expect(yield* search({})).toEqual(idsOf(newestFirst(mine)))
      expect(yield* search({ merchant_reference: first.merchant_reference })).toEqual(idsOf([completed, failed]))
      expect(yield* search({ status: ["failed", "pending"] })).toEqual(idsOf([pending, failed]))
      expect(yield* search({ created_from: completed.created_at, created_to: tiedA.created_at })).toEqual(
        idsOf([pending, completed])
      )
      expect(yield* search({ processing_profile: "eu", merchant_reference: second.merchant_reference })).toEqual(
        idsOf(newestFirst([tiedA, tiedB]))
      )
      expect(yield* transactions.search(other, { limit: 10 })).toEqual({ data: [foreignAttempt], has_more: false })

      const pages = yield* allPages((query) => transactions.search(accountId, query), { limit: 2 })
      expect(pages.map((page) => page.has_more)).toEqual([true, true, false])
      expect(pages.flatMap((page) => idsOf(page.data))).toEqual(idsOf(newestFirst(mine)))
    }))

  it.effect("transactions: listSettling gives processing captures and queued refunds, payouts and transfers (pending; processing with no call, as an older version wrote them) with a provider id, due by the time given (put off until settlement_check_at, else since created), soonest first, ties by id, across accounts", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const first = yield* newOrder(yield* storedAccount)
      const second = yield* newOrder(yield* storedAccount)
      yield* orders.insert(first)
      yield* orders.insert(second)
      const capture = (order: Payment.Order, overrides: Partial<Payment.Transaction>) =>
        newTransaction(order, { kind: "capture", status: "processing", ...overrides })
      const at = (seconds: number) => new Date(Date.UTC(2001, 0, 1) + seconds * 1000).toISOString()

      // Issue 21: a settlement a round did not settle is put off; one stuck since long ago must not
      // hold newer ones back, so the poll orders by when each is due, not by age.
      const stuck = yield* capture(second, { created_at: at(0), settlement_check_at: at(10) })
      const newer = yield* capture(first, { created_at: at(1) })
      const queued = yield* capture(first, { kind: "payout", status: "pending", created_at: at(2) })
      // Due at the same instant as `newer`, one by creation and one put off to it: ties go by id.
      const [tieA, tieB] = [
        yield* capture(second, { kind: "refund", status: "pending", created_at: at(1) }),
        yield* capture(first, { kind: "transfer", status: "pending", created_at: at(0), settlement_check_at: at(1) })
      ]
      // Queued by a process of the version before migration 0029 while it ran: `processing`, no call in flight.
      const older = yield* capture(second, { kind: "refund", status: "processing", created_at: at(3) })
      const excluded = [
        yield* capture(first, { provider_transaction_id: null, created_at: at(0) }),
        yield* capture(first, { status: "completed", created_at: at(0) }),
        yield* capture(first, { kind: "authorization", created_at: at(0) }),
        yield* capture(first, { status: "pending", created_at: at(0) }),
        // contract.md: a refund, payout or transfer reads "processing only while a call is in flight".
        yield* capture(first, { kind: "refund", status: "processing", created_at: at(0), pending_call: { key: "k", operation: "refund", at: T0 } }),
        yield* capture(first, { kind: "transfer", status: "pending", created_at: at(0), pending_call: { key: "k", operation: "payout", at: T0 } })
      ]
      for (const t of [newer, ...excluded, tieB, older, queued, stuck, tieA]) yield* transactions.insert(t)
      expect(Option.getOrThrow(yield* transactions.findAny(stuck.id)).settlement_check_at).toBe(at(10))

      const mine = (settling: ReadonlyArray<Payment.Transaction>) =>
        idsOf(settling.filter((t) => t.order_id === first.id || t.order_id === second.id))
      const dueOf = (t: Payment.Transaction) => Date.parse(t.settlement_check_at ?? t.created_at)
      const settling = yield* transactions.listSettling(at(5), 10_000)
      for (const t of settling) {
        expect([t.kind === "capture" ? t.status === "processing" : ["pending", "processing"].includes(t.status), t.provider_transaction_id === null, t.pending_call]).toEqual([true, false, null])
        expect(dueOf(t)).toBeLessThanOrEqual(Date.parse(at(5)))
      }
      const dues = settling.map(dueOf)
      expect(dues).toEqual([...dues].sort((x, y) => x - y))
      expect(mine(settling)).toEqual([...idsOf([tieA, newer, tieB].sort((a, b) => (a.id < b.id ? -1 : 1))), queued.id, older.id])
      expect(yield* transactions.listSettling(at(5), 1)).toEqual(settling.slice(0, 1))
      // Not due before its time; at its time, after everything due sooner although created first.
      expect(mine(yield* transactions.listSettling(at(10), 10_000)).at(-1)).toBe(stuck.id)
      expect(mine(yield* transactions.listSettling(at(1), 10_000))).toHaveLength(3)
      expect(mine(yield* transactions.listSettling(at(0.999), 10_000))).toEqual([])

      // Put off again: read back, and due only then.
      yield* transactions.update(decided({ ...stuck, settlement_check_at: at(20), version: 2 }))
      expect(mine(yield* transactions.listSettling(at(19), 10_000))).not.toContain(stuck.id)
      expect(mine(yield* transactions.listSettling(at(20), 10_000)).at(-1)).toBe(stuck.id)

      yield* transactions.update(decided({ ...newer, status: "completed", version: 2 }))
      expect(mine(yield* transactions.listSettling(at(20), 10_000))).not.toContain(newer.id)
    }))

  it.effect("transactions: listExpiredWindows gives in-flight attempts past expires_at, soonest expiry first, across accounts", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const first = yield* newOrder(yield* storedAccount, { status: "requires_action" })
      const second = yield* newOrder(yield* storedAccount, { status: "requires_action" })
      yield* orders.insert(first)
      yield* orders.insert(second)
      // A window of time no other test's transaction expires in (theirs expire in 2025, or never).
      const now = "1986-06-01T12:00:00.000Z"
      const ago = (ms: number) => new Date(Date.parse(now) - ms).toISOString()
      const attempt = (order: Payment.Order, overrides: Partial<Payment.Transaction>) =>
        newTransaction(order, { kind: "payment", status: "pending", ...overrides })

      const oldest = yield* attempt(second, { status: "initial", expires_at: ago(60_000) })
      const processing = yield* attempt(first, { status: "processing", expires_at: ago(1) })
      // Due exactly now: included (expires_at <= now); the same instant is ordered by id.
      const [dueNowA, dueNowB] = [yield* attempt(first, { expires_at: now }), yield* attempt(second, { expires_at: now })]
      const excluded = [
        yield* attempt(first, { expires_at: "1986-06-01T12:00:00.001Z" }),
        yield* attempt(first, { expires_at: null }),
        // A provider call in doubt is reconciliation's, not the window's.
        yield* attempt(first, { status: "processing", expires_at: ago(60_000), pending_call: { key: "k", operation: "authorize", at: ago(60_000) } }),
        ...(yield* Effect.forEach(
          ["completed", "failed", "canceled", "returned"] as const,
          (status) => attempt(first, { status, expires_at: ago(120_000) })
        ))
      ]
      for (const t of [processing, ...excluded, dueNowB, oldest, dueNowA]) yield* transactions.insert(t)
      const mine = new Set(idsOf([oldest, processing, dueNowA, dueNowB, ...excluded]))

      const expired = yield* transactions.listExpiredWindows(now, 10_000)
      for (const t of expired) {
        expect(["initial", "pending", "processing"]).toContain(t.status)
        expect(Date.parse(t.expires_at!)).toBeLessThanOrEqual(Date.parse(now))
      }
      const expiring = expired.map((t) => Date.parse(t.expires_at!))
      expect(expiring).toEqual([...expiring].sort((x, y) => x - y))
      const sameInstant = [dueNowA, dueNowB].sort((a, b) => (a.id < b.id ? -1 : 1))
      expect(expired.filter((t) => mine.has(t.id))).toEqual([oldest, processing, ...sameInstant])
      expect(yield* transactions.listExpiredWindows(now, 1)).toEqual(expired.slice(0, 1))
      expect(idsOf((yield* transactions.listExpiredWindows(ago(30_000), 10_000)).filter((t) => mine.has(t.id)))).toEqual(
        idsOf([oldest])
      )

      yield* transactions.update(decided({ ...oldest, status: "canceled", version: 2 }))
      expect(idsOf((yield* transactions.listExpiredWindows(now, 10_000)).filter((t) => mine.has(t.id)))).toEqual(
        idsOf([processing, ...sameInstant])
      )
    }))

  it.effect("events: findAny from any account; search newest first by account or all, type, created_from (inclusive)", () =>
    Effect.gen(function*() {
      const events = yield* EventRepo
      const ids = yield* Ids
      const owner = yield* storedAccount
      const other = yield* storedAccount
      // Types of this test only, so a search across accounts sees no other test's events.
      const paid = `test.paid.${yield* ids.randomHex(6)}`
      const failed = `test.failed.${yield* ids.randomHex(6)}`
      const a = yield* storedEvent(owner, { type: paid, created_at: later(T0, 0) })
      const b = yield* storedEvent(owner, { type: failed, created_at: later(T0, 1) })
      const c = yield* storedEvent(owner, { type: paid, created_at: later(T0, 2), processing_profile: "eu" })
      const d = yield* storedEvent(owner, { type: paid, created_at: later(T0, 3_000) })
      const elsewhere = yield* storedEvent(other, { type: paid, created_at: later(T0, 1) })
      const search = (query: Omit<Parameters<typeof events.search>[0], "limit">) =>
        Effect.map(events.search({ limit: 10, ...query }), (page) => idsOf(page.data))

      expect(yield* events.findAny(c.id)).toEqual(Option.some(c))
      expect(yield* events.findAny("evt_doesnotexist000000")).toEqual(Option.none())
      expect(yield* events.search({ account_id: owner, limit: 10 })).toEqual({ data: [d, c, b, a], has_more: false })
      expect(yield* search({ account_id: owner, type: paid })).toEqual(idsOf([d, c, a]))
      expect(yield* search({ account_id: owner, created_from: b.created_at })).toEqual(idsOf([d, c, b]))
      expect(yield* search({ account_id: owner, created_from: "2025-03-01T11:00:00.124+01:00", type: paid })).toEqual(
        idsOf([d, c])
      )
      expect(yield* search({ account_id: other })).toEqual([elsewhere.id])
      // No account: the operator's view across accounts.
      expect(yield* search({ type: paid })).toEqual(idsOf(newestFirst([a, c, d, elsewhere])))
      expect(yield* search({ type: failed, account_id: other })).toEqual([])
    }))

  it.effect("events: search pages newest first with a cursor, ties broken by id", () =>
    Effect.gen(function*() {
      const events = yield* EventRepo
      const accountId = yield* storedAccount
      const tied = yield* Effect.forEach(Array.from({ length: 5 }), () => storedEvent(accountId))
      const newest = yield* storedEvent(accountId, { created_at: later(T0, 1) })
      const oldest = yield* storedEvent(accountId, { created_at: later(T0, -1) })
      const expected = newestFirst([...tied, newest, oldest])

      const pages = yield* allPages(events.search, { account_id: accountId, limit: 3 })
      expect(pages.map((page) => [page.data.length, page.has_more])).toEqual([[3, true], [3, true], [1, false]])
      expect(pages.flatMap((page) => idsOf(page.data))).toEqual(idsOf(expected))
    }))

  it.effect("webhook endpoints: insert, find scoped by account, findAny, list oldest first", () =>
    Effect.gen(function*() {
      const endpoints = yield* WebhookEndpointRepo
      const owner = yield* storedAccount
      const other = yield* storedAccount
      const newer = yield* newEndpoint(owner, { created_at: later(T0, 1) })
      const older = yield* newEndpoint(owner, { enabled_events: ["*"], description: null, status: "disabled" })
      const tied = yield* newEndpoint(owner, { enabled_events: [] })
      const foreign = yield* newEndpoint(other)
      for (const endpoint of [newer, older, tied, foreign]) yield* endpoints.insert(endpoint, MAX_TEST_ENDPOINTS)

      expect(yield* endpoints.find(owner, newer.id)).toEqual(Option.some(newer))
      expect(yield* endpoints.find(owner, older.id)).toEqual(Option.some(older))
      expect(yield* endpoints.findAny(foreign.id)).toEqual(Option.some(foreign))
      expect(yield* endpoints.find(other, newer.id)).toEqual(Option.none())
      expect(yield* endpoints.find(owner, foreign.id)).toEqual(Option.none())
      expect(yield* endpoints.findAny("we_doesnotexist000000")).toEqual(Option.none())
      expect(yield* endpoints.list(owner)).toEqual([...newestFirst([older, tied]).reverse(), newer])
      expect(yield* endpoints.list(other)).toEqual([foreign])
      expect(yield* endpoints.list("acct_doesnotexist000000")).toEqual([])
    }))

  it.effect("webhook endpoints: updates on the version before; refuses a stale version, an unknown id and another account", () =>
    Effect.gen(function*() {
      const endpoints = yield* WebhookEndpointRepo
      const owner = yield* storedAccount
      const other = yield* storedAccount
      const endpoint = yield* newEndpoint(owner)
      yield* endpoints.insert(endpoint, MAX_TEST_ENDPOINTS)

      const v2: Webhook.WebhookEndpoint = {
        ...endpoint,
        url: "https://shop.example/v2",
        enabled_events: ["*"],
        description: null,
        status: "disabled",
        updated_at: later(T0),
        version: 2
      }
      yield* endpoints.update(decided(v2))
      expect(yield* endpoints.find(owner, endpoint.id)).toEqual(Option.some(v2))

      const stale = yield* Effect.flip(endpoints.update(decided({ ...endpoint, url: "https://lost.example", version: 2 })))
      expect(stale).toBeInstanceOf(Errors.Conflict)
      expect(stale.message).toContain(endpoint.id)
      expect((yield* Effect.flip(endpoints.update(decided({ ...v2, id: "we_doesnotexist000000", version: 3 }))))._tag).toBe("Conflict")
      expect((yield* Effect.flip(endpoints.update(decided({ ...v2, account_id: other, version: 3 }))))._tag).toBe("Conflict")
      expect(yield* endpoints.findAny(endpoint.id)).toEqual(Option.some(v2))
    }))

  it.effect("webhook endpoints: delete removes only the account's endpoint; its deliveries and attempts stay", () =>
    Effect.gen(function*() {
      const endpoints = yield* WebhookEndpointRepo
      const deliveries = yield* WebhookDeliveryRepo
      const owner = yield* storedAccount
      const other = yield* storedAccount
      const endpoint = yield* newEndpoint(owner)
      const sibling = yield* newEndpoint(owner)
      yield* endpoints.insert(endpoint, MAX_TEST_ENDPOINTS)
      yield* endpoints.insert(sibling, MAX_TEST_ENDPOINTS)
      const delivery = yield* newDelivery(yield* storedEvent(owner), endpoint.id)
      yield* deliveries.insert(delivery)
      const failed: Webhook.WebhookDelivery = {
        ...delivery,
        status: "failed",
        attempts: 1,
        next_attempt_at: later(T0, 5_000),
        last_attempt_at: T0,
        updated_at: T0
      }
      const attempt: Webhook.DeliveryAttempt = {
        delivery_id: delivery.id,
        attempted_at: T0,
        status_code: 503,
        duration_ms: 12,
        error: "HTTP 503"
      }
      yield* recordAttempt(failed, attempt)

      expect(yield* endpoints.delete(other, endpoint.id)).toBe(false)
      expect(yield* endpoints.find(owner, endpoint.id)).toEqual(Option.some(endpoint))
      expect(yield* endpoints.delete(owner, endpoint.id)).toBe(true)
      expect(yield* endpoints.delete(owner, endpoint.id)).toBe(false)
      expect(yield* endpoints.findAny(endpoint.id)).toEqual(Option.none())
      expect(yield* endpoints.list(owner)).toEqual([sibling])
      expect(yield* deliveries.find(owner, delivery.id)).toEqual(Option.some(failed))
      expect(yield* deliveries.attempts(delivery.id)).toEqual([attempt])
      expect(idsOf((yield* deliveries.search({ endpoint_id: endpoint.id, limit: 10 })).data)).toEqual([delivery.id])
    }))

  it.effect("webhook endpoints: the account's list shows each change made through the repository at once", () =>
    Effect.gen(function*() {
      const endpoints = yield* WebhookEndpointRepo
      const uow = yield* UnitOfWork
      const owner = yield* storedAccount
      const endpoint = yield* newEndpoint(owner)
      // Each list is read right after the change, the one before it read already (a cache holds it).
      expect(yield* endpoints.list(owner)).toEqual([])
      yield* endpoints.insert(endpoint, MAX_TEST_ENDPOINTS)
      expect(yield* endpoints.list(owner)).toEqual([endpoint])
      const v2: Webhook.WebhookEndpoint = { ...endpoint, url: "https://shop.example/v2", updated_at: later(T0), version: 2 }
      yield* endpoints.update(decided(v2))
      expect(yield* endpoints.list(owner)).toEqual([v2])

      // A unit of work reads its own change; rolled back, the change is nowhere.
      const v3: Webhook.WebhookEndpoint = { ...v2, status: "disabled", updated_at: later(T0, 2000), version: 3 }
      const seen = yield* Effect.flip(uow.transaction(Effect.gen(function*() {
        yield* endpoints.update(decided(v3))
        return yield* Effect.fail(yield* endpoints.list(owner))
      })))
      expect(seen).toEqual([v3])
      expect(yield* endpoints.list(owner)).toEqual([v2])

      // A read made by someone else while the unit of work is open sees the list before it, and
      // does not outlive the commit.
      const written = yield* Deferred.make<void>()
      const go = yield* Deferred.make<void>()
      const writer = yield* Effect.forkChild(uow.transaction(Effect.gen(function*() {
        yield* endpoints.update(decided(v3))
        yield* Deferred.succeed(written, undefined)
        yield* Deferred.await(go)
      })))
      yield* Deferred.await(written)
      expect(yield* endpoints.list(owner)).toEqual([v2])
      yield* Deferred.succeed(go, undefined)
      yield* Fiber.join(writer)
      expect(yield* endpoints.list(owner)).toEqual([v3])

      expect(yield* endpoints.delete(owner, endpoint.id)).toBe(true)
      expect(yield* endpoints.list(owner)).toEqual([])
    }))

  it.effect("webhook deliveries: insert, find scoped by account, findAny; every status can be stored", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      const ids = yield* Ids
      const owner = yield* storedAccount
      const other = yield* storedAccount
      const event = yield* storedEvent(owner, { type: "refund.failed" })
      const endpointId = yield* ids.make("webhookEndpoint")
      const stored: Array<Webhook.WebhookDelivery> = []
      for (const status of Webhook.DELIVERY_STATUSES) {
        const delivery = yield* newDelivery(event, endpointId, {
          status,
          attempts: 8,
          next_attempt_at: status === "pending" || status === "failed" ? later(T0, 5_000) : null,
          last_attempt_at: later(T0, 2),
          updated_at: later(T0, 3)
        })
        yield* deliveries.insert(delivery)
        stored.push(delivery)
      }
      for (const delivery of stored) {
        expect(yield* deliveries.find(owner, delivery.id)).toEqual(Option.some(delivery))
        expect(yield* deliveries.findAny(delivery.id)).toEqual(Option.some(delivery))
        expect(yield* deliveries.find(other, delivery.id)).toEqual(Option.none())
      }
      expect(yield* deliveries.findAny("wd_doesnotexist000000")).toEqual(Option.none())

      // An event's fan-out in one write; none at all writes nothing.
      const fanOut = [yield* newDelivery(event, yield* ids.make("webhookEndpoint")), yield* newDelivery(event, yield* ids.make("webhookEndpoint"))]
      yield* deliveries.insert(...fanOut)
      yield* deliveries.insert()
      for (const delivery of fanOut) expect(yield* deliveries.findAny(delivery.id)).toEqual(Option.some(delivery))
      expect(yield* deliveries.attempts(stored[0].id)).toEqual([])
    }))

  it.effect("webhook deliveries: search filters by account or all, endpoint, event, status (any of), created_from (inclusive)", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      const ids = yield* Ids
      const owner = yield* storedAccount
      const other = yield* storedAccount
      const first = yield* storedEvent(owner)
      const second = yield* storedEvent(owner)
      const foreignEvent = yield* storedEvent(other)
      const hooks = yield* ids.make("webhookEndpoint")
      const backup = yield* ids.make("webhookEndpoint")
      const at = (ms: number) => ({ created_at: later(T0, ms) })
      const a = yield* newDelivery(first, hooks, at(0))
      const b = yield* newDelivery(first, backup, { status: "failed", ...at(1) })
      const c = yield* newDelivery(second, hooks, { status: "succeeded", next_attempt_at: null, ...at(2) })
      const d = yield* newDelivery(second, hooks, { status: "exhausted", next_attempt_at: null, ...at(3_000) })
      // Storage does not tie an endpoint id to an account: sharing one shows the operator's search spans accounts.
      const foreign = yield* newDelivery(foreignEvent, hooks, at(1))
      for (const delivery of [c, a, foreign, d, b]) yield* deliveries.insert(delivery)
      const search = (query: Omit<Parameters<typeof deliveries.search>[0], "limit">) =>
        Effect.map(deliveries.search({ limit: 10, ...query }), (page) => idsOf(page.data))

      expect(yield* deliveries.search({ account_id: owner, limit: 10 })).toEqual({ data: [d, c, b, a], has_more: false })
      expect(yield* deliveries.search({ account_id: owner, limit: 3 })).toEqual({ data: [d, c, b], has_more: true })
      expect(yield* search({ account_id: owner, endpoint_id: hooks })).toEqual(idsOf([d, c, a]))
      expect(yield* search({ account_id: owner, event_id: first.id })).toEqual(idsOf([b, a]))
      expect(yield* search({ account_id: owner, status: ["failed", "exhausted"] })).toEqual(idsOf([d, b]))
      expect(yield* search({ account_id: owner, status: [] })).toEqual(idsOf([d, c, b, a]))
      expect(yield* search({ account_id: owner, created_from: b.created_at })).toEqual(idsOf([d, c, b]))
      expect(yield* search({ account_id: owner, created_from: "2025-03-01T11:00:00.124+01:00" })).toEqual(idsOf([d, c, b]))
      expect(yield* search({ account_id: owner, endpoint_id: hooks, event_id: second.id, status: ["succeeded"] })).toEqual(
        [c.id]
      )
      expect(yield* search({ account_id: other })).toEqual([foreign.id])
      expect(yield* search({ account_id: other, event_id: first.id })).toEqual([])
      expect(yield* search({ endpoint_id: hooks })).toEqual(idsOf(newestFirst([a, c, d, foreign])))
      expect(yield* search({ event_id: foreignEvent.id })).toEqual([foreign.id])
    }))

  it.effect("webhook deliveries: search pages newest first with a cursor over three pages, ties broken by id", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      const accountId = yield* storedAccount
      const event = yield* storedEvent(accountId)
      const endpointId = yield* (yield* Ids).make("webhookEndpoint")
      const tied = yield* Effect.forEach(Array.from({ length: 5 }), () => newDelivery(event, endpointId))
      const newest = yield* newDelivery(event, endpointId, { created_at: later(T0, 1) })
      const oldest = yield* newDelivery(event, endpointId, { created_at: later(T0, -1) })
      const all = [...tied, newest, oldest]
      for (const delivery of all) yield* deliveries.insert(delivery)
      const expected = newestFirst(all)

      for (const query of [{ account_id: accountId }, { endpoint_id: endpointId }]) {
        const pages = yield* allPages(deliveries.search, { ...query, limit: 3 })
        expect(pages.map((page) => [page.data.length, page.has_more])).toEqual([[3, true], [3, true], [1, false]])
        expect(pages.flatMap((page) => page.data)).toEqual(expected)
      }
    }))

  it.effect("webhook deliveries: claimDue takes due pending and failed ones, oldest due first, and leases them", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      yield* clearClaimWindow
      const event = yield* storedEvent(yield* storedAccount)
      const endpointId = yield* (yield* Ids).make("webhookEndpoint")
      const due = (ms: number | null, overrides: Partial<Webhook.WebhookDelivery> = {}) =>
        newDelivery(event, endpointId, { next_attempt_at: ms === null ? null : later(CLAIM_WINDOW.from, ms), ...overrides })
      const now = later(CLAIM_WINDOW.from, 60_000)
      const lease = later(now, 30_000)

      const failed = yield* due(10_000, { status: "failed", attempts: 2, last_attempt_at: CLAIM_WINDOW.from })
      const pending = yield* due(20_000)
      const tiedA = yield* due(5_000)
      const tiedB = yield* due(5_000)
      const dueNow = yield* due(60_000)
      const untouched = [
        yield* due(60_001),
        yield* due(0, { status: "succeeded" }),
        yield* due(0, { status: "exhausted" }),
        yield* due(null)
      ]
      for (const delivery of [pending, dueNow, failed, tiedB, ...untouched, tiedA]) yield* deliveries.insert(delivery)

      const claimed = yield* claimWith({ now, leaseUntil: lease, limit: 10 })
      const leased = (d: Webhook.WebhookDelivery) => ({ ...d, next_attempt_at: lease, updated_at: now, lease_token: "lease-test" })
      expect(claimed).toEqual([...[tiedA, tiedB].sort((x, y) => (x.id < y.id ? -1 : 1)), failed, pending, dueNow].map(leased))
      for (const delivery of claimed) expect(yield* deliveries.findAny(delivery.id)).toEqual(Option.some(delivery))
      for (const delivery of untouched) expect(yield* deliveries.findAny(delivery.id)).toEqual(Option.some(delivery))
      expect(yield* claimWith({ now, leaseUntil: lease, limit: 10 })).toEqual([])
    }))

  it.effect("webhook deliveries: claimDue returns each delivery with its event, its endpoint and its account's signing secrets, as stored; no endpoint once it is deleted", () =>
    Effect.gen(function*() {
      const ids = yield* Ids
      yield* clearClaimWindow
      const { account } = yield* newAccount({
        previous_signing_secret: "whsec_previous",
        previous_signing_secret_expires_at: "2025-03-02T10:00:00.000Z"
      })
      yield* (yield* AccountRepo).insert(account)
      const event = yield* storedEvent(account.id, { processing_profile: "eu", data: { payment: { id: "ord_claimed", amount: 3_000_000_000 } } })
      const endpoint = yield* newEndpoint(account.id)
      yield* (yield* WebhookEndpointRepo).insert(endpoint, MAX_TEST_ENDPOINTS)
      const due = (ms: number, endpointId: string) => newDelivery(event, endpointId, { next_attempt_at: later(CLAIM_WINDOW.from, ms) })
      const whole = yield* due(1, endpoint.id)
      // Its endpoint deleted (the deliveries stay): handed out all the same, to be failed as gone.
      const endpointGone = yield* due(2, yield* ids.make("webhookEndpoint"))
      for (const delivery of [endpointGone, whole]) yield* (yield* WebhookDeliveryRepo).insert(delivery)

      const claimed = yield* claimFully({ now: later(CLAIM_WINDOW.from, 60_000), leaseUntil: later(CLAIM_WINDOW.from, 90_000), limit: 10 })
      const signing = Option.some({
        signing_secret: account.signing_secret,
        previous_signing_secret: "whsec_previous",
        previous_signing_secret_expires_at: "2025-03-02T10:00:00.000Z"
      })
      expect(claimed.map(({ delivery, ...read }) => ({ id: delivery.id, ...read }))).toEqual([
        { id: whole.id, event: Option.some(event), endpoint: Option.some(endpoint), signing },
        { id: endpointGone.id, event: Option.some(event), endpoint: Option.none(), signing }
      ])
    }))

  it.effect("webhook deliveries: storing one wakes the dispatcher's listeners, and so do a retry by hand and a resume; a claim, a recorded attempt and a pause do not", () =>
    Effect.scoped(Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      const wakeups = yield* deliveries.wakeups
      const woken = (within: Duration.Input) => Effect.map(Effect.timeoutOption(wakeups.next, within), Option.isSome)
      // Listening may take a moment (PostgreSQL: a connection of its own), and starting to listen
      // wakes the listener once (what was stored before went unheard).
      while (!(yield* wakeups.heard)) yield* Effect.sleep("20 millis")
      yield* woken("200 millis")
      // Nothing else here announces anything: a wake-up now would come from something else.
      expect(yield* woken("100 millis")).toBe(false)

      const delivery = yield* oneDueInClaimWindow
      expect(yield* woken("5 seconds")).toBe(true)
      const [claimed] = yield* claimWith({ now: later(CLAIM_WINDOW.from, 1_000), leaseUntil: later(CLAIM_WINDOW.from, 31_000), limit: 10 })
      expect(claimed.id).toBe(delivery.id)
      const failed = { ...claimed, status: "failed" as const, attempts: 1, next_attempt_at: later(CLAIM_WINDOW.from, 6_000), updated_at: later(CLAIM_WINDOW.from, 1_000) }
      expect(yield* recordAttempt(failed, { delivery_id: delivery.id, attempted_at: later(CLAIM_WINDOW.from, 1_000), status_code: 500, duration_ms: 3, error: "HTTP 500" })).toBe(true)
      expect(yield* woken("300 millis")).toBe(false)

      // Retried by hand: due now, no lease (as Redeliver writes it).
      const stored = Option.getOrThrow(yield* deliveries.findAny(delivery.id))
      expect(yield* deliveries.update(decided({ ...stored, status: "pending", next_attempt_at: later(CLAIM_WINDOW.from, 2_000), updated_at: later(CLAIM_WINDOW.from, 2_000) }))).toBe(true)
      expect(yield* woken("5 seconds")).toBe(true)

      // Paused (its endpoint disabled): nothing to announce; resumed: due again.
      yield* deliveries.pause({ endpoint_id: delivery.endpoint_id, paused: true, statuses: ["pending", "failed"] })
      expect(yield* woken("300 millis")).toBe(false)
      yield* deliveries.pause({ endpoint_id: delivery.endpoint_id, paused: false, statuses: Webhook.DELIVERY_STATUSES })
      expect(yield* woken("5 seconds")).toBe(true)
    })))

  it.effect("webhook deliveries: claimDue takes at most the limit and skips excluded endpoints", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      const ids = yield* Ids
      yield* clearClaimWindow
      const event = yield* storedEvent(yield* storedAccount)
      const slow = yield* ids.make("webhookEndpoint")
      const fast = yield* ids.make("webhookEndpoint")
      const third = yield* ids.make("webhookEndpoint")
      const due = (endpointId: string, ms: number) =>
        newDelivery(event, endpointId, { next_attempt_at: later(CLAIM_WINDOW.from, ms) })
      const slowRows = [yield* due(slow, 1), yield* due(slow, 2), yield* due(slow, 3)]
      const fastRows = [yield* due(fast, 4), yield* due(fast, 5)]
      const thirdRow = yield* due(third, 0)
      for (const delivery of [...fastRows, ...slowRows, thirdRow]) yield* deliveries.insert(delivery)
      const claim = (limit: number, excludeEndpoints: ReadonlyArray<string>) =>
        Effect.map(
          claimWith({
            now: later(CLAIM_WINDOW.from, 60_000),
            leaseUntil: later(CLAIM_WINDOW.from, 90_000),
            limit,
            excludeEndpoints
          }),
          idsOf
        )

      expect(yield* claim(2, [slow, third])).toEqual(idsOf(fastRows))
      expect(yield* claim(2, [third])).toEqual(idsOf(slowRows.slice(0, 2)))
      expect(yield* claim(5, [])).toEqual(idsOf([thirdRow, slowRows[2]]))
      expect(yield* claim(5, [])).toEqual([])
    }))

  it.effect("webhook deliveries: a claimed delivery is not claimed again before its lease ends, and is once it has", () =>
    Effect.gen(function*() {
      const delivery = yield* oneDueInClaimWindow
      const at = (ms: number) => later(CLAIM_WINDOW.from, ms)
      const claim = (now: number, lease: number) =>
        Effect.map(
          claimWith({ now: at(now), leaseUntil: at(lease), limit: 10 }),
          (claimed) => claimed.map((d) => [d.id, d.next_attempt_at])
        )

      expect(yield* claim(1_000, 31_000)).toEqual([[delivery.id, at(31_000)]])
      expect(yield* claim(2_000, 32_000)).toEqual([])
      expect(yield* claim(30_999, 60_999)).toEqual([])
      // The worker holding it died: once the lease ends the delivery is due again, for another lease.
      expect(yield* claim(31_000, 61_000)).toEqual([[delivery.id, at(61_000)]])
      expect(yield* claim(60_000, 90_000)).toEqual([])
    }))

  it.effect("webhook deliveries: writes are fenced by the lease; one whose lease ran out and was claimed again writes nothing", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      const delivery = yield* oneDueInClaimWindow
      const at = (ms: number) => later(CLAIM_WINDOW.from, ms)
      const [first] = yield* claimWith({ now: at(1_000), leaseUntil: at(31_000), limit: 10, lease: "lease-1" })
      // Its worker hangs past the lease; another claims it.
      const [second] = yield* claimWith({ now: at(31_000), leaseUntil: at(61_000), limit: 10, lease: "lease-2" })
      expect([first.lease_token, second.lease_token]).toEqual(["lease-1", "lease-2"])
      const failed = (held: Webhook.WebhookDelivery, ms: number) =>
        decided<Webhook.WebhookDelivery>({
          ...held,
          status: "failed",
          attempts: 1,
          next_attempt_at: at(ms + 5_000),
          last_attempt_at: at(ms),
          updated_at: at(ms)
        })
      const attempt = (ms: number): Webhook.DeliveryAttempt => ({
        delivery_id: delivery.id,
        attempted_at: at(ms),
        status_code: null,
        duration_ms: 15_000,
        error: "timed out after 15000 ms"
      })

      expect(yield* recordAttempt(failed(first, 32_000), attempt(32_000))).toBe(false)
      expect(yield* deliveries.update(failed(first, 32_000))).toBe(false)
      expect(yield* deliveries.findAny(delivery.id)).toEqual(Option.some(second))
      expect(yield* deliveries.attempts(delivery.id)).toEqual([])

      expect(yield* recordAttempt(failed(second, 33_000), attempt(33_000))).toBe(true)
      expect(yield* deliveries.findAny(delivery.id)).toEqual(Option.some({ ...failed(second, 33_000), lease_token: null }))
      expect(yield* deliveries.attempts(delivery.id)).toEqual([attempt(33_000)])
      // Recorded: the lease is over, and the holder's second write is fenced off too.
      expect(yield* recordAttempt(failed(second, 34_000), attempt(34_000))).toBe(false)
    }))

  it.effect("webhook deliveries: claimDue is fair across accounts, bounds each account and endpoint, and passes over disabled endpoints", () =>
    Effect.gen(function*() {
      const endpoints = yield* WebhookEndpointRepo
      yield* clearClaimWindow
      const { a1, a2, b1, busy, busyEvent, due, quietEvent } = yield* busyAndQuiet
      const off = yield* newEndpoint(busy, { status: "disabled" })
      yield* endpoints.insert(off, MAX_TEST_ENDPOINTS)
      const paused = yield* due(busyEvent, off.id, 0)
      const busyRows = [yield* due(busyEvent, a1, 1), yield* due(busyEvent, a1, 2), yield* due(busyEvent, a1, 3)]
      const secondEndpoint = [yield* due(busyEvent, a2, 4), yield* due(busyEvent, a2, 5)]
      const quietRow = yield* due(quietEvent, b1, 10)
      for (const d of [paused, ...busyRows, ...secondEndpoint, quietRow]) yield* (yield* WebhookDeliveryRepo).insert(d)
      const claim = (options: Partial<ClaimOptions>) =>
        Effect.map(
          claimWith({ now: later(CLAIM_WINDOW.from, 60_000), leaseUntil: later(CLAIM_WINDOW.from, 90_000), limit: 10, ...options }),
          idsOf
        )

      // Oldest first would be a1's three: round-robin gives the quiet account its turn in this claim.
      expect(yield* claim({ limit: 3, perAccount: 2, perEndpoint: 2 })).toEqual(idsOf([busyRows[0], busyRows[1], quietRow]))
      expect(yield* claim({ excludeAccounts: [busy] })).toEqual([])
      expect(yield* claim({ perAccount: 10, perEndpoint: 10 })).toEqual(idsOf([busyRows[2], ...secondEndpoint]))
      // Passed over while its endpoint is disabled (not claimed, not exhausted), even unpaused (fanned
      // out as the endpoint was being disabled); due again once enabled, as the domain enables it.
      expect(yield* claim({})).toEqual([])
      const enabled = Result.getOrThrow(Webhook.transitionEndpoint(off, "enable", later(T0))).next
      yield* endpoints.update(enabled)
      yield* (yield* WebhookDeliveryRepo).pause(Webhook.pauseOf(enabled))
      expect(yield* claim({})).toEqual([paused.id])
    }))

  it.effect("webhook deliveries: pause takes an endpoint's deliveries of the given statuses out of the claim, and back; other statuses and endpoints untouched", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      yield* clearClaimWindow
      const { a1, a2, busyEvent, due } = yield* busyAndQuiet
      const [pending, failed] = [yield* due(busyEvent, a1, 1), { ...(yield* due(busyEvent, a1, 2)), status: "failed" as const, attempts: 1 }]
      const exhausted = { ...(yield* due(busyEvent, a1, 3)), status: "exhausted" as const, attempts: 8, next_attempt_at: null }
      const other = yield* due(busyEvent, a2, 4)
      for (const d of [pending, failed, exhausted, other]) yield* deliveries.insert(d)
      const claim = Effect.map(claimWith({ now: later(CLAIM_WINDOW.from, 60_000), leaseUntil: later(CLAIM_WINDOW.from, 90_000), limit: 10 }), idsOf)
      // Handing every claimed one back keeps the next claim's answer about the flag alone.
      const handBack = (ids: ReadonlyArray<string>) =>
        Effect.forEach(ids, (id) =>
          Effect.flatMap(deliveries.findAny(id), (found) =>
            deliveries.update(decided({ ...Option.getOrThrow(found), next_attempt_at: later(CLAIM_WINDOW.from, 5) }))))

      yield* deliveries.pause({ endpoint_id: a1, paused: true, statuses: ["pending", "failed"] })
      expect(yield* claim).toEqual([other.id])
      // Retried while paused (it ended before the pause): not paused, so claimable.
      yield* deliveries.update(decided({ ...exhausted, status: "pending", next_attempt_at: later(CLAIM_WINDOW.from, 6) }))
      expect(yield* claim).toEqual([exhausted.id])
      yield* handBack([other.id, exhausted.id])
      yield* deliveries.pause({ endpoint_id: a1, paused: false, statuses: Webhook.DELIVERY_STATUSES })
      expect([...(yield* claim)].sort()).toEqual(idsOf([pending, failed, exhausted, other]).sort())
    }))

  it.effect("webhook deliveries: claimDue ranks an account by its endpoints' candidates only, so one endpoint's backlog does not hold back its others", () =>
    Effect.gen(function*() {
      const ids = yield* Ids
      yield* clearClaimWindow
      const account = yield* storedAccount
      const event = yield* storedEvent(account)
      const [backlogged, other] = [yield* ids.make("webhookEndpoint"), yield* ids.make("webhookEndpoint")]
      const due = (endpointId: string, ms: number) =>
        newDelivery(event, endpointId, { next_attempt_at: later(CLAIM_WINDOW.from, ms) })
      const backlog = [yield* due(backlogged, 1), yield* due(backlogged, 2), yield* due(backlogged, 3)]
      const waiting = yield* due(other, 4)
      for (const d of [...backlog, waiting]) yield* (yield* WebhookDeliveryRepo).insert(d)

      // The backlog's second and third are past their endpoint's bound: the other endpoint's row is
      // the account's second candidate, within its bound of 2.
      const claimed = yield* claimWith({
        now: later(CLAIM_WINDOW.from, 60_000),
        leaseUntil: later(CLAIM_WINDOW.from, 90_000),
        limit: 10,
        perAccount: 2,
        perEndpoint: 1
      })
      expect(idsOf(claimed)).toEqual(idsOf([backlog[0], waiting]))
    }))

  it.effect("webhook deliveries: claimDue counts the caller's attempts in flight against each endpoint's and account's bound", () =>
    Effect.gen(function*() {
      yield* clearClaimWindow
      const { a1, a2, b1, busy, busyEvent, due, quiet, quietEvent } = yield* busyAndQuiet
      const first = [yield* due(busyEvent, a1, 1), yield* due(busyEvent, a1, 2), yield* due(busyEvent, a1, 3)]
      const second = [yield* due(busyEvent, a2, 4), yield* due(busyEvent, a2, 5)]
      const quietRows = [yield* due(quietEvent, b1, 6), yield* due(quietEvent, b1, 7)]
      for (const d of [...first, ...second, ...quietRows]) yield* (yield* WebhookDeliveryRepo).insert(d)
      const claim = (busyCounts: NonNullable<ClaimOptions["busy"]>) =>
        Effect.map(
          claimWith({
            now: later(CLAIM_WINDOW.from, 60_000),
            leaseUntil: later(CLAIM_WINDOW.from, 90_000),
            limit: 10,
            perAccount: 3,
            perEndpoint: 2,
            busy: busyCounts
          }),
          idsOf
        )

      // a1 has 1 of its 2 in flight, the busy account 2 of its 3: one more of that account (a1's
      // oldest, the round-robin's first); the quiet account has 1 of 3 busy, and b1 none of 2.
      expect(yield* claim({ endpoints: [[a1, 1]], accounts: [[busy, 2], [quiet, 1]] })).toEqual(
        idsOf([first[0], ...quietRows])
      )
      // The busy account at its bound: nothing of it, whatever its endpoints have left.
      expect(yield* claim({ endpoints: [], accounts: [[busy, 3]] })).toEqual([])
      // a1 at its bound: a2's are the account's candidates.
      expect(yield* claim({ endpoints: [[a1, 2]], accounts: [] })).toEqual(idsOf(second))
    }))

  it.effect("webhook deliveries: recordAttempts writes a batch in one go, each attempt fenced on its own", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      yield* clearClaimWindow
      const event = yield* storedEvent(yield* storedAccount)
      const endpointId = yield* (yield* Ids).make("webhookEndpoint")
      const rows = [
        yield* newDelivery(event, endpointId, { next_attempt_at: CLAIM_WINDOW.from }),
        yield* newDelivery(event, endpointId, { next_attempt_at: CLAIM_WINDOW.from }),
        yield* newDelivery(event, endpointId, { next_attempt_at: CLAIM_WINDOW.from })
      ]
      for (const d of rows) yield* deliveries.insert(d)
      const at = (ms: number) => later(CLAIM_WINDOW.from, ms)
      const claimed = yield* claimWith({ now: at(1_000), leaseUntil: at(31_000), limit: 10, lease: "lease-1" })
      expect(claimed.length).toBe(3)
      const held = (id: string) => claimed.find((d) => d.id === id)!
      const done = (d: Webhook.WebhookDelivery) =>
        decided<Webhook.WebhookDelivery>({ ...d, status: "succeeded", attempts: 1, next_attempt_at: null, last_attempt_at: at(2_000), updated_at: at(2_000) })
      const attempt = (id: string, status_code: number): Webhook.DeliveryAttempt => ({
        delivery_id: id,
        attempted_at: at(2_000),
        status_code,
        duration_ms: 4,
        error: null
      })
      // The middle one carries a lease it does not hold (another claim took it since).
      const batch = [
        { delivery: done(held(rows[0].id)), attempt: attempt(rows[0].id, 200) },
        { delivery: { ...done(held(rows[1].id)), lease_token: "lease-lost" }, attempt: attempt(rows[1].id, 201) },
        { delivery: done(held(rows[2].id)), attempt: attempt(rows[2].id, 204) }
      ]
      expect(yield* deliveries.recordAttempts(batch)).toEqual([true, false, true])
      expect(yield* deliveries.attempts(rows[0].id)).toEqual([attempt(rows[0].id, 200)])
      expect(yield* deliveries.attempts(rows[1].id)).toEqual([])
      expect(yield* deliveries.attempts(rows[2].id)).toEqual([attempt(rows[2].id, 204)])
      expect(yield* deliveries.findAny(rows[1].id)).toEqual(Option.some(held(rows[1].id)))
      expect(yield* deliveries.findAny(rows[2].id)).toEqual(Option.some({ ...done(held(rows[2].id)), lease_token: null }))
      expect(yield* deliveries.recordAttempts([])).toEqual([])
    }))

  it.effect("webhook endpoints: insert refuses past the account's maximum, counting that account only", () =>
    Effect.gen(function*() {
      const endpoints = yield* WebhookEndpointRepo
      const owner = yield* storedAccount
      const other = yield* storedAccount
      const [first, second, third] = [yield* newEndpoint(owner), yield* newEndpoint(owner), yield* newEndpoint(owner)]
      expect(yield* endpoints.insert(first, 2)).toBe(true)
      expect(yield* endpoints.insert(yield* newEndpoint(other), 2)).toBe(true)
      expect(yield* endpoints.insert(second, 2)).toBe(true)
      expect(yield* endpoints.insert(third, 2)).toBe(false)
      expect(idsOf(yield* endpoints.list(owner)).sort()).toEqual(idsOf([first, second]).sort())
    }))

  it.effect("webhook deliveries: recordAttempt stores the attempt with the delivery's new state; attempts oldest first", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      const uow = yield* UnitOfWork
      const accountId = yield* storedAccount
      const event = yield* storedEvent(accountId)
      const delivery = yield* newDelivery(event, yield* (yield* Ids).make("webhookEndpoint"))
      const sibling = yield* newDelivery(event, delivery.endpoint_id)
      yield* deliveries.insert(delivery)
      yield* deliveries.insert(sibling)
      const attempt = (ms: number, outcome: Partial<Webhook.DeliveryAttempt>): Webhook.DeliveryAttempt => ({
        delivery_id: delivery.id,
        attempted_at: later(T0, ms),
        status_code: null,
        duration_ms: 15_000,
        error: "timed out after 15000 ms",
        ...outcome
      })
      const state = (attempts: number, status: Webhook.DeliveryStatus, ms: number): Webhook.WebhookDelivery => ({
        ...delivery,
        status,
        attempts,
        next_attempt_at: status === "failed" ? later(T0, ms + 5_000) : null,
        last_attempt_at: later(T0, ms),
        updated_at: later(T0, ms)
      })

      const timedOut = attempt(0, {})
      yield* recordAttempt(state(1, "failed", 0), timedOut)
      expect(yield* deliveries.findAny(delivery.id)).toEqual(Option.some(state(1, "failed", 0)))
      expect(yield* deliveries.attempts(delivery.id)).toEqual([timedOut])

      // Recorded out of time order (a clock step back), and two at the same instant: time first, then the order recorded.
      const refused = attempt(10_000, { duration_ms: 3, error: "connect ECONNREFUSED 127.0.0.1:9" })
      const answered = attempt(10_000, { status_code: 500, duration_ms: 41, error: "HTTP 500" })
      const early = attempt(-1, { status_code: 302, duration_ms: 0, error: "HTTP 302" })
      const succeeded = attempt(20_000, { status_code: 204, duration_ms: 7, error: null })
      yield* recordAttempt(state(2, "failed", 10_000), refused)
      yield* recordAttempt(state(3, "failed", 10_000), answered)
      yield* recordAttempt(state(4, "failed", -1), early)
      yield* recordAttempt(state(5, "succeeded", 20_000), succeeded)
      expect(yield* deliveries.attempts(delivery.id)).toEqual([early, timedOut, refused, answered, succeeded])
      expect(yield* deliveries.findAny(delivery.id)).toEqual(Option.some(state(5, "succeeded", 20_000)))
      expect(yield* deliveries.attempts(sibling.id)).toEqual([])
      expect(yield* deliveries.findAny(sibling.id)).toEqual(Option.some(sibling))

      // Inside a failed unit of work neither the attempt nor the state lands.
      yield* Effect.flip(uow.transaction(Effect.andThen(
        recordAttempt({ ...state(1, "failed", 30_000), id: sibling.id }, { ...timedOut, delivery_id: sibling.id }),
        Effect.fail(new Boom())
      )))
      expect(yield* deliveries.attempts(sibling.id)).toEqual([])
      expect(yield* deliveries.findAny(sibling.id)).toEqual(Option.some(sibling))
    }))

  it.effect("webhook deliveries: recording an attempt on an unknown delivery, or with another delivery's attempt, is a defect; an update of an unknown one writes nothing", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      const event = yield* storedEvent(yield* storedAccount)
      const delivery = yield* newDelivery(event, yield* (yield* Ids).make("webhookEndpoint"))
      yield* deliveries.insert(delivery)
      const attempt: Webhook.DeliveryAttempt = {
        delivery_id: delivery.id,
        attempted_at: T0,
        status_code: 200,
        duration_ms: 5,
        error: null
      }
      const unknown = { ...delivery, id: "wd_doesnotexist000000" }
      const defects = [
        yield* Effect.exit(recordAttempt(unknown, { ...attempt, delivery_id: unknown.id })),
        yield* Effect.exit(recordAttempt({ ...delivery, status: "succeeded" }, { ...attempt, delivery_id: unknown.id }))
      ]
      for (const exit of defects) expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
      // An update finds nothing to write: a delivery pruned since it was read (retention) is not a defect.
      expect(yield* deliveries.update(decided(unknown))).toBe(false)
      expect(yield* deliveries.findAny(delivery.id)).toEqual(Option.some(delivery))
      expect(yield* deliveries.attempts(delivery.id)).toEqual([])
      expect(yield* deliveries.attempts(unknown.id)).toEqual([])
    }))

  it.effect("webhook deliveries: update writes the delivery's progress (a manual retry makes it due)", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      const event = yield* storedEvent(yield* storedAccount)
      const exhausted = yield* newDelivery(event, yield* (yield* Ids).make("webhookEndpoint"), {
        status: "exhausted",
        attempts: 8,
        next_attempt_at: null,
        last_attempt_at: later(T0, 99_000)
      })
      yield* deliveries.insert(exhausted)
      const retried: Webhook.WebhookDelivery = {
        ...exhausted,
        status: "failed",
        next_attempt_at: later(T0, 100_000),
        updated_at: later(T0, 100_000)
      }
      yield* deliveries.update(decided(retried))
      expect(yield* deliveries.findAny(exhausted.id)).toEqual(Option.some(retried))
      expect(yield* deliveries.attempts(exhausted.id)).toEqual([])
    }))

  it.effect("checkout sessions: inserts and finds by id, from any account (operator), by order and by reference", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const accountId = yield* storedAccount
      const full = yield* newSession(accountId)
      const bare = yield* newSession(accountId, {
        status: "pending_action",
        amount: Number.MAX_SAFE_INTEGER,
        country: null,
        capture_method: "automatic",
        payment_methods: null,
        straight_through: false,
        attempts: 0,
        transaction_id: null,
        next_action: null,
        customer: null,
        locale: null,
        line_items: null,
        collect_address: false,
        collect_phone: false,
        processing_profile: null
      })
      const empty = yield* newSession(accountId, { payment_methods: [], line_items: [], customer: {} })
      for (const session of [full, bare, empty]) yield* sessions.insert(session)

      for (const session of [full, bare, empty]) {
        expect(yield* sessions.find(accountId, session.id)).toEqual(Option.some(session))
        expect(yield* sessions.findAny(session.id)).toEqual(Option.some(session))
        expect(yield* sessions.findByOrder(session.order_id)).toEqual(Option.some(session))
        expect(yield* sessions.findNewestByReference(accountId, session.merchant_reference)).toEqual(Option.some(session))
      }
      expect(yield* sessions.find(accountId, "cs_doesnotexist000000")).toEqual(Option.none())
      expect(yield* sessions.findAny("cs_doesnotexist000000")).toEqual(Option.none())
      expect(yield* sessions.findByOrder("ord_doesnotexist000000")).toEqual(Option.none())
      expect(yield* sessions.findNewestByReference(accountId, "ref-unknown")).toEqual(Option.none())
    }))

  it.effect("checkout sessions: a second session for the same order is a defect, and is not stored", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const accountId = yield* storedAccount
      const first = yield* newSession(accountId)
      yield* sessions.insert(first)
      const sameOrder = yield* newSession(accountId, { order_id: first.order_id })
      const clash = yield* Effect.exit(sessions.insert(sameOrder))
      expect(Exit.isFailure(clash) && Cause.hasDies(clash.cause)).toBe(true)
      expect(yield* sessions.findAny(sameOrder.id)).toEqual(Option.none())
      expect(yield* sessions.findByOrder(first.order_id)).toEqual(Option.some(first))
      // Nor did it take the reference: its own is free for a session of its own.
      yield* sessions.insert(yield* newSession(accountId, { merchant_reference: sameOrder.merchant_reference }))
    }))

  it.effect("checkout sessions: every status the domain defines can be stored", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const accountId = yield* storedAccount
      for (const status of CheckoutSession.SESSION_STATUSES) {
        const session = yield* newSession(accountId, { status })
        yield* sessions.insert(session)
        expect(yield* sessions.find(accountId, session.id)).toEqual(Option.some(session))
      }
    }))

  it.effect("checkout sessions: reads by account never return another account's session; another account may reuse the reference", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const owner = yield* storedAccount
      const other = yield* storedAccount
      const session = yield* newSession(owner)
      yield* sessions.insert(session)

      expect(yield* sessions.find(other, session.id)).toEqual(Option.none())
      expect(yield* sessions.findNewestByReference(other, session.merchant_reference)).toEqual(Option.none())
      expect((yield* sessions.search(other, { limit: 100 })).data).toEqual([])
      expect(idsOf((yield* sessions.search(owner, { limit: 100 })).data)).toEqual([session.id])

      const elsewhere = yield* newSession(other, { merchant_reference: session.merchant_reference })
      yield* sessions.insert(elsewhere)
      expect(yield* sessions.findNewestByReference(other, session.merchant_reference)).toEqual(Option.some(elsewhere))
      expect(yield* sessions.findNewestByReference(owner, session.merchant_reference)).toEqual(Option.some(session))
    }))

  it.effect("checkout sessions: a second session with the reference is refused while the first is open or pending_action", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const accountId = yield* storedAccount
      const first = yield* newSession(accountId, { merchant_reference: "order 42/ü" })
      yield* sessions.insert(first)

      const again = yield* newSession(accountId, { merchant_reference: first.merchant_reference, created_at: later(T0) })
      const error = yield* Effect.flip(sessions.insert(again))
      expect(error).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
      expect(error.code).toBe("duplicate_merchant_reference_id")
      expect(error.message).toBe(
        "a session with this merchant_reference is still open, pending or completed; " +
          "fetch it with GET /v1/checkout/sessions/by-reference/order%2042%2F%C3%BC"
      )
      expect(yield* sessions.findAny(again.id)).toEqual(Option.none())
      expect(yield* sessions.findByOrder(again.order_id)).toEqual(Option.none())

      const pending: CheckoutSession.CheckoutSession = { ...first, status: "pending_action", version: 2 }
      yield* sessions.update(decided(pending))
      expect(yield* Effect.flip(sessions.insert(again))).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
      // Back to open after a declined attempt: still the reference's holder.
      yield* sessions.update(decided({ ...pending, status: "open", version: 3 }))
      expect(yield* Effect.flip(sessions.insert(again))).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
      expect(yield* sessions.findNewestByReference(accountId, first.merchant_reference)).toEqual(
        Option.some({ ...pending, status: "open", version: 3 })
      )
    }))

  it.effect("checkout sessions: once the newest ended expired, failed or canceled the reference is free again; by-reference returns the newest", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const accountId = yield* storedAccount
      const reference = "reused-ref"
      let current = yield* newSession(accountId, { merchant_reference: reference })
      yield* sessions.insert(current)
      let step = 0
      for (const ending of ["expired", "failed", "canceled"] as const) {
        step++
        const ended: CheckoutSession.CheckoutSession = { ...current, status: ending, version: current.version + 1 }
        yield* sessions.update(decided(ended))
        expect(yield* sessions.findNewestByReference(accountId, reference)).toEqual(Option.some(ended))

        const next = yield* newSession(accountId, { merchant_reference: reference, created_at: later(T0, step * 1000) })
        yield* sessions.insert(next)
        expect(yield* sessions.findNewestByReference(accountId, reference)).toEqual(Option.some(next))
        // The new one holds the reference in turn.
        const blocked = yield* newSession(accountId, { merchant_reference: reference, created_at: later(T0, step * 1000 + 1) })
        expect(yield* Effect.flip(sessions.insert(blocked))).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
        current = next
      }
      expect(idsOf((yield* sessions.search(accountId, { limit: 10, merchant_reference: reference })).data)).toHaveLength(4)
    }))

  it.effect("checkout sessions: a completed session keeps its reference for good", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const accountId = yield* storedAccount
      const first = yield* newSession(accountId)
      yield* sessions.insert(first)
      const completed: CheckoutSession.CheckoutSession = { ...first, status: "completed", next_action: null, version: 2 }
      yield* sessions.update(decided(completed))

      const again = yield* newSession(accountId, { merchant_reference: first.merchant_reference, created_at: later(T0) })
      expect(yield* Effect.flip(sessions.insert(again))).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
      expect(yield* sessions.findAny(again.id)).toEqual(Option.none())
      expect(yield* sessions.findNewestByReference(accountId, first.merchant_reference)).toEqual(Option.some(completed))
    }))

  it.effect("checkout sessions: a refused duplicate leaves the unit of work usable; a rolled-back insert frees the reference", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const orders = yield* OrderRepo
      const uow = yield* UnitOfWork
      const accountId = yield* storedAccount
      const first = yield* newSession(accountId)
      yield* sessions.insert(first)
      const again = yield* newSession(accountId, { merchant_reference: first.merchant_reference })
      const order = yield* newOrder(accountId, { subtype: "checkout", merchant_reference: first.merchant_reference })

      const refused = yield* uow.transaction(Effect.gen(function*() {
        const error = yield* Effect.flip(sessions.insert(again))
        // The use case answers the duplicate and records something in the same unit of work.
        yield* orders.insert(order)
        return error
      }))
      expect(refused).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
      expect(yield* orders.find(accountId, order.id)).toEqual(Option.some(order))

      const fresh = yield* newSession(accountId)
      const failed = yield* Effect.flip(uow.transaction(Effect.gen(function*() {
        yield* sessions.insert(fresh)
        expect(yield* sessions.findAny(fresh.id)).toEqual(Option.some(fresh))
        return yield* Effect.fail(new Boom())
      })))
      expect(failed).toBeInstanceOf(Boom)
      expect(yield* sessions.findAny(fresh.id)).toEqual(Option.none())
      expect(yield* sessions.findByOrder(fresh.order_id)).toEqual(Option.none())
      expect(yield* sessions.findNewestByReference(accountId, fresh.merchant_reference)).toEqual(Option.none())
      yield* sessions.insert(fresh)
      expect(yield* sessions.findAny(fresh.id)).toEqual(Option.some(fresh))
    }))

  it.effect("checkout sessions: updates on the version before; refuses a stale version, an unknown id and another account", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const accountId = yield* storedAccount
      const other = yield* storedAccount
      const session = yield* newSession(accountId)
      yield* sessions.insert(session)

      const v2: CheckoutSession.CheckoutSession = {
        ...session,
        status: "pending_action",
        attempts: 2,
        next_action: { type: "redirect", redirect_url: "https://acs.example/challenge" },
        customer: null,
        line_items: null,
        updated_at: later(T0),
        version: 2
      }
      yield* sessions.update(decided(v2))
      expect(yield* sessions.find(accountId, session.id)).toEqual(Option.some(v2))

      const stale = yield* Effect.flip(sessions.update(decided({ ...session, status: "canceled", version: 2 })))
      expect(stale).toBeInstanceOf(Errors.Conflict)
      expect(stale.message).toContain(session.id)
      expect((yield* Effect.flip(sessions.update(decided({ ...v2, id: "cs_doesnotexist000000" as CheckoutSessionId, version: 3 }))))._tag).toBe("Conflict")
      expect((yield* Effect.flip(sessions.update(decided({ ...v2, account_id: other, version: 3 }))))._tag).toBe("Conflict")
      expect(yield* sessions.findAny(session.id)).toEqual(Option.some(v2))
      // A refused update did not free the reference either.
      const again = yield* newSession(accountId, { merchant_reference: session.merchant_reference })
      expect(yield* Effect.flip(sessions.insert(again))).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
    }))

  it.effect("checkout sessions: lock reads the session inside a unit of work; outside one it is a defect", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const uow = yield* UnitOfWork
      const session = yield* newSession(yield* storedAccount)
      yield* sessions.insert(session)

      expect(yield* uow.transaction(sessions.lock(session.id))).toEqual(Option.some(session))
      expect(yield* uow.transaction(sessions.lock("cs_doesnotexist000000"))).toEqual(Option.none())
      const outside = yield* Effect.exit(sessions.lock(session.id))
      expect(Exit.isFailure(outside) && Cause.hasDies(outside.cause)).toBe(true)
    }))

  it.effect("checkout sessions: a locked session waits for the holder's unit of work, then reads its update", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const uow = yield* UnitOfWork
      const session = yield* newSession(yield* storedAccount, { attempts: 0 })
      yield* sessions.insert(session)

      const locked = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(uow.transaction(Effect.gen(function*() {
        const current = Option.getOrThrow(yield* sessions.lock(session.id))
        yield* Deferred.succeed(locked, undefined)
        yield* Effect.sleep("300 millis")
        yield* sessions.update(decided({ ...current, status: "pending_action", attempts: 1, version: current.version + 1 }))
      })))
      yield* Deferred.await(locked)
      const asked = yield* Clock.currentTimeMillis
      const seen = yield* uow.transaction(Effect.gen(function*() {
        const current = Option.getOrThrow(yield* sessions.lock(session.id))
        // Decided on what the holder wrote, so this write does not conflict.
        yield* sessions.update(decided({ ...current, status: "canceled", version: current.version + 1 }))
        return current
      }))
      const waited = (yield* Clock.currentTimeMillis) - asked
      yield* Fiber.join(holder)

      expect([seen.status, seen.attempts, seen.version]).toEqual(["pending_action", 1, 2])
      expect(waited).toBeGreaterThanOrEqual(200)
      expect(Option.map(yield* sessions.findAny(session.id), (s) => [s.status, s.attempts, s.version]))
        .toEqual(Option.some(["canceled", 1, 3]))
    }))

  it.effect("checkout sessions: search filters by status (any of), created_from (inclusive), created_to (exclusive), profile, reference", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const accountId = yield* storedAccount
      const other = yield* storedAccount
      const at = (ms: number) => later(T0, ms)
      const a = yield* newSession(accountId, { status: "open", created_at: at(0), processing_profile: null })
      const b = yield* newSession(accountId, { status: "completed", created_at: at(1) })
      const c = yield* newSession(accountId, { status: "expired", created_at: at(2), processing_profile: "us" })
      const d = yield* newSession(accountId, { status: "completed", created_at: at(3_000) })
      const foreign = yield* newSession(other, { merchant_reference: c.merchant_reference, created_at: at(2) })
      for (const session of [c, a, foreign, d, b]) yield* sessions.insert(session)
      const search = (query: Omit<Payment.SearchQuery, "limit">) =>
        Effect.map(sessions.search(accountId, { limit: 10, ...query }), (page) => idsOf(page.data))

      expect(yield* search({})).toEqual(idsOf([d, c, b, a]))
      expect(yield* search({ status: [] })).toEqual(idsOf([d, c, b, a]))
      expect(yield* search({ status: ["completed"] })).toEqual(idsOf([d, b]))
      expect(yield* search({ status: ["expired", "open"] })).toEqual(idsOf([c, a]))
      expect(yield* search({ status: ["canceled"] })).toEqual([])
      expect(yield* search({ created_from: b.created_at })).toEqual(idsOf([d, c, b]))
      expect(yield* search({ created_to: c.created_at })).toEqual(idsOf([b, a]))
      expect(yield* search({ created_from: b.created_at, created_to: d.created_at })).toEqual(idsOf([c, b]))
      // Any ISO offset names the same instant.
      expect(yield* search({ created_from: "2025-03-01T11:00:00.124+01:00" })).toEqual(idsOf([d, c, b]))
      expect(yield* search({ processing_profile: "eu" })).toEqual(idsOf([d, b]))
      expect(yield* search({ merchant_reference: c.merchant_reference })).toEqual([c.id])
      expect(yield* search({ status: ["completed"], processing_profile: "eu", created_to: d.created_at })).toEqual([b.id])
      expect(yield* sessions.search(accountId, { limit: 4 })).toEqual({ data: [d, c, b, a], has_more: false })
      expect(yield* sessions.search(accountId, { limit: 3 })).toEqual({ data: [d, c, b], has_more: true })
      expect(yield* sessions.search(other, { limit: 10 })).toEqual({ data: [foreign], has_more: false })
    }))

  it.effect("checkout sessions: search pages newest first with a cursor, ties on created_at broken by id", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const accountId = yield* storedAccount
      const tied = yield* Effect.forEach(Array.from({ length: 6 }), () => newSession(accountId))
      const newest = yield* newSession(accountId, { created_at: later(T0, 1) })
      const oldest = yield* newSession(accountId, { created_at: later(T0, -1) })
      const all = [...tied, newest, oldest]
      for (const session of all) yield* sessions.insert(session)
      const expected = newestFirst(all)
      expect(expected[0]).toBe(newest)
      expect(expected.at(-1)).toBe(oldest)

      const pages = yield* allPages((query) => sessions.search(accountId, query), { limit: 3 })
      expect(pages.map((page) => [page.data.length, page.has_more])).toEqual([[3, true], [3, true], [2, false]])
      expect(pages.flatMap((page) => idsOf(page.data))).toEqual(idsOf(expected))

      const page = yield* sessions.search(accountId, { limit: 2, cursor: { created_at: T0, id: expected[3].id } })
      expect(page).toEqual({ data: expected.slice(4, 6), has_more: true })
    }))

  it.effect("checkout sessions: listOverdue gives open and pending_action sessions past expires_at, oldest first, across accounts", () =>
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const first = yield* storedAccount
      const second = yield* storedAccount
      // A window of time no other test's session expires in (theirs expire in 2025).
      const now = "1985-06-01T12:00:00.000Z"
      const ago = (ms: number) => new Date(Date.parse(now) - ms).toISOString()
      const oldest = yield* newSession(second, { status: "pending_action", expires_at: ago(60_000) })
      const middle = yield* newSession(first, { expires_at: ago(1) })
      // Due exactly now: included (expires_at <= now).
      const dueNow = yield* newSession(second, { expires_at: now })
      const excluded = [
        yield* newSession(first, { expires_at: "1985-06-01T12:00:00.001Z" }),
        ...(yield* Effect.forEach(
          ["completed", "failed", "expired", "canceled"] as const,
          (status) => newSession(first, { status, expires_at: ago(120_000) })
        ))
      ]
      for (const session of [middle, ...excluded, dueNow, oldest]) yield* sessions.insert(session)
      const mine = new Set(idsOf([oldest, middle, dueNow, ...excluded]))

      const overdue = yield* sessions.listOverdue(now, 10_000)
      for (const s of overdue) {
        expect(["open", "pending_action"]).toContain(s.status)
        expect(Date.parse(s.expires_at)).toBeLessThanOrEqual(Date.parse(now))
      }
      const expiring = overdue.map((s) => Date.parse(s.expires_at))
      expect(expiring).toEqual([...expiring].sort((x, y) => x - y))
      expect(overdue.filter((s) => mine.has(s.id))).toEqual([oldest, middle, dueNow])
      expect(yield* sessions.listOverdue(now, 1)).toEqual(overdue.slice(0, 1))
      expect((yield* sessions.listOverdue(ago(30_000), 10_000)).filter((s) => mine.has(s.id))).toEqual([oldest])

      yield* sessions.update(decided({ ...oldest, status: "expired", version: 2 }))
      expect(idsOf((yield* sessions.listOverdue(now, 10_000)).filter((s) => mine.has(s.id)))).toEqual(
        idsOf([middle, dueNow])
      )
    }))

  // --- refunds and payouts (OutflowPorts.ts): one store shape, both records ----------------------

  /** A stored order with its settled payment, and a pending refund and payout of it (not stored). */
  const outflowWorld = Effect.gen(function*() {
    const ids = yield* Ids
    const accountId = yield* storedAccount
    const order = yield* newOrder(accountId, { status: "succeeded", capture_method: "automatic" })
    yield* (yield* OrderRepo).insert(order)
    const original = yield* newTransaction(order, { kind: "payment" })
    yield* (yield* TransactionRepo).insert(original)
    const recordFor = (kind: "refund" | "payout") =>
      Effect.gen(function*() {
        const txn = yield* newTransaction(order, { kind, status: "processing", amount: 2_999_999_999, parent_transaction_id: original.id })
        yield* (yield* TransactionRepo).insert(txn)
        return {
          id: yield* ids.make(kind),
          account_id: accountId,
          livemode: false,
          order_id: order.id,
          transaction_id: txn.id,
          original_transaction_id: original.id,
          amount: 2_999_999_999,
          currency: order.currency,
          processing_profile: "eu",
          decline_code: null,
          status: "pending" as const,
          created_at: T0,
          updated_at: T0,
          version: 1
        }
      })
    /** `reference` undefined: a fresh random one. */
    const referenceOr = (reference: string | null | undefined) =>
      reference !== undefined ? Effect.succeed(reference) : Effect.map(ids.randomHex(6), (hex) => `ref-${hex}`)
    const refund = (reference?: string | null) =>
      Effect.gen(function*() {
        const base = yield* recordFor("refund")
        return { ...base, reason: "requested_by_customer ☕", refund_reference: yield* referenceOr(reference) } satisfies MoneyOut.Refund
      })
    const payout = (reference?: string | null) =>
      Effect.gen(function*() {
        const base = yield* recordFor("payout")
        return { ...base, payment_instrument: order.payment_instrument!, payout_reference: yield* referenceOr(reference) } satisfies MoneyOut.Payout
      })
    return { accountId, original, refund, payout }
  })

  const outflowStores = [
    ["refunds", Effect.service(RefundRepo), (w: Effect.Success<typeof outflowWorld>, ref?: string | null) => w.refund(ref)],
    ["payouts", Effect.service(PayoutRepo), (w: Effect.Success<typeof outflowWorld>, ref?: string | null) => w.payout(ref)]
  ] as const

  for (const [name, storeOf, make] of outflowStores) {
    const use = storeOf as Effect.Effect<OutflowStore<MoneyOut.Refund | MoneyOut.Payout>, never, RefundRepo | PayoutRepo>
    const fresh = make as (w: Effect.Success<typeof outflowWorld>, ref?: string | null) => Effect.Effect<MoneyOut.Refund | MoneyOut.Payout, never, StorageServices>

    it.effect(`${name}: a record reads back as written, by id, reference and transaction; scoped by account`, () =>
      Effect.gen(function*() {
        const store = yield* use
        const world = yield* outflowWorld
        const first = yield* fresh(world)
        const second = yield* fresh(world, null)
        yield* store.insert(first)
        yield* store.insert(second)
        expect(yield* store.find(world.accountId, first.id)).toEqual(Option.some(first))
        expect(yield* store.findAny(first.id)).toEqual(Option.some(first))
        expect(yield* store.find((yield* storedAccount), first.id)).toEqual(Option.none())
        const reference = "refund_reference" in first ? first.refund_reference! : first.payout_reference!
        expect(yield* store.findByReference(world.accountId, reference)).toEqual(Option.some(first))
        expect(yield* store.findByReference(yield* storedAccount, reference)).toEqual(Option.none())
        expect(yield* store.findByTransaction(second.transaction_id)).toEqual(Option.some(second))
      }))

    it.effect(`${name}: the reference is unique per account; the refusal leaves the unit of work usable`, () =>
      Effect.gen(function*() {
        const store = yield* use
        const uow = yield* UnitOfWork
        const world = yield* outflowWorld
        const first = yield* fresh(world, "taken")
        yield* store.insert(first)
        const again = yield* fresh(world, "taken")
        const kept = yield* fresh(world, null)
        const refused = yield* uow.transaction(Effect.gen(function*() {
          const error = yield* Effect.flip(store.insert(again))
          yield* store.insert(kept)
          return error
        }))
        expect(refused).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
        expect(yield* store.findAny(again.id)).toEqual(Option.none())
        expect(yield* store.findAny(kept.id)).toEqual(Option.some(kept))
        // Another account may hold the same reference; records without one never clash.
        const elsewhere = yield* outflowWorld
        yield* store.insert(yield* fresh(elsewhere, "taken"))
        yield* store.insert(yield* fresh(world, null))
      }))

    it.effect(`${name}: updates are version-checked`, () =>
      Effect.gen(function*() {
        const store = yield* use
        const world = yield* outflowWorld
        const record = yield* fresh(world)
        yield* store.insert(record)
        const next = { ...record, status: "failed" as const, decline_code: "card_declined", updated_at: later(T0), version: 2 }
        yield* store.update(decided(next))
        expect(yield* store.findAny(record.id)).toEqual(Option.some(next))
        expect(yield* Effect.flip(store.update(decided(next)))).toBeInstanceOf(Errors.Conflict)
      }))
  }

  it.effect("payouts: the day's total (pending and succeeded, of the currency and UTC day) is read under the account's payout lock: a second reader waits for the holder's unit of work", () =>
    Effect.gen(function*() {
      const payouts = yield* PayoutRepo
      const uow = yield* UnitOfWork
      const world = yield* outflowWorld
      const at = (record: MoneyOut.Payout, fields: Partial<MoneyOut.Payout>) => ({ ...record, ...fields }) satisfies MoneyOut.Payout
      const base = yield* world.payout(null)
      const [from, to] = ["2025-03-01T00:00:00.000Z", "2025-03-02T00:00:00.000Z"]
      yield* payouts.insert(base)
      yield* payouts.insert(at(yield* world.payout(null), { status: "succeeded", amount: 1 }))
      yield* payouts.insert(at(yield* world.payout(null), { status: "failed", amount: 10 }))
      yield* payouts.insert(at(yield* world.payout(null), { created_at: to, updated_at: to, amount: 100 }))
      yield* payouts.insert(at(yield* world.payout(null), { currency: "EUR", amount: 1_000 }))
      const total = (accountId: AccountId) => uow.transaction(payouts.lockedDayTotal(accountId, base.currency, from, to))
      expect(yield* total(world.accountId)).toBe(base.amount + 1)
      expect(yield* total(yield* storedAccount)).toBe(0)

      const counted = yield* Deferred.make<number>()
      const extra = at(yield* world.payout(null), { amount: 7 })
      const holder = yield* Effect.forkChild(uow.transaction(Effect.gen(function*() {
        yield* Deferred.succeed(counted, yield* payouts.lockedDayTotal(world.accountId, base.currency, from, to))
        yield* Effect.sleep("300 millis")
        yield* payouts.insert(extra)
      })))
      expect(yield* Deferred.await(counted)).toBe(base.amount + 1)
      // Without the lock this read would answer at once, without the holder's payout.
      expect(yield* total(world.accountId)).toBe(base.amount + 1 + 7)
      yield* Fiber.join(holder)
    }))
}

/**
 * CustomerRepo's contract (a separate block so that the storage test files opt in with one line):
 * a stored record reads back whole, and only within its own account.
 */
/**
 * An order stored past the refund bound before there was one (0010 bounded refunds by the amount
 * alone; docs/decisions.md, "Refunds within what arrived: orders past the bound"). `storePastBound`
 * stores such a row around the adapter's bound, as the data of an earlier version is. Both adapters
 * check the bound only on a write that moves its columns (migration 0036's trigger).
 */
export const pastBoundContract = <R>(
  it: Vitest.MethodsNonLive<OrderRepo | AccountRepo | Ids | KeyHasher | R>,
  storePastBound: (order: Payment.Order) => Effect.Effect<void, never, R>
) => {
  it.effect("orders: one stored past the refund bound takes every update that leaves refunded_amount, received_amount and amount alone, no further refund, and its correction (migration 0036)", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const account = yield* storedAccount
      // An accepted crypto underpayment (40.00 of 100.00) refunded 80.00 under 0010's bound.
      const legacy = yield* newOrder(account, {
        status: "processing",
        capture_method: "automatic",
        payment_method: "crypto",
        amount: 10_000,
        currency: "USD",
        received_amount: 4_000,
        refunded_amount: 8_000
      })
      yield* storePastBound(legacy)
      // Its settlement, say. Under a CHECK left NOT VALID this failed: PostgreSQL checks every row an UPDATE writes.
      const v2 = decided({ ...legacy, status: "succeeded" as const, retry_until: null, updated_at: later(legacy.updated_at), version: 2 })
      yield* orders.update(v2)
      expect(yield* orders.findAny(legacy.id)).toEqual(Option.some(v2))
      expect(yield* refusedAsDefect(orders.update(decided({ ...v2, refunded_amount: 9_000, version: 3 })))).toBe(true)
      expect(yield* refusedAsDefect(orders.update(decided({ ...v2, refunded_amount: 7_000, version: 3 })))).toBe(true)
      expect(yield* refusedAsDefect(orders.update(decided({ ...v2, received_amount: 5_000, version: 3 })))).toBe(true)
      expect(yield* orders.findAny(legacy.id)).toEqual(Option.some(v2))
      // The operator's correction: the order claims no more than arrived.
      const corrected = decided({ ...v2, refunded_amount: 4_000, version: 3 })
      yield* orders.update(corrected)
      expect(yield* orders.findAny(legacy.id)).toEqual(Option.some(corrected))
    }))
}

export const customersContract = (it: Vitest.MethodsNonLive<StorageServices | CustomerRepo>) => {
  const newCustomer = (accountId: AccountId, overrides: Partial<Customer.CustomerRecord> = {}) =>
    Effect.gen(function*() {
      const record: Customer.CustomerRecord = {
        id: yield* (yield* Ids).make("customer"),
        account_id: accountId,
        livemode: false,
        email: "ada@example.com",
        name: "Ada Lovelace ✓",
        phone: "+44 20 7946 0958",
        created_at: "2025-03-01T10:00:00.123Z",
        ...overrides
      }
      return record
    })

  it.effect("customers: a record reads back whole, nulls included, and only within its account", () =>
    Effect.gen(function*() {
      const customers = yield* CustomerRepo
      const mine = yield* storedAccount
      const theirs = yield* storedAccount
      const full = yield* newCustomer(mine, { livemode: true })
      const empty = yield* newCustomer(mine, { email: null, name: null, phone: null })
      yield* customers.insert(full)
      yield* customers.insert(empty)
      expect(yield* customers.find(mine, full.id)).toEqual(Option.some(full))
      expect(yield* customers.find(mine, empty.id)).toEqual(Option.some(empty))
      expect(yield* customers.find(theirs, full.id)).toEqual(Option.none())
      expect(yield* customers.find(mine, "cus_doesnotexist0000")).toEqual(Option.none())
    }))

  it.effect("customers: an insert inside a unit of work that fails is rolled back", () =>
    Effect.gen(function*() {
      const customers = yield* CustomerRepo
      const uow = yield* UnitOfWork
      const account = yield* storedAccount
      const record = yield* newCustomer(account)
      const exit = yield* Effect.exit(uow.transaction(Effect.andThen(customers.insert(record), Effect.fail("abort"))))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* customers.find(account, record.id)).toEqual(Option.none())
    }))
}

// --- transfers ------------------------------------------------------------------------------

export type TransferStorageServices = StorageServices | TransferRepo

/** A stored transfer order with its transaction, and a fully populated transfer record (not stored). */
const newTransfer = (overrides: Partial<MoneyOut.Transfer> = {}) =>
  Effect.gen(function*() {
    const accountId = yield* storedAccount
    const order = yield* newOrder(accountId, { subtype: "transfer", status: "requires_action", capture_method: "automatic", payment_method: "card", received_amount: null, card_storage_consent: null })
    yield* (yield* OrderRepo).insert(order)
    const txn = yield* newTransaction(order, { kind: "transfer", status: "initial", provider_transaction_id: null, three_ds: null, multicapture: null })
    yield* (yield* TransactionRepo).insert(txn)
    const transfer: MoneyOut.Transfer = {
      id: yield* (yield* Ids).make("transfer"),
      account_id: accountId,
      livemode: false,
      order_id: order.id,
      transaction_id: txn.id,
      amount: order.amount,
      currency: order.currency,
      processing_profile: "eu",
      decline_code: null,
      created_at: T0,
      updated_at: T0,
      version: 1,
      status: "requires_action",
      payment_method: "card",
      channel_id: "ch_sandbox0001",
      payment_instrument: { id: "pi_0123456789abcdef", type: "card", country_code: "US", holder_address: { line1: "1 Main St", country: "US" }, card_brand: "visa", last4_digits: "4242", bin: "42424242", card_funding: "credit", issuer_name: "bank ☕" },
      next_action: { type: "collect_card", client_secret: `${order.id}_secret_abc`, expires_at: "2025-03-01T10:15:00.000Z" },
      ...overrides
    }
    return { order, txn, transfer }
  })

/** TransferRepo's promises, on the same storage (storage.memory / storage.postgres call it beside `storageContract`). */
export const transfersContract = (it: Vitest.MethodsNonLive<TransferStorageServices>) => {
  it.effect("transfers: insert, find scoped by account, findAny, findByOrder; a big amount and the jsonb fields round-trip", () =>
    Effect.gen(function*() {
      const transfers = yield* TransferRepo
      const { order, transfer } = yield* newTransfer()
      const other = yield* storedAccount
      yield* transfers.insert(transfer)
      expect(yield* transfers.find(transfer.account_id, transfer.id)).toEqual(Option.some(transfer))
      expect(yield* transfers.find(other, transfer.id)).toEqual(Option.none())
      expect(yield* transfers.findAny(transfer.id)).toEqual(Option.some(transfer))
      expect(yield* transfers.findByOrder(order.id)).toEqual(Option.some(transfer))
      expect(yield* transfers.findByOrder("ord_doesnotexist000000")).toEqual(Option.none())
      expect(yield* transfers.findAny("tr_doesnotexist000000")).toEqual(Option.none())
    }))

  it.effect("transfers: every status the domain defines can be stored", () =>
    Effect.gen(function*() {
      const transfers = yield* TransferRepo
      for (const status of MoneyOut.TRANSFER_STATUSES) {
        const { transfer } = yield* newTransfer({ status, next_action: null, channel_id: null, processing_profile: null, decline_code: status === "failed" ? "card_declined" : null })
        yield* transfers.insert(transfer)
        expect(yield* transfers.findAny(transfer.id)).toEqual(Option.some(transfer))
      }
    }))

  it.effect("transfers: updates on the version before; refuses a stale version and another account", () =>
    Effect.gen(function*() {
      const transfers = yield* TransferRepo
      const { transfer } = yield* newTransfer()
      const other = yield* storedAccount
      yield* transfers.insert(transfer)
      const v2: MoneyOut.Transfer = { ...transfer, status: "failed", decline_code: "transfer_destination_not_registered", next_action: null, version: 2 }
      yield* transfers.update(decided(v2))
      expect(yield* transfers.findAny(transfer.id)).toEqual(Option.some(v2))
      expect(yield* Effect.flip(transfers.update(decided({ ...transfer, version: 2 })))).toBeInstanceOf(Errors.Conflict)
      expect((yield* Effect.flip(transfers.update(decided({ ...v2, account_id: other, version: 3 }))))._tag).toBe("Conflict")
      expect(yield* transfers.findAny(transfer.id)).toEqual(Option.some(v2))
    }))

  it.effect("transfers: one per order (a second for the same order is a defect, and is not stored)", () =>
    Effect.gen(function*() {
      const transfers = yield* TransferRepo
      const { transfer } = yield* newTransfer()
      yield* transfers.insert(transfer)
      const twin = { ...transfer, id: yield* (yield* Ids).make("transfer") }
      expect(Exit.isFailure(yield* Effect.exit(transfers.insert(twin)))).toBe(true)
      expect(yield* transfers.findAny(twin.id)).toEqual(Option.none())
    }))

  it.effect("transfers: a transfer written in a failed unit of work is gone", () =>
    Effect.gen(function*() {
      const transfers = yield* TransferRepo
      const { transfer } = yield* newTransfer()
      const uow = yield* UnitOfWork
      yield* Effect.exit(uow.transaction(Effect.andThen(transfers.insert(transfer), Effect.fail("boom"))))
      expect(yield* transfers.findAny(transfer.id)).toEqual(Option.none())
    }))

  it.effect("transfers: an order with a transfer's reference is refused like a direct payment's (contract.md, Idempotency)", () =>
    Effect.gen(function*() {
      const { order } = yield* newTransfer()
      const twin = yield* newOrder(order.account_id, { merchant_reference: order.merchant_reference })
      expect(yield* Effect.flip((yield* OrderRepo).insert(twin))).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
    }))
}

// --- client secrets -----------------------------------------------------------------------

/**
 * ClientSecretRepo's contract: a record reads back whole by its hash; the expire helper only ever
 * brings the expiry forward; the first use is the one kept.
 */
/** A fresh secret's record (random hash) of a stored account, for a card form of `kind`. */
const newClientSecret = (kind: "payment" | "transfer") =>
  Effect.gen(function*() {
    return {
      hash: yield* (yield* KeyHasher).hash(`ord_x_secret_${yield* (yield* Ids).randomHex(16)}`),
      account_id: yield* storedAccount,
      order_id: "ord_contract000000000000",
      kind,
      collect: "card" as const,
      created_at: "2025-03-01T10:00:00.123Z",
      expires_at: "2025-03-01T10:15:00.123Z",
      expired_by_helper: false,
      used_at: null,
      card_token: null,
      token_mints: 0
    }
  })

export const clientSecretsContract = (it: Vitest.MethodsNonLive<StorageServices | ClientSecretRepo>) => {
  it.effect("client secrets: read back whole by hash; expire brings the expiry forward only; the first use is kept", () =>
    Effect.gen(function*() {
      const secrets = yield* ClientSecretRepo
      const record = yield* newClientSecret("transfer")
      yield* secrets.insert(record)
      expect(yield* secrets.find(record.hash)).toEqual(Option.some(record))
      expect(yield* secrets.find("0".repeat(64))).toEqual(Option.none())
      yield* secrets.markUsed(record.hash, "2025-03-01T10:05:00.000Z")
      yield* secrets.markUsed(record.hash, "2025-03-01T10:06:00.000Z")
      // expired later than its own expiry: the earlier one stands, but the helper's mark is set
      yield* secrets.expire(record.hash, "2025-03-01T11:00:00.000Z")
      expect(yield* secrets.find(record.hash)).toEqual(Option.some({ ...record, used_at: "2025-03-01T10:05:00.000Z", expired_by_helper: true }))
      yield* secrets.expire(record.hash, "2025-03-01T10:07:00.000Z")
      expect(Option.map(yield* secrets.find(record.hash), (r) => r.expires_at)).toEqual(Option.some("2025-03-01T10:07:00.000Z"))
    }))

  it.effect("client secrets: card_tokens calls are counted up to the cap, even concurrently; the last recorded token is kept", () =>
    Effect.gen(function*() {
      const secrets = yield* ClientSecretRepo
      const record = yield* newClientSecret("payment")
      yield* secrets.insert(record)
      // Eight at once against a cap of five: exactly five pass, and the count stops at five.
      const claimed = yield* Effect.all(Array.from({ length: 8 }, () => secrets.claimMint(record.hash, 5)), { concurrency: "unbounded" })
      expect(claimed.filter((c) => c).length).toBe(5)
      expect(yield* secrets.claimMint(record.hash, 5)).toBe(false)
      expect(yield* secrets.claimMint("0".repeat(64), 5)).toBe(false)
      yield* secrets.recordToken(record.hash, "tok_first")
      yield* secrets.recordToken(record.hash, "tok_second")
      expect(yield* secrets.find(record.hash)).toEqual(Option.some({ ...record, token_mints: 5, card_token: "tok_second" }))
    }))

  it.effect("client secrets: a transfer's secret is found by its order; only a token a transfer's secret of the account recorded counts as minted for a transfer", () =>
    Effect.gen(function*() {
      const secrets = yield* ClientSecretRepo
      const ids = yield* Ids
      const orderId = `ord_contract${yield* ids.randomHex(8)}`
      const transfer = { ...yield* newClientSecret("transfer"), order_id: orderId }
      const payment = { ...yield* newClientSecret("payment"), order_id: `ord_contract${yield* ids.randomHex(8)}` }
      yield* secrets.insert(payment)
      expect(yield* secrets.findTransferSecret(payment.order_id)).toEqual(Option.none())
      expect(yield* secrets.findTransferSecret(orderId)).toEqual(Option.none())
      yield* secrets.insert(transfer)
      expect(yield* secrets.findTransferSecret(orderId)).toEqual(Option.some(transfer))
      const transferToken = `tok_${yield* ids.randomHex(12)}`
      const paymentToken = `tok_${yield* ids.randomHex(12)}`
      expect(yield* secrets.mintedForTransfer(transfer.account_id, transferToken)).toBe(false)
      yield* secrets.recordToken(transfer.hash, transferToken)
      yield* secrets.recordToken(payment.hash, paymentToken)
      expect(yield* secrets.mintedForTransfer(transfer.account_id, transferToken)).toBe(true)
      expect(yield* secrets.mintedForTransfer(payment.account_id, paymentToken)).toBe(false)
      // Another account's transfer token is not this account's.
      expect(yield* secrets.mintedForTransfer(yield* storedAccount, transferToken)).toBe(false)
      expect(Option.map(yield* secrets.findTransferSecret(orderId), (r) => r.card_token)).toEqual(Option.some(transferToken))
    }))

  it.effect("reveal says whether a card transfer's secret of the account collected the card, as mintedForTransfer does", () =>
    Effect.gen(function*() {
      const vault = yield* CardVault
      const secrets = yield* ClientSecretRepo
      const transfer = yield* newClientSecret("transfer")
      const payment = yield* newClientSecret("payment")
      const owner = transfer.account_id as AccountId
      const collected = yield* vault.store({ ...CARD, account_id: owner })
      const paid = yield* vault.store({ ...CARD, account_id: payment.account_id as AccountId })
      const collectedForTransfer = (accountId: AccountId, token: string) =>
        Effect.map(vault.reveal(accountId, token), Option.map((r) => r.collectedForTransfer))

      yield* secrets.insert(transfer)
      yield* secrets.insert(payment)
      expect(yield* collectedForTransfer(owner, collected.token)).toEqual(Option.some(false))
      yield* secrets.recordToken(transfer.hash, collected.token)
      yield* secrets.recordToken(payment.hash, paid.token)
      expect(yield* collectedForTransfer(owner, collected.token)).toEqual(Option.some(true))
      // A payment's secret collecting a card does not scope it to payouts.
      expect(yield* collectedForTransfer(payment.account_id as AccountId, paid.token)).toEqual(Option.some(false))
      // Another account's transfer secret naming this account's token does not either.
      const other = yield* vault.store({ ...CARD, account_id: payment.account_id as AccountId })
      yield* secrets.recordToken(transfer.hash, other.token)
      expect(yield* collectedForTransfer(payment.account_id as AccountId, other.token)).toEqual(Option.some(false))
      expect(yield* secrets.mintedForTransfer(payment.account_id, other.token)).toBe(false)
    }))

  it.effect("an attempt keeps the browser SDK's customer return URL, set by an update and read back by every read", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const order = yield* newOrder(yield* storedAccount)
      yield* orders.insert(order)
      const attempt = yield* newTransaction(order, { status: "processing", three_ds: null })
      yield* transactions.insert(attempt)
      expect(Option.map(yield* transactions.findAny(attempt.id), (t) => t.customer_return_url)).toEqual(Option.some(null))
      const url = `https://shop.example/checkout?step=3&lang=en&tender_payment_id=${order.id}#pay`
      const kept: Payment.Transaction = { ...attempt, customer_return_url: url, version: 2 }
      yield* transactions.update(decided(kept))
      expect(yield* transactions.find(order.account_id, attempt.id)).toEqual(Option.some(kept))
      expect(yield* transactions.listByOrder(order.id)).toEqual([kept])
      // Inserted with one, too (a row is written whole either way).
      const other = yield* newTransaction(order, { customer_return_url: "http://127.0.0.1:8080/?tender_payment_id=x", created_at: later(T0, 1) })
      yield* transactions.insert(other)
      expect(yield* transactions.findAny(other.id)).toEqual(Option.some(other))
    }))

  it.effect("an attempt keeps whether it is a browser flow's, inserted and updated, through every read", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const order = yield* newOrder(yield* storedAccount)
      yield* orders.insert(order)
      const server = yield* newTransaction(order, { status: "processing" })
      const browser = yield* newTransaction(order, { status: "processing", browser_flow: true, created_at: later(T0, 1) })
      yield* transactions.insert(server)
      yield* transactions.insert(browser)
      expect((yield* transactions.listByOrder(order.id)).map((t) => t.browser_flow)).toEqual([false, true])
      const marked: Payment.Transaction = { ...server, browser_flow: true, version: 2 }
      yield* transactions.update(decided(marked))
      expect(yield* transactions.find(order.account_id, server.id)).toEqual(Option.some(marked))
      expect(yield* transactions.findAny(browser.id)).toEqual(Option.some(browser))
    }))

  it.effect("an attempt keeps its routing (issue 27): inserted, rewritten by an update, written behind in a unit of work, read back whole", () =>
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const uow = yield* UnitOfWork
      const order = yield* newOrder(yield* storedAccount)
      yield* orders.insert(order)
      const routing = { rule: "eu-cards", version: 3, candidates: ["ch_stripe", "ch_adyen"], channel: "ch_stripe", reason: "rule", attempt: 1 } as const
      const first = yield* newTransaction(order, { status: "processing", routing })
      const followUp = yield* newTransaction(order, { kind: "capture", created_at: later(T0, 1) })
      yield* transactions.insert(first)
      yield* transactions.insert(followUp)
      expect(yield* transactions.findAny(first.id)).toEqual(Option.some(first))
      expect((yield* transactions.listByOrder(order.id)).map((t) => t.routing)).toEqual([routing, null])
      const moved: Payment.Transaction = { ...first, routing: { ...routing, channel: "ch_adyen", reason: "retry", attempt: 2 }, version: 2 }
      yield* transactions.update(decided(moved))
      expect(yield* transactions.find(order.account_id, first.id)).toEqual(Option.some(moved))
      // The one-statement unit of work (write-behind) writes the column as a plain insert does.
      const second = yield* newTransaction(order, { status: "processing", routing: { ...routing, channel: "ch_adyen", reason: "retry", attempt: 2 }, created_at: later(T0, 2) })
      yield* uow.transaction(Effect.gen(function*() {
        yield* transactions.insert(second)
        yield* transactions.update(decided({ ...second, routing: { ...second.routing!, attempt: 3 }, version: 2 }))
      }))
      expect(Option.map(yield* transactions.findAny(second.id), (t) => [t.routing, t.version]))
        .toEqual(Option.some([{ ...second.routing!, attempt: 3 }, 2]))
    }))
}

// --- provider channels --------------------------------------------------------------------

export type ChannelStorageServices = StorageServices | ChannelRepo | ChannelCredentials

const STRIPE_SECRETS: ProviderCatalog.ProviderCredentials = {
  provider: "stripe",
  // Shaped like a live key, not like one a secret scanner flags: this file ships in the package.
  secret_key: "sk_live_contract_not_a_key",
  webhook_secret: "whsec_contract0123456789"
}

/** A fully populated live channel of `accountId` (every nullable list set). */
export const newChannel = (accountId: AccountId, overrides: Partial<Channel.Channel> = {}) =>
  Effect.gen(function*() {
    const channel: Channel.Channel = {
      id: yield* (yield* Ids).make("channel"),
      account_id: accountId,
      provider: "stripe",
      mode: "live",
      methods: ["card", "ideal"],
      currencies: ["EUR", "USD"],
      countries: ["NL"],
      priority: 7,
      status: "enabled",
      created_at: T0,
      updated_at: T0,
      ...overrides
    }
    return channel
  })

/**
 * ChannelRepo's contract, with the adapters' ChannelCredentials: a channel reads back whole, only
 * for its own account; an account's channels list in creation order (insertion order within one
 * millisecond); credentials come back only through ChannelCredentials; disabling is guarded.
 */
export const channelsContract = (it: Vitest.MethodsNonLive<ChannelStorageServices>) => {
  it.effect("channels: read back whole by account and id; another account sees nothing", () =>
    Effect.gen(function*() {
      const repo = yield* ChannelRepo
      const account = yield* storedAccount
      const other = yield* storedAccount
      const channel = yield* newChannel(account)
      const bare = yield* newChannel(account, { provider: "adyen", methods: null, currencies: null, countries: null, priority: 0 })
      yield* repo.insert(channel, STRIPE_SECRETS)
      yield* repo.insert(bare, { provider: "adyen", api_key: "AQE-key", merchant_account: "Acme", hmac_key: "00ff".repeat(16), live_url_prefix: "abc-Acme" })
      expect(yield* repo.get(account, channel.id)).toEqual(Option.some(channel))
      expect(yield* repo.get(account, bare.id)).toEqual(Option.some(bare))
      expect(yield* repo.get(other, channel.id)).toEqual(Option.none())
      expect(yield* repo.get(account, "ch_unknown000000000000")).toEqual(Option.none())
      expect(yield* repo.listByAccount(other)).toEqual([])
      // By id alone (a provider's notification names only the channel): whichever account holds it.
      expect(yield* repo.getAny(channel.id)).toEqual(Option.some(channel))
      expect(yield* repo.getAny(bare.id)).toEqual(Option.some(bare))
      expect(yield* repo.getAny("ch_unknown000000000000")).toEqual(Option.none())
    }))

  it.effect("channels: a channel of any provider the catalog carries is kept (Testpay's too), not only Stripe's and Adyen's", () =>
    Effect.gen(function*() {
      const repo = yield* ChannelRepo
      const account = yield* storedAccount
      const channel = yield* newChannel(account, { provider: "testpay", mode: "test", methods: ["card"], currencies: null, countries: null })
      yield* repo.insert(channel, { provider: "testpay", api_key: "tp_test_contract", webhook_secret: "whsec_contract0123456789" })
      expect(yield* repo.get(account, channel.id)).toEqual(Option.some(channel))
    }))

  it.effect("channels: an account's list is in creation order, insertion order within one millisecond", () =>
    Effect.gen(function*() {
      const repo = yield* ChannelRepo
      const account = yield* storedAccount
      const late = yield* newChannel(account, { created_at: later(T0, 5000), updated_at: later(T0, 5000) })
      const sameMs = yield* Effect.forEach([1, 2, 3, 4], () => newChannel(account))
      yield* repo.insert(late, STRIPE_SECRETS)
      // Random ids, one timestamp: only the insertion order can put them in this order.
      for (const channel of sameMs) yield* repo.insert(channel, STRIPE_SECRETS)
      expect(idsOf(yield* repo.listByAccount(account))).toEqual([...idsOf(sameMs), late.id])
    }))

  it.effect("channels: credentials come back only through ChannelCredentials, and only for the owning account", () =>
    Effect.gen(function*() {
      const repo = yield* ChannelRepo
      const credentials = yield* ChannelCredentials
      const account = yield* storedAccount
      const other = yield* storedAccount
      const channel = yield* newChannel(account)
      yield* repo.insert(channel, STRIPE_SECRETS)
      expect(yield* credentials.open(account, channel.id)).toEqual(Option.some(STRIPE_SECRETS))
      expect(yield* credentials.open(other, channel.id)).toEqual(Option.none())
      expect(yield* credentials.open(account, "ch_unknown000000000000")).toEqual(Option.none())
      // The record itself carries no secret.
      expect(JSON.stringify(yield* repo.listByAccount(account))).not.toContain(STRIPE_SECRETS.secret_key)
    }))

  it.effect("channels: update stores a transition's record over the row as it was read, only on its own account", () =>
    Effect.gen(function*() {
      const repo = yield* ChannelRepo
      const account = yield* storedAccount
      const other = yield* storedAccount
      const channel = yield* newChannel(account)
      yield* repo.insert(channel, STRIPE_SECRETS)
      const disabled = Result.getOrThrow(Channel.disable(channel, later(T0))).next
      expect(yield* repo.update({ ...channel, account_id: other }, disabled)).toBe(false)
      expect(yield* repo.get(account, channel.id)).toEqual(Option.some(channel))
      expect(yield* repo.update(channel, disabled)).toBe(true)
      expect(yield* repo.get(account, channel.id)).toEqual(Option.some(disabled))
      // A second disable read the enabled row: the fence (status, updated_at) refuses it.
      expect(yield* repo.update(channel, decided({ ...disabled, updated_at: later(T0, 2000) }))).toBe(false)
      expect(yield* repo.get(account, channel.id)).toEqual(Option.some(disabled))
      expect(yield* repo.listByAccount(account)).toEqual([disabled])
      // Disabling does not lose the credentials: the channel's follow-ups still need them.
      expect(yield* (yield* ChannelCredentials).open(account, channel.id)).toEqual(Option.some(STRIPE_SECRETS))
    }))

  it.effect("channels: the account's list shows each change made through the repository at once", () =>
    Effect.gen(function*() {
      const repo = yield* ChannelRepo
      const account = yield* storedAccount
      const channel = yield* newChannel(account)
      // Each list is read right after the change, the one before it read already (a cache holds it).
      expect(yield* repo.listByAccount(account)).toEqual([])
      yield* repo.insert(channel, STRIPE_SECRETS)
      expect(yield* repo.listByAccount(account)).toEqual([channel])
      const disabled = Result.getOrThrow(Channel.disable(channel, later(T0))).next
      expect(yield* repo.update(channel, disabled)).toBe(true)
      expect(yield* repo.listByAccount(account)).toEqual([disabled])
    }))

  it.effect("channels: a channel id is one row: a second insert of it is a defect, and the first stands", () =>
    Effect.gen(function*() {
      const repo = yield* ChannelRepo
      const account = yield* storedAccount
      const channel = yield* newChannel(account)
      yield* repo.insert(channel, STRIPE_SECRETS)
      expect(Exit.isFailure(yield* Effect.exit(repo.insert({ ...channel, priority: 1 }, STRIPE_SECRETS)))).toBe(true)
      expect(yield* repo.get(account, channel.id)).toEqual(Option.some(channel))
    }))
}

/** Before any other test's rows (1970 on): pruning up to the cutoff takes only this suite's. */
const RETAINED = {
  old: "1960-01-05T10:00:00.000Z",
  cutoff: "1960-02-01T00:00:00.000Z",
  recent: "1960-02-10T10:00:00.000Z"
} as const

/**
 * The retention rule (Retention.ts) as storage carries it out: finished deliveries whose last write
 * is before the cutoff go with their attempts, events with no delivery left go, and nothing owed
 * (pending, retrying, paused, leased) ever goes, nor its event.
 */
export const retentionContract = (it: Vitest.MethodsNonLive<StorageServices | Pruning>) => {
  it.effect("retention: past the cutoff, finished deliveries go with their attempts and events; owed ones stay, and their events", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      const events = yield* EventRepo
      const pruning = yield* Pruning
      const account = yield* storedAccount
      const endpoint = yield* newEndpoint(account, { created_at: RETAINED.old, updated_at: RETAINED.old })
      const disabled = yield* newEndpoint(account, { created_at: RETAINED.old, updated_at: RETAINED.old })
      yield* (yield* WebhookEndpointRepo).insert(endpoint, MAX_TEST_ENDPOINTS)
      yield* (yield* WebhookEndpointRepo).insert(disabled, MAX_TEST_ENDPOINTS)
      const at = (ms: number) => later(RETAINED.old, ms)
      const event = (ms = 0) => storedEvent(account, { created_at: at(ms) })
      /** A delivery of `e` stored pending, then each attempt recorded as the dispatcher records it. */
      const delivered = (e: Payment.PaymentEvent, endpointId: string, outcomes: ReadonlyArray<Webhook.DeliveryStatus>, lastAt = at(60_000)) =>
        Effect.gen(function*() {
          let d = yield* newDelivery(e, endpointId, { next_attempt_at: FAR_FUTURE })
          yield* deliveries.insert(d)
          for (const [i, status] of outcomes.entries()) {
            const attemptAt = i === outcomes.length - 1 ? lastAt : at(1_000 * (i + 1))
            d = { ...d, status, attempts: i + 1, last_attempt_at: attemptAt, updated_at: attemptAt, next_attempt_at: status === "failed" ? FAR_FUTURE : null }
            expect(yield* recordAttempt(d, { delivery_id: d.id, attempted_at: attemptAt, status_code: status === "succeeded" ? 200 : 500, duration_ms: 5, error: null })).toBe(true)
          }
          return d
        })

      // Going: succeeded after a failure (2 attempts), exhausted (1), and an event that had no delivery.
      const succeeded = yield* event(1)
      const succeededDelivery = yield* delivered(succeeded, endpoint.id, ["failed", "succeeded"])
      const exhausted = yield* event(2)
      const exhaustedDelivery = yield* delivered(exhausted, endpoint.id, ["exhausted"])
      const undelivered = yield* event(3)
      // Staying, however old: pending, retrying (failed), paused (its endpoint disabled), leased.
      const pending = yield* event(4)
      const pendingDelivery = yield* delivered(pending, endpoint.id, [])
      const retrying = yield* event(5)
      const retryingDelivery = yield* delivered(retrying, endpoint.id, ["failed"])
      const paused = yield* event(6)
      const pausedDelivery = yield* delivered(paused, disabled.id, ["failed"])
      yield* deliveries.pause({ endpoint_id: disabled.id, paused: true, statuses: Webhook.OPEN_STATUSES })
      const leased = yield* event(7)
      const leasedDelivery = yield* newDelivery(leased, endpoint.id, { next_attempt_at: FAR_FUTURE, lease_token: "lease_retention" })
      yield* deliveries.insert(leasedDelivery)
      // Staying: finished, but its last attempt is inside the retention.
      const lately = yield* event(8)
      const latelyDelivery = yield* delivered(lately, endpoint.id, ["succeeded"], RETAINED.recent)
      // Two endpoints: the finished delivery goes, the owed one stays, and so does the event.
      const split = yield* event(9)
      const splitDone = yield* delivered(split, endpoint.id, ["succeeded"])
      const splitOwed = yield* delivered(split, disabled.id, ["failed"])
      // Created after the cutoff, with no delivery: inside the retention.
      const young = yield* storedEvent(account, { created_at: RETAINED.recent })

      // Batches of 3, each resuming after the last one's cursor, until one comes back short.
      let totals = { events: 0, deliveries: 0, attempts: 0 }
      let after: Retention.EventKey | undefined
      let batches = 0
      for (;;) {
        const batch = yield* pruning.pruneEvents({ before: RETAINED.cutoff, limit: 3, after })
        batches++
        expect(batch.scanned).toBeLessThanOrEqual(3)
        totals = { events: totals.events + batch.events, deliveries: totals.deliveries + batch.deliveries, attempts: totals.attempts + batch.attempts }
        if (batch.scanned < 3 || batch.last === undefined) break
        after = batch.last
      }
      // Nine events before the cutoff, three at a time: three full batches and an empty one.
      expect(batches).toBe(4)
      expect(totals).toEqual({ events: 3, deliveries: 3, attempts: 4 })

      for (const gone of [succeeded, exhausted, undelivered]) expect(yield* events.findAny(gone.id)).toEqual(Option.none())
      for (const gone of [succeededDelivery, exhaustedDelivery, splitDone]) {
        expect(yield* deliveries.findAny(gone.id)).toEqual(Option.none())
        expect(yield* deliveries.attempts(gone.id)).toEqual([])
      }
      for (const kept of [pending, retrying, paused, leased, lately, split, young]) {
        expect(Option.isSome(yield* events.findAny(kept.id))).toBe(true)
      }
      for (const kept of [pendingDelivery, retryingDelivery, pausedDelivery, leasedDelivery, latelyDelivery, splitOwed]) {
        expect(Option.isSome(yield* deliveries.findAny(kept.id))).toBe(true)
      }
      expect(yield* deliveries.attempts(retryingDelivery.id)).toHaveLength(1)
      expect((yield* deliveries.search({ account_id: account, limit: 100 })).data).toHaveLength(6)

      // Again: nothing more may go.
      expect(yield* pruning.pruneEvents({ before: RETAINED.cutoff, limit: 100 })).toMatchObject({ events: 0, deliveries: 0, attempts: 0, scanned: 6 })
    }))

  /** An event past the retention with one exhausted delivery, stored, and the merchant's retry of it (not written). */
  const exhaustedLongAgo = (ms: number) =>
    Effect.gen(function*() {
      const e = yield* storedEvent(yield* storedAccount, { created_at: later(RETAINED.old, ms) })
      const exhausted = yield* newDelivery(e, yield* (yield* Ids).make("webhookEndpoint"), {
        status: "exhausted",
        attempts: 8,
        next_attempt_at: null,
        last_attempt_at: later(RETAINED.old, ms + 10),
        updated_at: later(RETAINED.old, ms + 10)
      })
      yield* (yield* WebhookDeliveryRepo).insert(exhausted)
      // POST …/retry: pending, due in the far future here.
      const retried = Result.getOrThrow(Webhook.transition(exhausted, "retried", later(RETAINED.old, ms + 20), { next_attempt_at: FAR_FUTURE })).next
      return { e, exhausted, retried }
    })

  it.effect("retention: a delivery retried before the batch is owed again, and it and its event stay", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      const pruning = yield* Pruning
      const { e, exhausted, retried } = yield* exhaustedLongAgo(20)
      expect(Retention.deliveryMayGo(exhausted, RETAINED.cutoff)).toBe(true)
      expect(yield* deliveries.update(retried)).toBe(true)
      yield* pruning.pruneEvents({ before: RETAINED.cutoff, limit: 1000 })
      expect(Option.isSome(yield* deliveries.findAny(exhausted.id))).toBe(true)
      expect(Option.isSome(yield* (yield* EventRepo).findAny(e.id))).toBe(true)
    }))

  it.effect("retention: a retry's write to a delivery pruned since it was read writes nothing, and says so (false)", () =>
    Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveryRepo
      const pruning = yield* Pruning
      // Read by the retry, then pruned before the retry writes.
      const { exhausted, retried } = yield* exhaustedLongAgo(50)
      yield* pruning.pruneEvents({ before: RETAINED.cutoff, limit: 1000 })
      expect(yield* deliveries.findAny(exhausted.id)).toEqual(Option.none())
      expect(yield* deliveries.update(retried)).toBe(false)
      expect(yield* deliveries.findAny(exhausted.id)).toEqual(Option.none())
    }))
}

/**
 * Reads the account's feed from `after` in pages of `limit` until `count` events came (or a minute
 * passed): storage may serve an event a while after it committed (PostgreSQL waits for every older
 * transaction of the server to end, another test's long statement included), never skip one.
 * Returns them and where it stopped.
 */
export const readFeedUntil = (
  query: { readonly account_id: string; readonly after: EventFeed.FeedPosition; readonly types?: ReadonlyArray<string> | undefined },
  count: number,
  limit = 2
) =>
  Effect.gen(function*() {
    const events = yield* EventRepo
    const served: Array<Payment.PaymentEvent> = []
    let after = query.after
    const deadline = (yield* Clock.currentTimeMillis) + 60_000
    while (served.length < count && (yield* Clock.currentTimeMillis) < deadline) {
      const page = yield* events.feed({ account_id: query.account_id, after, types: query.types, limit })
      expect(page.events.length).toBeLessThanOrEqual(limit)
      // The cursor only moves forward, and past every event served.
      expect(EventFeed.isAfter(after, page.next)).toBe(false)
      served.push(...page.events)
      after = page.next
      if (page.events.length === 0) yield* Effect.sleep("20 millis")
    }
    return { events: served, next: after }
  })

/** The account's feed position now (a read without a cursor). */
export const feedHead = (accountId: string) =>
  Effect.map(EventRepo.use((events) => events.feed({ account_id: accountId, after: undefined, types: undefined, limit: 1 })), (page) => {
    expect(page.events).toEqual([])
    return page.next
  })

export const feedContract = (it: Vitest.MethodsNonLive<StorageServices>) => {
  it.effect("events feed: from now, the account's events in the order recorded, in pages; by type; the cursor continues and serves nothing twice", () =>
    Effect.gen(function*() {
      const events = yield* EventRepo
      const owner = yield* storedAccount
      const other = yield* storedAccount
      const before = yield* storedEvent(owner)
      const start = yield* feedHead(owner)
      const a = yield* storedEvent(owner, { type: "payment.succeeded" })
      const b = yield* storedEvent(owner, { type: "payment.failed", created_at: later(T0, -5_000) })
      yield* storedEvent(other)
      const c = yield* storedEvent(owner, { type: "payment.succeeded" })

      const all = yield* readFeedUntil({ account_id: owner, after: start }, 3)
      expect(idsOf(all.events)).toEqual(idsOf([a, b, c]))
      expect(all.events[1]).toEqual(b)
      const succeeded = yield* readFeedUntil({ account_id: owner, after: start, types: ["payment.succeeded"] }, 2, 10)
      expect(idsOf(succeeded.events)).toEqual(idsOf([a, c]))
      // Past the last one: nothing more, until the next event.
      expect((yield* events.feed({ account_id: owner, after: all.next, types: undefined, limit: 10 })).events).toEqual([])
      const d = yield* storedEvent(owner, { type: "refund.succeeded" })
      expect(idsOf((yield* readFeedUntil({ account_id: owner, after: all.next }, 1)).events)).toEqual([d.id])
      expect(idsOf((yield* readFeedUntil({ account_id: owner, after: succeeded.next, types: ["payment.succeeded", "refund.succeeded"] }, 1)).events))
        .toEqual([d.id])
      // The oldest cursor there is (as one from before events were pruned) continues with what is kept.
      const fromStart = yield* readFeedUntil({ account_id: owner, after: { tx: 0n, seq: 0n } }, 5, 100)
      expect(idsOf(fromStart.events)).toEqual(idsOf([before, a, b, c, d]))
    }))

  it.effect("events feed: an event of a failed unit of work never appears; one of a unit that succeeds does, once", () =>
    Effect.gen(function*() {
      const uow = yield* UnitOfWork
      const owner = yield* storedAccount
      const start = yield* feedHead(owner)
      yield* Effect.exit(uow.transaction(Effect.andThen(storedEvent(owner), Effect.fail("undo"))))
      const kept = yield* uow.transaction(storedEvent(owner))
      const after = yield* storedEvent(owner)
      const served = yield* readFeedUntil({ account_id: owner, after: start }, 2, 10)
      expect(idsOf(served.events)).toEqual(idsOf([kept, after]))
      expect((yield* (yield* EventRepo).feed({ account_id: owner, after: served.next, types: undefined, limit: 10 })).events).toEqual([])
    }))
}


// --- console operators ------------------------------------------------------------------------

export type OperatorStorageServices = StorageServices | OperatorRepo | ConsoleSessionRepo | AuditLog

/** A new operator record with a unique name (the contract's database may hold others). */
export const newOperator = (overrides: Partial<Operator.OperatorRecord> = {}) =>
  Effect.gen(function*() {
    const id = yield* (yield* Ids).make("operator")
    const record: Operator.OperatorRecord = {
      id,
      name: `op-${id.slice(3, 15).toLowerCase()}`,
      role: "operator",
      accounts: ["acct_one00000000", "acct_two00000000"],
      status: "invited",
      password_hash: null,
      totp_secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
      last_totp_step: null,
      enrolment_token_hash: `${id}-token-hash`,
      enrolment_expires_at: "2025-03-02T10:00:00.123Z",
      failed_logins: 0,
      lockouts: 0,
      locked_until: null,
      created_at: T0,
      updated_at: T0,
      version: 1,
      ...overrides
    }
    return record
  })

export const operatorsContract = (it: Vitest.MethodsNonLive<OperatorStorageServices>) => {
  it.effect("operators: a record reads back whole by id, name and enrolment token; names are unique", () =>
    Effect.gen(function*() {
      const repo = yield* OperatorRepo
      const operator = yield* newOperator()
      yield* repo.insert(operator)
      expect(yield* repo.findById(operator.id)).toEqual(Option.some(operator))
      expect(yield* repo.findByName(operator.name)).toEqual(Option.some(operator))
      expect(yield* repo.findByEnrolmentToken(operator.enrolment_token_hash!)).toEqual(Option.some(operator))
      expect(yield* repo.findByEnrolmentToken("no-such-hash")).toEqual(Option.none())
      expect(yield* repo.findByName("no-such-operator")).toEqual(Option.none())
      const all = yield* newOperator({ accounts: "all", role: "admin" })
      yield* repo.insert(all)
      expect(Option.getOrThrow(yield* repo.findById(all.id)).accounts).toBe("all")
      expect((yield* repo.list()).filter((o) => o.id === operator.id || o.id === all.id)).toHaveLength(2)

      const twin = yield* newOperator({ name: operator.name })
      const refused = yield* Effect.flip(repo.insert(twin))
      expect(refused).toBeInstanceOf(Errors.Conflict)
      expect(yield* repo.findById(twin.id)).toEqual(Option.none())
    }))

  it.effect("operators: an update lands only over the version before it", () =>
    Effect.gen(function*() {
      const repo = yield* OperatorRepo
      const operator = yield* newOperator()
      yield* repo.insert(operator)
      const enrolled: Operator.OperatorRecord = {
        ...operator,
        status: "active",
        password_hash: "scrypt$15$8$1$c2FsdA==$aGFzaA==",
        last_totp_step: 58_000_123,
        enrolment_token_hash: null,
        enrolment_expires_at: null,
        failed_logins: 2,
        lockouts: 3,
        locked_until: "2025-03-01T10:15:00.123Z",
        updated_at: "2025-03-01T10:01:00.000Z",
        version: 2
      }
      yield* repo.update(enrolled)
      expect(yield* repo.findById(operator.id)).toEqual(Option.some(enrolled))
      expect(yield* repo.findByEnrolmentToken(operator.enrolment_token_hash!)).toEqual(Option.none())
      // The same version again: someone else wrote it first.
      const stale = yield* Effect.flip(repo.update({ ...enrolled, role: "admin" }))
      expect(stale).toBeInstanceOf(Errors.Conflict)
      expect(Option.getOrThrow(yield* repo.findById(operator.id)).role).toBe("operator")
    }))

  it.effect("console sessions: insert, find, touch, remove, and remove every one of an operator", () =>
    Effect.gen(function*() {
      const operators = yield* OperatorRepo
      const sessions = yield* ConsoleSessionRepo
      const operator = yield* newOperator()
      const other = yield* newOperator()
      yield* operators.insert(operator)
      yield* operators.insert(other)
      const session = (hash: string, operatorId: string): Operator.ConsoleSession => ({
        token_hash: `${operatorId}-${hash}`,
        operator_id: operatorId,
        csrf_token: `csrf-${hash}`,
        created_at: T0,
        last_seen_at: T0
      })
      const a = session("a", operator.id)
      const b = session("b", operator.id)
      const c = session("c", other.id)
      for (const s of [a, b, c]) yield* sessions.insert(s)
      expect(yield* sessions.find(a.token_hash)).toEqual(Option.some(a))
      yield* sessions.touch(a.token_hash, "2025-03-01T10:05:00.000Z")
      expect(yield* sessions.find(a.token_hash)).toEqual(Option.some({ ...a, last_seen_at: "2025-03-01T10:05:00.000Z" }))
      yield* sessions.remove(a.token_hash)
      expect(yield* sessions.find(a.token_hash)).toEqual(Option.none())
      yield* sessions.removeForOperator(operator.id)
      expect(yield* sessions.find(b.token_hash)).toEqual(Option.none())
      expect(yield* sessions.find(c.token_hash)).toEqual(Option.some(c))
    }))

  it.effect("console sessions: removeExpired removes those last seen or made before its bounds, up to the limit", () =>
    Effect.gen(function*() {
      const operators = yield* OperatorRepo
      const sessions = yield* ConsoleSessionRepo
      const operator = yield* newOperator()
      yield* operators.insert(operator)
      // Bounds in 1960: no other test's sessions are that old, so what goes is this test's alone.
      const bounds = { lastSeenBefore: "1960-01-01T00:30:00.000Z", createdBefore: "1960-01-01T00:00:00.000Z" }
      const session = (hash: string, created_at: string, last_seen_at: string): Operator.ConsoleSession => ({
        token_hash: `${operator.id}-${hash}`,
        operator_id: operator.id,
        csrf_token: `csrf-${hash}`,
        created_at,
        last_seen_at
      })
      // Idle past the bound (made in time); made before the bound (seen lately); on both bounds.
      const idle = [1, 2, 3].map((i) => session(`idle${i}`, "1960-01-01T00:00:00.000Z", `1960-01-01T00:29:5${i}.999Z`))
      const old = session("old", "1959-12-31T23:59:59.999Z", "1960-01-01T00:45:00.000Z")
      const live = session("live", "1960-01-01T00:00:00.000Z", "1960-01-01T00:30:00.000Z")
      for (const s of [...idle, old, live]) yield* sessions.insert(s)
      expect(yield* sessions.removeExpired({ ...bounds, limit: 3 })).toBe(3)
      expect(yield* sessions.removeExpired({ ...bounds, limit: 3 })).toBe(1)
      expect(yield* sessions.removeExpired({ ...bounds, limit: 3 })).toBe(0)
      for (const s of [...idle, old]) expect(yield* sessions.find(s.token_hash)).toEqual(Option.none())
      // Exactly at both bounds: not before them, so it stays (as Operator.sessionExpired judges it).
      expect(yield* sessions.find(live.token_hash)).toEqual(Option.some(live))
    }))

  it.effect("audit log: newest first in pages, filtered by operator and by accounts", () =>
    Effect.gen(function*() {
      const log = yield* AuditLog
      const ids = yield* Ids
      const operatorId = yield* ids.make("operator")
      const otherId = yield* ids.make("operator")
      const accountA = yield* ids.make("account")
      const accountB = yield* ids.make("account")
      const entry = (at: string, operator: string, account: string | null, outcome: "succeeded" | "failed" = "succeeded") =>
        Effect.map(ids.make("auditEntry"), (id): Operator.AuditEntry => ({
          id,
          at,
          operator_id: operator,
          operator_name: "ann",
          action: "refund",
          target: "ord_x",
          account_id: account,
          outcome,
          detail: "refund 5.00 EUR"
        }))
      const e1 = yield* entry("2025-03-01T10:00:01.000Z", operatorId, accountA)
      const e2 = yield* entry("2025-03-01T10:00:02.000Z", operatorId, accountB, "failed")
      const e3 = yield* entry("2025-03-01T10:00:03.000Z", otherId, accountA)
      const e4 = yield* entry("2025-03-01T10:00:04.000Z", operatorId, null)
      for (const e of [e1, e2, e3, e4]) yield* log.append(e)
      const strip = (rows: ReadonlyArray<Operator.AuditEntry & { readonly created_at: string }>) =>
        rows.map(({ created_at, ...e }) => {
          expect(created_at).toBe(e.at)
          return e
        })

      const first = yield* log.list({ operator_id: operatorId, limit: 2 })
      expect(strip(first.data)).toEqual([e4, e2])
      expect(first.has_more).toBe(true)
      const last = first.data.at(-1)!
      const second = yield* log.list({ operator_id: operatorId, limit: 2, cursor: { created_at: last.created_at, id: last.id } })
      expect(strip(second.data)).toEqual([e1])
      expect(second.has_more).toBe(false)

      expect(strip((yield* log.list({ accounts: [accountA], limit: 10 })).data)).toEqual([e3, e1])
      expect(strip((yield* log.list({ accounts: [accountA, accountB], operator_id: operatorId, limit: 10 })).data)).toEqual([e2, e1])
      expect((yield* log.list({ accounts: [], limit: 10 })).data).toEqual([])
    }))
}

/** Every service the whole contract uses: what a storage layer under `storageContract` provides. */
export type StorageContractServices =
  | StorageServices
  | CustomerRepo
  | TransferRepo
  | ClientSecretRepo
  | ChannelRepo
  | ChannelCredentials
  | Pruning
  | OperatorRepo
  | ConsoleSessionRepo
  | AuditLog

export interface StorageContractOptions<R> {
  /** Per test (default 2 minutes: a database's first tests wait for its pool and migrations). */
  readonly timeout?: Duration.Input | undefined
  /** More tests of the suite's own, in the same block over the same layer (one build of it). */
  readonly also?: ((it: Vitest.MethodsNonLive<R>) => void) | undefined
}

/**
 * Registers the storage contract over `layer` (a storage: every repository of the contract, with
 * `Ids` and `KeyHasher`; nothing left to provide) in a `describe` block named `name`. The layer is
 * built once for the block and its data is shared by its tests: each test makes its own accounts, so
 * a database that holds other data passes as well.
 */
export const storageContract = <L extends Layer.Layer<StorageContractServices, unknown>>(
  name: string,
  layer: L,
  options: StorageContractOptions<Layer.Success<L>> = {}
): void =>
  layerTests(layer as Layer.Layer<Layer.Success<L>, Layer.Error<L>>, { excludeTestServices: true, timeout: options.timeout ?? "2 minutes" })(name, (it) => {
    // R provides at least the contract's services: the tests that need only those run under it.
    const contract = it as unknown as Vitest.MethodsNonLive<StorageContractServices>
    coreStorageContract(contract)
    customersContract(contract)
    transfersContract(contract)
    clientSecretsContract(contract)
    channelsContract(contract)
    retentionContract(contract)
    feedContract(contract)
    operatorsContract(contract)
    options.also?.(it)
  })
