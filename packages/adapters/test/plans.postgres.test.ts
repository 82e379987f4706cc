/**
 * The hot queries keep to their indexes on a grown table (issue 13, growth): 50,000 orders with
 * their transactions and events over four accounts, ANALYZEd, then each repository call runs as
 * the product makes it while a statement transformer captures exactly what the repository sends;
 * each captured statement is then run again under EXPLAIN (ANALYZE, FORMAT JSON). A plan passes
 * when no orders/transactions/events scan is sequential, no Sort takes more than a page's worth of
 * rows, and no scan of those tables throws away more rows than it keeps (plus a little): an index
 * that only gives the order while the filter is applied row by row would read the account's
 * whole history to find a rare status.
 */
import { expect, layer } from "@effect/vitest"
import { AccountRepo, type ConsoleQuery, ConsoleReads, EventRepo, OrderRepo, Pruning, TransactionRepo } from "@tender/domain"
import { Effect, Layer } from "effect"
import { SqlClient, Statement } from "effect/sql"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { postgresStorage } from "../src/Infrastructure.ts"
import * as Seed from "../src/storage/postgres/Seed.ts"
import { sharedConfig } from "./PgTestDatabase.ts"
import { newAccount } from "../src/testing/StorageContract.ts"

const storage = Layer.unwrap(Effect.map(sharedConfig, postgresStorage)).pipe(
  Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer))
)

const ORDERS = 50_000
const BIG = new Set(["orders", "transactions", "events", "webhook_deliveries", "webhook_attempts", "replay_signatures"])
/** A page is at most 100 rows (the API's cap); a Sort of more than this is sorting history. */
const PAGE = 101
/** Rows a scan may discard beyond those it keeps: a few index pages' worth of slack. */
const SLACK = 100

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly "Actual Rows": number
  readonly "Actual Loops": number
  readonly "Rows Removed by Filter"?: number
  readonly "Rows Removed by Index Recheck"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}

const nodes = (node: PlanNode): ReadonlyArray<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodes)]

/**
 * What is wrong with a plan, one line per problem; empty when it keeps to its indexes. `page`: the
 * rows a Sort may take (the console's search merges one page per granted account).
 */
const problems = (plan: PlanNode, page = PAGE): ReadonlyArray<string> =>
  nodes(plan).flatMap((node) => {
    const table = node["Relation Name"]
    const loops = Math.max(1, node["Actual Loops"])
    const kept = node["Actual Rows"] * loops
    const dropped = ((node["Rows Removed by Filter"] ?? 0) + (node["Rows Removed by Index Recheck"] ?? 0)) * loops
    const sorted = (node.Plans ?? []).reduce((n, child) => n + child["Actual Rows"] * Math.max(1, child["Actual Loops"]), 0)
    return [
      ...(node["Node Type"] === "Seq Scan" && table !== undefined && BIG.has(table) ? [`Seq Scan on ${table}`] : []),
      ...(node["Node Type"] === "Sort" && sorted > page ? [`Sort of ${sorted} rows`] : []),
      ...(table !== undefined && BIG.has(table) && dropped > kept + SLACK
        ? [`${node["Node Type"]} on ${table}${node["Index Name"] ? ` (${node["Index Name"]})` : ""} kept ${kept} rows, discarded ${dropped}`]
        : [])
    ]
  })

/**
 * Runs `call` capturing the statements it sends, then each under EXPLAIN ANALYZE: the plans, with
 * the statement text to say which one failed.
 */
const plansOf = <A, E, R>(call: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sent: Array<readonly [string, ReadonlyArray<unknown>]> = []
    yield* call.pipe(Effect.provideService(Statement.CurrentTransformer, (statement) => {
      sent.push(statement.compile())
      return Effect.succeed(statement)
    }))
    expect(sent.length).toBeGreaterThan(0)
    return yield* Effect.forEach(sent, ([text, params]) =>
      sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params).pipe(
        Effect.map((rows) => ({ text: text.replace(/\s+/g, " ").trim(), plan: rows[0]["QUERY PLAN"][0].Plan }))
      ))
  })

layer(storage, { excludeTestServices: true, timeout: "3 minutes" })("PostgreSQL plans on a grown table", (it) => {
  it.effect("every hot query reads through an index: no sequential scan, no sort of history, no row-by-row filtering", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const accounts = yield* AccountRepo
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const events = yield* EventRepo

      const ids: Array<string> = []
      for (let i = 0; i < 4; i++) {
        const { account } = yield* newAccount()
        yield* accounts.insert(account)
        ids.push(account.id)
      }
      const tag = `plans${Date.now().toString(36)}`
      const now = new Date()
      yield* Seed.seed(sql, { accounts: ids, orders: ORDERS, tag, before: now.toISOString(), deliveries: true })

      // A settlement backlog (issue 21): 5,000 captures awaiting settlement, recent as in a live
      // system (the newest orders'), each put off to its own second from a day on, so that the poll
      // of a slice of them must find it by when each is due.
      const putOff = now.getTime() + 86_400_000
      yield* sql`
        INSERT INTO transactions (id, order_id, account_id, livemode, kind, status, amount, currency, payment_method,
          processing_profile, provider, provider_transaction_id, settlement_check_at, created_at, updated_at, version)
        SELECT 'txn_' || md5('s' || o.id), o.id, o.account_id, false, 'capture', 'processing', o.amount, o.currency, 'card',
          o.processing_profile, 'sandbox', 'sbx_' || md5('s' || o.id), ${new Date(putOff).toISOString()}::timestamptz + o.n * interval '1 second',
          o.created_at, o.created_at, 1
        FROM (SELECT *, row_number() OVER (ORDER BY id) AS n FROM (SELECT * FROM orders
          WHERE merchant_reference LIKE ${`seed-${tag}-%`} AND status = 'succeeded' ORDER BY created_at DESC LIMIT 5000) newest) o`
      yield* sql`ANALYZE transactions`

      // The replay cache of a busy hour (issue 24): 20,000 signatures, a tenth of them expired.
      yield* sql`
        INSERT INTO replay_signatures (account_id, digest, kind, request_id, expires_at)
        SELECT ${ids[0]}, md5('r' || g), 'request', 'req_' || g, now() + (g - 2000) * interval '1 second'
        FROM generate_series(1, 20000) g`
      yield* sql`ANALYZE replay_signatures`

      const [account] = ids
      // A seeded order of the first account (row g goes to account 1 + g mod 4).
      const [sample] = yield* sql<{ id: string; merchant_reference: string }>`
        SELECT id, merchant_reference FROM orders WHERE merchant_reference = ${`seed-${tag}-${ORDERS / 2}`}`
      const monthAgo = new Date(now.getTime() - 30 * 86_400_000).toISOString()
      const firstPage = yield* orders.search(account, { limit: 20 })
      const last = firstPage.data[firstPage.data.length - 1]
      const cursor = { created_at: last.created_at, id: last.id }
      // Retention (issue 24): a batch from the oldest event on, and one resuming after a cursor
      // (halfway through the events past the month), as a round's batches do.
      const pruning = yield* Pruning
      const [middle] = yield* sql<{ created_at: string; id: string }>`
        SELECT created_at::text AS created_at, id FROM events WHERE created_at < ${monthAgo}::timestamptz
        ORDER BY created_at, id OFFSET ${ORDERS / 2} LIMIT 1`

      // The event feed (issue 25) of a listener well behind: from the middle of the account's history.
      const [feedMiddle] = yield* sql<{ txid: string; seq: string }>`
        SELECT txid::text AS txid, seq::text AS seq FROM events WHERE account_id = ${account}
        ORDER BY txid, seq OFFSET ${ORDERS / 8} LIMIT 1`
      const feedFrom = { tx: BigInt(feedMiddle.txid), seq: BigInt(feedMiddle.seq) }
      const head = (yield* events.feed({ account_id: account, after: undefined, types: undefined, limit: 1 })).next
      // The operator console (issue 26): its search over one account, several, or all of them. Not
      // here: a last four every payment has (all of these are 4242), which reads the account's
      // payments of that card and sorts them (docs/decisions.md, "Operator console: search").
      const reads = yield* ConsoleReads
      const console = (query: Partial<ConsoleQuery>) => reads.search({ kind: "orders", accounts: [account], limit: 25, ...query })
      const [amountOf] = yield* sql<{ amount: string; currency: string }>`SELECT amount::text, currency FROM orders WHERE id = ${sample.id}`

      const calls: ReadonlyArray<readonly [string, Effect.Effect<unknown>]> = [
        ["order by id", orders.find(account, sample.id)],
        ["order by reference", orders.findByReference(account, sample.merchant_reference)],
        ["orders by reference", orders.listByReference(account, sample.merchant_reference, 10)],
        ["orders of a page", orders.findMany(account, firstPage.data.map((o) => o.id))],
        ["order lock", sql.withTransaction(orders.lock(sample.id)).pipe(Effect.orDie)],
        ["order search", orders.search(account, { limit: 20 })],
        ["order search, next page", orders.search(account, { limit: 20, cursor })],
        ["order search, settled", orders.search(account, { limit: 20, status: ["succeeded"], created_from: monthAgo })],
        ["order search, in flight", orders.search(account, { limit: 20, status: ["processing", "pending"] })],
        ["order search, one status", orders.search(account, { limit: 20, status: ["authorized"], cursor })],
        ["order search, profile", orders.search(account, { limit: 20, processing_profile: "eu" })],
        ["order search, reference", orders.search(account, { limit: 20, merchant_reference: sample.merchant_reference })],
        ["transactions of an order", transactions.listByOrder(sample.id)],
        ["transactions of a page", transactions.listByOrders(firstPage.data.map((o) => o.id))],
        ["transaction search", transactions.search(account, { limit: 20 })],
        ["transaction search, in flight", transactions.search(account, { limit: 20, status: ["processing", "pending"] })],
        ["transaction search, declined", transactions.search(account, { limit: 20, status: ["failed"], created_from: monthAgo })],
        ["transaction search, profile", transactions.search(account, { limit: 20, processing_profile: "eu" })],
        ["transaction search, reference", transactions.search(account, { limit: 20, merchant_reference: sample.merchant_reference })],
        ["settlement poll", transactions.listSettling(now.toISOString(), 100)],
        ["settlement poll, a slice of the backlog due", transactions.listSettling(new Date(putOff + 150_000).toISOString(), 100)],
        ["expired windows poll", transactions.listExpiredWindows(now.toISOString(), 100)],
        ["retry windows poll", orders.listRetryLapsed(now.toISOString(), 100)],
        ["pending calls poll", transactions.listPendingCalls(now.toISOString(), 100)],
        ["events of an order", events.listByOrder(sample.id)],
        ["event search", events.search({ account_id: account, limit: 20 })],
        ["event search, type", events.search({ account_id: account, type: "payment.canceled", limit: 20 })],
        ["event search, every account", events.search({ limit: 20 })],
        ["event search, every account, since", events.search({ created_from: monthAgo, limit: 20 })],
        ["event feed, behind", events.feed({ account_id: account, after: feedFrom, types: undefined, limit: 100 })],
        ["event feed, at the head, by type", events.feed({ account_id: account, after: head, types: ["payment.canceled"], limit: 100 })],
        ["retention batch", pruning.pruneEvents({ before: monthAgo, limit: 1000 })],
        ["retention batch, after a cursor", pruning.pruneEvents({ before: monthAgo, limit: 1000, after: middle })],
        ["replay cache expiry batch", pruning.pruneExpired(1000)],
        ["console search", console({})],
        ["console search, next page", console({ cursor })],
        ["console search, every account", console({ accounts: "all" })],
        ["console search, two accounts, status", console({ accounts: ids.slice(0, 2), status: "failed" })],
        ["console search, reference, every account", console({ accounts: "all", reference: sample.merchant_reference })],
        ["console search, amount, every account", console({ accounts: "all", amount: Number(amountOf.amount), currency: amountOf.currency })],
        ["console search, last four nobody has", console({ accounts: "all", last4: "0002" })],
        ["console search, provider", console({ channel: "sandbox" })],
        ["console search, channel id", console({ accounts: "all", channel: "ch_nosuchchannel0" })],
        ["console search, transactions, reference", console({ kind: "transactions", reference: sample.merchant_reference })],
        ["console search, transactions, last four", console({ kind: "transactions", accounts: "all", last4: "0002" })],
        ["console search, refunds", console({ kind: "refunds", accounts: "all" })],
        ["console story", reads.story(sample.id)],
        ["console locate", reads.locate(sample.id)]
      ]
      const failures: Array<string> = []
      for (const [name, call] of calls) {
        for (const { plan, text } of yield* plansOf(call)) {
          const found = problems(plan, name.startsWith("console search") ? ids.length * PAGE : PAGE)
          if (found.length > 0) failures.push(`${name}: ${found.join("; ")}\n    ${text.slice(0, 300)}`)
        }
      }
      expect(failures).toEqual([])
    }))
})
