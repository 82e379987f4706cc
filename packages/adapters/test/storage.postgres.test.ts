import { expect } from "@effect/vitest"
import {
  type OrderId,
  AccountRepo,
  CardVault,
  ChannelRepo,
  CheckoutSession,
  CheckoutSessionRepo,
  Errors,
  EventRepo,
  Ids,
  OperatorRepo,
  OrderRepo,
  Payment,
  UnitOfWork,
  Webhook,
  WebhookDeliveryRepo,
  WebhookEndpointRepo,
  Webhooks
} from "@tender/domain"
import { Cause, Clock, Deferred, Effect, Exit, Fiber, Layer, Option, Result } from "effect"
import { SqlClient } from "effect/sql"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as PayloadSignerHmac from "../src/crypto/PayloadSignerHmac.ts"
import * as HostResolverDns from "../src/webhooks/HostResolverDns.ts"
import * as WebhookTransportHttp from "../src/webhooks/WebhookTransportHttp.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { postgresStorage } from "../src/Infrastructure.ts"
import { ChannelCredentials } from "../src/storage/ChannelCredentials.ts"
import { sharedConfig } from "./PgTestDatabase.ts"
import {
  CLAIM_WINDOW,
  clearClaimWindow,
  feedHead,
  newAccount,
  newChannel,
  newDelivery,
  newEndpoint,
  newOperator,
  newOrder,
  newSession,
  pastBoundContract,
  readFeedUntil,
  storageContract,
  storedEvent
} from "../src/testing/StorageContract.ts"

const storage = Layer.unwrap(Effect.map(sharedConfig, postgresStorage)).pipe(
  Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer))
)

/** A stored account and one event of it (what a delivery refers to). */
const accountWithEvent = Effect.gen(function*() {
  const { account } = yield* newAccount()
  yield* (yield* AccountRepo).insert(account)
  return { account: account.id, event: yield* storedEvent(account.id) }
})

/** Each delivery of the endpoint and its `paused` flag (storage's alone: the domain's record has none). */
const pausedOf = (endpointId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string; paused: boolean }>`SELECT id, paused FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`,
      (rows) => Object.fromEntries(rows.map((r) => [r.id, r.paused]))
    ))

// The contract a team's own storage adapter passes too (@tender/adapters/testing), and what only PostgreSQL holds.
storageContract("PostgreSQL storage", storage, {
  timeout: "2 minutes",
  also: (it) => {
    // As a row of an earlier version is: stored within the bound, then moved past it with the trigger off.
    pastBoundContract<SqlClient.SqlClient | OrderRepo>(it, (order) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Effect.orDie((yield* OrderRepo).insert({ ...order, refunded_amount: 0 }))
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`ALTER TABLE orders DISABLE TRIGGER orders_refunded_within_arrived`
          yield* sql`UPDATE orders SET refunded_amount = ${order.refunded_amount} WHERE id = ${order.id}`
          yield* sql`ALTER TABLE orders ENABLE TRIGGER orders_refunded_within_arrived`
        })).pipe(Effect.orDie)
      }))

    it.effect("events feed: of two units of work committing out of order (the lower seq last), the feed misses neither", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const uow = yield* UnitOfWork
        const events = yield* EventRepo
        const { account } = yield* accountWithEvent
        const start = yield* feedHead(account)
        const inserted = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // A: its event inserted first (a read in the unit flushes its write-behind statement), its
        // commit held back until B has committed.
        const slow = yield* Effect.forkChild(uow.transaction(Effect.gen(function*() {
          const event = yield* storedEvent(account, { type: "payment.failed" })
          yield* events.findAny(event.id)
          yield* Deferred.succeed(inserted, undefined)
          yield* Deferred.await(release)
          return event
        })))
        yield* Deferred.await(inserted)
        // B: inserted after A (its seq is higher) and committed first, through the write-behind
        // statement at commit.
        const fast = yield* uow.transaction(storedEvent(account, { type: "payment.succeeded" }))
        const seqs = yield* sql<{ txid: string }>`SELECT txid::text FROM events WHERE id = ${fast.id}`
        // The default applied to the write-behind statement's insert: the writing transaction.
        expect(seqs).toHaveLength(1)
        expect(BigInt(seqs[0].txid)).toBeGreaterThan(0n)

        // B is committed and visible, but an older transaction (A) still runs: a feed that served B
        // now would move its cursor past A's lower seq, and miss A when it commits.
        const early = yield* events.feed({ account_id: account, after: start, types: undefined, limit: 10 })
        expect(early.events).toEqual([])
        yield* Deferred.succeed(release, undefined)
        const slowEvent = yield* Fiber.join(slow)
        // The race was real: A holds the lower seq, yet committed last.
        const bySeq = yield* sql<{ id: string }>`SELECT id FROM events WHERE id IN (${slowEvent.id}, ${fast.id}) ORDER BY seq`
        expect(bySeq.map((r) => r.id)).toEqual([slowEvent.id, fast.id])

        // From the early read's cursor, and from the start: both events, A (the older transaction) first.
        expect((yield* readFeedUntil({ account_id: account, after: early.next }, 2)).events.map((e) => e.id)).toEqual([slowEvent.id, fast.id])
        expect((yield* readFeedUntil({ account_id: account, after: start }, 2)).events.map((e) => e.id)).toEqual([slowEvent.id, fast.id])
      }))

    it.effect("the vault row holds the number sealed: neither the row nor the ciphertext contains it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* AccountRepo
        const vault = yield* CardVault
        const { account } = yield* newAccount()
        yield* repo.insert(account)
        const number = "5555555555554444"
        const card = { account_id: account.id, number, brand: "mastercard", last4: "4444", bin: "55555555", exp_month: 1, exp_year: 2031, funding: "credit", holder_name: null } as const
        const first = yield* vault.store(card)
        const second = yield* vault.store(card)

        const rows = yield* sql<{ token: string; row: string; iv: number; tag: number; ciphertext: Uint8Array }>`
          SELECT token, row_to_json(v)::text AS row, length(number_iv) AS iv, length(number_tag) AS tag,
            number_ciphertext AS ciphertext
          FROM card_vault v WHERE token IN (${first.token}, ${second.token}) ORDER BY token`
        expect(rows).toHaveLength(2)
        for (const row of rows) {
          expect(row.row).not.toContain(number)
          expect(row.row).not.toContain(Buffer.from(number, "utf8").toString("hex"))
          expect(Buffer.from(row.ciphertext).toString("latin1")).not.toContain(number)
          expect(row.iv).toBe(12)
          expect(row.tag).toBe(16)
        }
        // A fresh IV per card: the same number never seals to the same bytes.
        expect(Buffer.from(rows[0].ciphertext).equals(Buffer.from(rows[1].ciphertext))).toBe(false)
        const columns = yield* sql<{ column_name: string }>`
          SELECT column_name FROM information_schema.columns WHERE table_name = 'card_vault'`
        expect(columns.map((c) => c.column_name)).not.toContain("number")
      }))

    it.effect("a channel row holds its credentials sealed: no column, nor the ciphertext, contains a secret", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { account } = yield* newAccount()
        yield* (yield* AccountRepo).insert(account)
        const channel = yield* newChannel(account.id)
        const secrets = { provider: "adyen", api_key: "AQE-secret-api-key", merchant_account: "AcmeECOM", hmac_key: "a1b2".repeat(16), live_url_prefix: "abc-Acme" } as const
        yield* (yield* ChannelRepo).insert(channel, secrets)
        const [row] = yield* sql<{ row: string; iv: number; tag: number; ciphertext: Uint8Array }>`
          SELECT row_to_json(c)::text AS row, length(credentials_iv) AS iv, length(credentials_tag) AS tag,
            credentials_ciphertext AS ciphertext
          FROM channels c WHERE id = ${channel.id}`
        for (const secret of [secrets.api_key, secrets.hmac_key]) {
          expect(row.row).not.toContain(secret)
          expect(Buffer.from(row.ciphertext).toString("latin1")).not.toContain(secret)
        }
        expect([row.iv, row.tag]).toEqual([12, 16])
        // Sealed for this account and channel: moved onto another row, it does not open.
        const twin = yield* newChannel(account.id)
        yield* (yield* ChannelRepo).insert(twin, { ...secrets, api_key: "AQE-other" })
        yield* sql`UPDATE channels SET credentials_iv = s.credentials_iv, credentials_ciphertext = s.credentials_ciphertext,
            credentials_tag = s.credentials_tag
          FROM channels s WHERE s.id = ${channel.id} AND channels.id = ${twin.id}`
        const moved = yield* Effect.exit((yield* ChannelCredentials).open(account.id, twin.id))
        expect(Exit.isFailure(moved) && Cause.hasDies(moved.cause)).toBe(true)
      }))

    it.effect("an operator row holds the TOTP secret sealed, bound to the operator: moved onto another, it does not open", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* OperatorRepo
        const operator = yield* newOperator({ totp_secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ" })
        const twin = yield* newOperator()
        yield* repo.insert(operator)
        yield* repo.insert(twin)
        const [row] = yield* sql<{ row: string; ciphertext: Uint8Array }>`
          SELECT row_to_json(o)::text AS row, totp_secret_ciphertext AS ciphertext FROM operators o WHERE id = ${operator.id}`
        expect(row.row).not.toContain(operator.totp_secret)
        expect(Buffer.from(row.ciphertext).toString("latin1")).not.toContain(operator.totp_secret)
        yield* sql`UPDATE operators SET totp_secret_iv = s.totp_secret_iv, totp_secret_ciphertext = s.totp_secret_ciphertext,
            totp_secret_tag = s.totp_secret_tag FROM operators s WHERE s.id = ${operator.id} AND operators.id = ${twin.id}`
        const moved = yield* Effect.exit(repo.findById(twin.id))
        expect(Exit.isFailure(moved) && Cause.hasDies(moved.cause)).toBe(true)
        // The database is shared: a row that cannot open would break any later `list`.
        yield* sql`DELETE FROM operators WHERE id = ${twin.id}`
      }))

    it.effect("of 20 concurrent inserts of one reference from separate connections, exactly one is stored", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const orders = yield* OrderRepo
        const uow = yield* UnitOfWork
        const { account } = yield* newAccount()
        yield* (yield* AccountRepo).insert(account)
        const contenders = yield* Effect.forEach(
          Array.from({ length: 20 }),
          () => newOrder(account.id, { merchant_reference: "race-1" })
        )
        const backends = new Set<number>()
        // Each insert holds its transaction open a moment, so the inserts overlap in the database.
        const results = yield* Effect.forEach(
          contenders,
          (order) =>
            Effect.result(uow.transaction(Effect.gen(function*() {
              const [{ pid }] = yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`
              backends.add(pid)
              yield* orders.insert(order)
              yield* Effect.sleep("20 millis")
            }))),
          { concurrency: "unbounded" }
        )
        const failures = results.filter((r) => r._tag === "Failure")
        expect(results.filter((r) => r._tag === "Success")).toHaveLength(1)
        expect(failures).toHaveLength(19)
        for (const f of failures) expect(f._tag === "Failure" && f.failure).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
        expect(backends.size).toBeGreaterThan(1)
        const [{ count }] = yield* sql<{ count: number }>`
          SELECT count(*)::int AS count FROM orders WHERE account_id = ${account.id} AND merchant_reference = 'race-1'`
        expect(count).toBe(1)
      }))

    it.effect("orders, transactions and events: one typed column per domain field", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const columns = yield* sql<{ table_name: string; column_name: string; data_type: string }>`
          SELECT table_name, column_name, data_type FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name IN ('orders', 'transactions', 'events')`
        const of = (table: string) =>
          Object.fromEntries(columns.filter((c) => c.table_name === table).map((c) => [c.column_name, c.data_type]))
        const orders = of("orders")
        const transactions = of("transactions")
        const events = of("events")
        expect(Object.keys(orders).sort()).toEqual(Object.keys(Payment.Order.fields).sort())
        expect(Object.keys(transactions).sort()).toEqual(Object.keys(Payment.Transaction.fields).sort())
        // plus `seq`, the insertion order that breaks ties between events of one millisecond, and
        // `txid`, the writing transaction, which with it places an event in the feed (migration 0044)
        expect(Object.keys(events).sort()).toEqual([...Object.keys(Payment.PaymentEvent.fields), "seq", "txid"].sort())
        expect([orders.amount, orders.received_amount, transactions.amount]).toEqual(["bigint", "bigint", "bigint"])
        expect([orders.customer, orders.payment_instrument, transactions.payment_instrument, transactions.next_action, events.data])
          .toEqual(["jsonb", "jsonb", "jsonb", "jsonb", "jsonb"])
        for (const t of [orders.created_at, orders.updated_at, transactions.expires_at, events.created_at]) {
          expect(t).toBe("timestamp with time zone")
        }
        // Byte-wise ids on any server's default collation: the memory adapter breaks ties the same way.
        const collations = yield* sql<{ collation_name: string | null }>`
          SELECT collation_name FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name IN ('orders', 'transactions', 'events')
            AND column_name = 'id'`
        expect(collations.map((c) => c.collation_name)).toEqual(["C", "C", "C"])
      }))

    it.effect("of two claimDue calls racing from separate connections over 50 due deliveries, each row goes to one", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const deliveries = yield* WebhookDeliveryRepo
        const uow = yield* UnitOfWork
        const ids = yield* Ids
        yield* clearClaimWindow
        const { account } = yield* newAccount()
        yield* (yield* AccountRepo).insert(account)
        const event: Payment.PaymentEvent = {
          id: yield* ids.make("event"),
          account_id: account.id,
          type: "payment.succeeded",
          created_at: CLAIM_WINDOW.from,
          livemode: false,
          processing_profile: null,
          order_id: null,
          data: {}
        }
        yield* (yield* EventRepo).append(event)
        const endpointId = yield* ids.make("webhookEndpoint")
        const due = yield* Effect.forEach(Array.from({ length: 50 }), () => newDelivery(event, endpointId))
        for (const delivery of due) yield* deliveries.insert(delivery)

        const claim = {
          now: new Date(Date.parse(CLAIM_WINDOW.from) + 1_000).toISOString(),
          leaseUntil: new Date(Date.parse(CLAIM_WINDOW.from) + 31_000).toISOString(),
          limit: 30,
          lease: "lease-race",
          perAccount: 1000,
          perEndpoint: 1000,
          excludeEndpoints: [],
          excludeAccounts: []
        }
        const backend = sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.pipe(Effect.map(([row]) => row.pid))
        // The first worker holds its claim uncommitted while the second claims: the second must skip
        // the locked rows at once, not wait for them and not take them too.
        const firstClaimed = yield* Deferred.make<void>()
        const first = yield* Effect.forkChild(uow.transaction(Effect.gen(function*() {
          const pid = yield* backend
          const claimed = yield* deliveries.claimDue(claim)
          yield* Deferred.succeed(firstClaimed, undefined)
          yield* Effect.sleep("300 millis")
          return { pid, claimed, committedAt: yield* Clock.currentTimeMillis }
        })))
        yield* Deferred.await(firstClaimed)
        const second = yield* uow.transaction(Effect.gen(function*() {
          const pid = yield* backend
          const claimed = yield* deliveries.claimDue(claim)
          return { pid, claimed, committedAt: yield* Clock.currentTimeMillis }
        }))
        const held = yield* Fiber.join(first)

        expect(held.pid).not.toBe(second.pid)
        expect(second.committedAt).toBeLessThan(held.committedAt)
        expect([held.claimed.length, second.claimed.length]).toEqual([30, 20])
        const claimedIds = [...held.claimed, ...second.claimed].map((c) => c.delivery.id)
        expect(new Set(claimedIds).size).toBe(50)
        expect([...claimedIds].sort()).toEqual(due.map((d) => d.id).sort())
        expect(yield* deliveries.claimDue(claim)).toEqual([])
      }))

    it.effect("the pause rule, as the domain decides it, is stored in `paused` in the endpoint's unit of work; the database derives nothing (0037 dropped 0022's triggers)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const uow = yield* UnitOfWork
        const deliveries = yield* WebhookDeliveryRepo
        const endpoints = yield* WebhookEndpointRepo
        const { account, event } = yield* accountWithEvent
        const endpoint = yield* newEndpoint(account)
        yield* endpoints.insert(endpoint, 1000)
        const [open, done, ended] = [
          yield* newDelivery(event, endpoint.id),
          yield* newDelivery(event, endpoint.id, { status: "succeeded", next_attempt_at: null }),
          yield* newDelivery(event, endpoint.id)
        ]
        for (const d of [open, done, ended]) yield* deliveries.insert(d)
        const paused = () => pausedOf(endpoint.id)
        // What UpdateEndpoint persists: the endpoint's move, then the pause rule's decision.
        const move = (from: Webhook.WebhookEndpoint, to: Webhook.EndpointStatus) =>
          Effect.gen(function*() {
            const next = Result.getOrThrow(Webhook.transitionEndpoint(from, Webhook.triggerTo(to), new Date().toISOString())).next
            yield* endpoints.update(next)
            yield* deliveries.pause(Webhook.pauseOf(next))
            return next
          })
        expect(yield* paused()).toEqual({ [open.id]: false, [done.id]: false, [ended.id]: false })

        // A unit of work that fails after both writes leaves neither.
        const refused = yield* Effect.exit(uow.transaction(Effect.andThen(move(endpoint, "disabled"), Effect.fail("later step failed"))))
        expect(refused._tag).toBe("Failure")
        expect(yield* endpoints.findAny(endpoint.id)).toEqual(Option.some(endpoint))
        expect(yield* paused()).toEqual({ [open.id]: false, [done.id]: false, [ended.id]: false })

        const disabled = yield* uow.transaction(move(endpoint, "disabled"))
        expect(yield* paused()).toEqual({ [open.id]: true, [done.id]: false, [ended.id]: true })
        // Fanned out as the endpoint was being disabled: no trigger pauses it (the claim checks the
        // endpoint's status, StorageContract's "passes over disabled endpoints").
        const late = yield* newDelivery(event, endpoint.id)
        yield* deliveries.insert(late)
        expect((yield* paused())[late.id]).toBe(false)
        // One whose attempt was under way at the disable ends while paused; a retry must find it unpaused.
        yield* sql`UPDATE webhook_deliveries SET status = 'exhausted', next_attempt_at = NULL WHERE id = ${ended.id}`
        // The database derives nothing from the endpoint's status any more.
        yield* sql`UPDATE webhook_endpoints SET status = 'enabled' WHERE id = ${endpoint.id}`
        expect(yield* paused()).toEqual({ [open.id]: true, [done.id]: false, [ended.id]: true, [late.id]: false })
        yield* sql`UPDATE webhook_endpoints SET status = 'disabled' WHERE id = ${endpoint.id}`

        yield* uow.transaction(move(disabled, "enabled"))
        expect(yield* paused()).toEqual({ [open.id]: false, [done.id]: false, [ended.id]: false, [late.id]: false })
      }))

    it.effect("the domain's UpdateEndpoint and DeleteEndpoint store the pause rule's decision with the endpoint's change", () =>
      Effect.gen(function*() {
        const { account } = yield* newAccount()
        yield* (yield* AccountRepo).insert(account)
        const event = yield* storedEvent(account.id)
        const endpoint = yield* newEndpoint(account.id)
        yield* (yield* WebhookEndpointRepo).insert(endpoint, 1000)
        const [open, done] = [yield* newDelivery(event, endpoint.id), yield* newDelivery(event, endpoint.id, { status: "succeeded", next_attempt_at: null })]
        for (const d of [open, done]) yield* (yield* WebhookDeliveryRepo).insert(d)
        const paused = pausedOf(endpoint.id)
        const webhooks = Webhooks.layer.pipe(
          Layer.provide(Layer.mergeAll(WebhookTransportHttp.layer, PayloadSignerHmac.layer).pipe(Layer.provideMerge(HostResolverDns.layer)))
        )
        yield* Effect.gen(function*() {
          const use = yield* Webhooks
          expect((yield* use.updateEndpoint(account, endpoint.id, { status: "disabled" })).status).toBe("disabled")
          expect(yield* paused).toEqual({ [open.id]: true, [done.id]: false })
          yield* use.updateEndpoint(account, endpoint.id, { description: "still off" })
          expect(yield* paused).toEqual({ [open.id]: true, [done.id]: false })
          yield* use.updateEndpoint(account, endpoint.id, { status: "enabled" })
          expect(yield* paused).toEqual({ [open.id]: false, [done.id]: false })
          yield* use.updateEndpoint(account, endpoint.id, { status: "disabled" })
          yield* use.deleteEndpoint(account, endpoint.id)
          expect(yield* paused).toEqual({ [open.id]: false, [done.id]: false })
        }).pipe(Effect.provide(webhooks))
      }))

    it.effect("claimDue's cost follows the endpoints and the bounds, not the backlog: 50,000 due rows of a tenant at its cap, one of another", () =>
      Effect.gen(function*() {
        yield* clearClaimWindow
        const busy = yield* accountWithEvent
        const sql = yield* SqlClient.SqlClient
        const deliveries = yield* WebhookDeliveryRepo
        const uow = yield* UnitOfWork
        const ids = yield* Ids
        const quiet = yield* accountWithEvent
        const hanging = yield* Effect.forEach(Array.from({ length: 16 }), () => ids.make("webhookEndpoint"))
        const prefix = yield* ids.make("webhookDelivery")
        const at = (ms: number) => new Date(Date.parse(CLAIM_WINDOW.from) + ms).toISOString()
        // The busy tenant's backlog, due 1 ms apart from the window's start, spread over its endpoints
        // (analysed, as autovacuum would have by then, so the plan is the one a grown table gets).
        const seed = (from: number, to: number) =>
          Effect.andThen(
            sql`INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, attempts,
                  next_attempt_at, created_at, updated_at)
                SELECT ${prefix} || '_' || g, ${busy.account}, (${hanging}::text[])[1 + g % 16], ${busy.event.id},
                  ${busy.event.type}, 'pending', 0, ${at(0)}::timestamptz + g * interval '1 millisecond',
                  ${at(0)}::timestamptz, ${at(0)}::timestamptz
                FROM generate_series(${from}::int, ${to}::int) g`,
            sql`ANALYZE webhook_deliveries`
          ).pipe(Effect.orDie)
        const waiting = yield* newDelivery(quiet.event, yield* ids.make("webhookEndpoint"), { next_attempt_at: at(60_000) })
        yield* deliveries.insert(waiting)

        // One claim as the dispatcher makes it with the busy tenant at its bound, and the rows it read
        // from the table and its indexes (this transaction's own counters), rolled back after.
        const measure = Effect.flip(uow.transaction(Effect.gen(function*() {
          const claimed = yield* deliveries.claimDue({
            now: at(120_000),
            leaseUntil: at(150_000),
            lease: "lease-cost",
            limit: 32,
            perAccount: 8,
            perEndpoint: 4,
            excludeEndpoints: hanging,
            excludeAccounts: [busy.account]
          })
          const [read] = yield* sql<{ rows: number }>`
            SELECT (SELECT coalesce(sum(seq_tup_read + coalesce(idx_tup_fetch, 0)), 0)
                    FROM pg_stat_xact_user_tables WHERE relid = 'webhook_deliveries'::regclass)
              + (SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(indexrelid)), 0)
                 FROM pg_index WHERE indrelid = 'webhook_deliveries'::regclass) AS rows`.pipe(Effect.orDie)
          return yield* Effect.fail({ claimed: claimed.map((c) => c.delivery.id), read: Number(read.rows) })
        })))

        yield* seed(1, 50_000)
        const { claimed, read } = yield* measure
        expect(claimed).toEqual([waiting.id])
        // Walking the due backlog read all 50,000 rows (and every other due row in the database); the
        // claim reads one head per endpoint with open deliveries and the bounded pool: a few dozen here,
        // a few thousand at most with every other test's rows around.
        expect(read).toBeLessThan(5_000)
      }).pipe(Effect.ensuring(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // Out of every later claim's way.
        yield* sql`UPDATE webhook_deliveries SET status = 'exhausted', next_attempt_at = NULL
          WHERE next_attempt_at < ${CLAIM_WINDOW.to}::timestamptz AND lease_token IS NULL`.pipe(Effect.orDie)
      }))))

    it.effect("webhook tables: one typed column per domain field; attempts add only their order", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const columns = yield* sql<{ table_name: string; column_name: string; data_type: string }>`
          SELECT table_name, column_name, data_type FROM information_schema.columns
          WHERE table_schema = current_schema()
            AND table_name IN ('webhook_endpoints', 'webhook_deliveries', 'webhook_attempts')`
        const of = (table: string) =>
          Object.fromEntries(columns.filter((c) => c.table_name === table).map((c) => [c.column_name, c.data_type]))
        const endpoints = of("webhook_endpoints")
        const deliveries = of("webhook_deliveries")
        const attempts = of("webhook_attempts")
        expect(Object.keys(endpoints).sort()).toEqual(Object.keys(Webhook.WebhookEndpoint.fields).sort())
        // `paused`: the dispatcher's index leaves out a disabled endpoint's deliveries (migration 0022).
        expect(Object.keys(deliveries).sort()).toEqual([...Object.keys(Webhook.WebhookDelivery.fields), "paused"].sort())
        expect(Object.keys(attempts).sort()).toEqual([...Object.keys(Webhook.DeliveryAttempt.fields), "seq"].sort())
        expect(endpoints.enabled_events).toBe("jsonb")
        for (const t of [deliveries.next_attempt_at, deliveries.last_attempt_at, deliveries.created_at, attempts.attempted_at]) {
          expect(t).toBe("timestamp with time zone")
        }
        // No foreign key from a delivery to its endpoint: deleting an endpoint keeps its log.
        const references = yield* sql<{ column_name: string; foreign_table: string }>`
          SELECT kcu.column_name, ccu.table_name AS foreign_table
          FROM information_schema.table_constraints tc
          JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name
          JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name
          WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_name = 'webhook_deliveries'
          ORDER BY kcu.column_name`
        expect(references.map((r) => [r.column_name, r.foreign_table])).toEqual([
          ["account_id", "accounts"],
          ["event_id", "events"]
        ])
      }))

    it.effect("an order refuses a card number where its card token goes", () =>
      Effect.gen(function*() {
        const orders = yield* OrderRepo
        const { account } = yield* newAccount()
        yield* (yield* AccountRepo).insert(account)
        const order = yield* newOrder(account.id, { card_token: "4242424242424242" })
        const exit = yield* Effect.exit(orders.insert(order))
        expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
        expect(yield* orders.findAny(order.id)).toEqual(Option.none())
      }))

    it.effect("of 20 concurrent session inserts of one reference from separate connections, exactly one is stored", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const sessions = yield* CheckoutSessionRepo
        const uow = yield* UnitOfWork
        const { account } = yield* newAccount()
        yield* (yield* AccountRepo).insert(account)
        // One session of the reference already ended: it must not count, nor be disturbed.
        const ended = yield* newSession(account.id, {
          merchant_reference: "session-race-1",
          status: "expired",
          created_at: "2025-03-01T09:00:00.000Z"
        })
        yield* sessions.insert(ended)
        const contenders = yield* Effect.forEach(
          Array.from({ length: 20 }),
          () => newSession(account.id, { merchant_reference: "session-race-1" })
        )
        const backends = new Set<number>()
        // Each insert holds its transaction open a moment, so the inserts overlap in the database.
        const results = yield* Effect.forEach(
          contenders,
          (session) =>
            Effect.result(uow.transaction(Effect.gen(function*() {
              const [{ pid }] = yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`
              backends.add(pid)
              yield* sessions.insert(session)
              yield* Effect.sleep("20 millis")
              return session
            }))),
          { concurrency: "unbounded" }
        )
        const failures = results.filter((r) => r._tag === "Failure")
        const winners = results.flatMap((r) => (r._tag === "Success" ? [r.success] : []))
        expect(winners).toHaveLength(1)
        expect(failures).toHaveLength(19)
        for (const f of failures) expect(f._tag === "Failure" && f.failure).toBeInstanceOf(Errors.DuplicateMerchantReferenceId)
        expect(backends.size).toBeGreaterThan(1)
        const rows = yield* sql<{ id: string; status: string }>`
          SELECT id, status FROM checkout_sessions
          WHERE account_id = ${account.id} AND merchant_reference = 'session-race-1' ORDER BY status`
        expect(rows).toEqual([{ id: ended.id, status: "expired" }, { id: winners[0].id, status: "open" }])
        expect(yield* sessions.findNewestByReference(account.id, "session-race-1")).toEqual(Option.some(winners[0]))
      }))

    it.effect("the database itself holds the session reference rule: a raw second live row is refused, an ended one is not", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const sessions = yield* CheckoutSessionRepo
        const { account } = yield* newAccount()
        yield* (yield* AccountRepo).insert(account)
        const first = yield* newSession(account.id, { status: "completed" })
        yield* sessions.insert(first)
        // Copy the row under new ids, bypassing the repository.
        const copy = (status: string) =>
          Effect.gen(function*() {
            const id = yield* (yield* Ids).make("checkoutSession")
            const order = yield* newOrder(account.id, { subtype: "checkout", merchant_reference: first.merchant_reference })
            yield* Effect.orDie((yield* OrderRepo).insert(order))
            yield* sql`INSERT INTO checkout_sessions
              SELECT ${id}, account_id, livemode, ${order.id}, merchant_reference, ${status}, amount, currency, country,
                capture_method, payment_methods, straight_through, max_payment_attempts, attempts, expires_at,
                transaction_id, next_action, customer, success_url, cancel_url, locale, line_items, collect_address,
                collect_phone, processing_profile, created_at, updated_at, version
              FROM checkout_sessions WHERE id = ${first.id}`
            return id
          })
        for (const status of ["open", "pending_action", "completed"]) {
          const refused = yield* Effect.flip(copy(status))
          expect(refused.reason).toMatchObject({ _tag: "UniqueViolation", constraint: "checkout_sessions_live_reference_key" })
        }
        for (const status of ["expired", "failed", "canceled"]) yield* copy(status)
        const [{ count }] = yield* sql<{ count: number }>`
          SELECT count(*)::int AS count FROM checkout_sessions WHERE account_id = ${account.id}`
        expect(count).toBe(4)
      }))

    it.effect("checkout sessions: one typed column per domain field", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const columns = yield* sql<{ column_name: string; data_type: string; collation_name: string | null }>`
          SELECT column_name, data_type, collation_name FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = 'checkout_sessions'`
        const types = Object.fromEntries(columns.map((c) => [c.column_name, c.data_type]))
        expect(Object.keys(types).sort()).toEqual(Object.keys(CheckoutSession.CheckoutSession.fields).sort())
        expect(types.amount).toBe("bigint")
        expect([types.payment_methods, types.next_action, types.customer, types.line_items])
          .toEqual(["jsonb", "jsonb", "jsonb", "jsonb"])
        for (const t of [types.expires_at, types.created_at, types.updated_at]) expect(t).toBe("timestamp with time zone")
        expect(columns.find((c) => c.column_name === "id")?.collation_name).toBe("C")
      }))

    it.effect("checkout sessions: a session's order must be stored", () =>
      Effect.gen(function*() {
        const sessions = yield* CheckoutSessionRepo
        const { account } = yield* newAccount()
        yield* (yield* AccountRepo).insert(account)
        const orphan = yield* newSession(account.id, { order_id: "ord_doesnotexist000000" as OrderId })
        const refused = yield* Effect.exit(sessions.insert(orphan))
        expect(Exit.isFailure(refused) && Cause.hasDies(refused.cause)).toBe(true)
        expect(yield* sessions.findAny(orphan.id)).toEqual(Option.none())
      }))
  }
})
