/**
 * The console's reads in PostgreSQL (issue 26). Search: one statement per page for every kind,
 * newest first by keyset, restricted to the granted accounts; the filters that would otherwise scan
 * a whole table (last four, amount, channel) are served by migration 0047's indexes. Story: six
 * statements whatever the order's size (the order, its transactions, refunds and payouts, events,
 * deliveries, attempts), assembled by the domain's `ConsoleStory.storyOf`.
 *
 * A search spans accounts, where every index a page can be read from in order is led by the
 * account: `account_id = ANY(…)` (or no account at all) would make PostgreSQL read every matching
 * row and sort them. So the page is taken per granted account (a LATERAL scan of `limit + 1` keys in
 * index order each), those few merged, and only the page's rows then read in full (an order's latest
 * channel and card are looked up for those rows alone). EXPLAINs: docs/decisions.md.
 *
 * Nothing sensitive is selected: of an instrument only its card fields (the struct below drops the
 * BIN and holder), never a transaction's next action (its client secret) nor an endpoint's secret.
 */
import { PgClient } from "@effect/sql-pg"
import { type ConsoleQuery, ConsoleReads, type ConsoleRow, ConsoleSearch, ConsoleStory, Payment, type SearchKind } from "@tender/domain"
import { Effect, Layer, Option, Schema } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import { MinorUnits, Timestamp } from "./Columns.ts"
import { pageOf } from "../Search.ts"
import * as SearchPg from "./SearchPg.ts"

const Row = Schema.Struct({
  kind: Schema.Literals(["orders", "transactions", "sessions", "refunds", "payouts", "transfers", "customers"]),
  id: Schema.String,
  account_id: Schema.String,
  created_at: Timestamp,
  status: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(MinorUnits),
  currency: Schema.NullOr(Schema.String),
  method: Schema.NullOr(Schema.String),
  channel: Schema.NullOr(Schema.String),
  reference: Schema.NullOr(Schema.String),
  last4: Schema.NullOr(Schema.String),
  order_id: Schema.NullOr(Schema.String),
  label: Schema.NullOr(Schema.String)
})

/** A card's last four in an instrument column, as the memory adapter reads it (cards only). */
const last4 = (sql: SqlClient.SqlClient, column: Statement.Fragment) =>
  sql`CASE WHEN ${column}->>'type' = 'card' THEN ${column}->>'last4_digits' END`

/** The table each kind is searched in. */
const TABLES: Readonly<Record<SearchKind, string>> = {
  orders: "orders",
  transactions: "transactions",
  sessions: "checkout_sessions",
  refunds: "refunds",
  payouts: "payouts",
  transfers: "transfers",
  customers: "customers"
}

/** `SELECT <the row's columns> FROM <table> r` for each kind, to read a page's rows in full. */
const fromOf = (sql: SqlClient.SqlClient, kind: SearchKind): Statement.Fragment => {
  switch (kind) {
    case "orders":
      // The row shows the channel of the order's latest transaction and its latest card: one
      // index probe per row of the page (`transactions_order_idx`), never per row scanned. An
      // order's id is COLLATE "C" and a transaction's order_id is not: compared in the column's
      // collation, or the index (in that collation) cannot serve the probe.
      return sql`SELECT 'orders' AS kind, r.id, r.account_id, r.created_at, r.status, r.amount, r.currency,
          r.payment_method AS method, latest.channel, r.merchant_reference AS reference,
          COALESCE(${last4(sql, sql`r.payment_instrument`)}, card.last4) AS last4, r.id AS order_id, NULL AS label
        FROM orders r
        LEFT JOIN LATERAL (SELECT COALESCE(t.channel_id, t.provider) AS channel FROM transactions t
          WHERE t.order_id = r.id COLLATE "default" ORDER BY t.created_at DESC, t.id DESC LIMIT 1) latest ON true
        LEFT JOIN LATERAL (SELECT t.payment_instrument->>'last4_digits' AS last4 FROM transactions t
          WHERE t.order_id = r.id COLLATE "default" AND t.payment_instrument->>'type' = 'card'
            AND t.payment_instrument->>'last4_digits' IS NOT NULL
          ORDER BY t.created_at DESC, t.id DESC LIMIT 1) card ON true`
    case "transactions":
      return sql`SELECT 'transactions' AS kind, r.id, r.account_id, r.created_at, r.status, r.amount, r.currency,
          r.payment_method AS method, COALESCE(r.channel_id, r.provider) AS channel, o.merchant_reference AS reference,
          ${last4(sql, sql`r.payment_instrument`)} AS last4, r.order_id, NULL AS label
        FROM transactions r JOIN orders o ON o.id = r.order_id`
    case "sessions":
      return sql`SELECT 'sessions' AS kind, r.id, r.account_id, r.created_at, r.status, r.amount, r.currency,
          NULL AS method, NULL AS channel, r.merchant_reference AS reference, NULL AS last4, r.order_id, NULL AS label
        FROM checkout_sessions r`
    case "refunds":
      return sql`SELECT 'refunds' AS kind, r.id, r.account_id, r.created_at, r.status, r.amount, r.currency,
          NULL AS method, NULL AS channel, r.refund_reference AS reference, NULL AS last4, r.order_id, NULL AS label
        FROM refunds r`
    case "payouts":
      return sql`SELECT 'payouts' AS kind, r.id, r.account_id, r.created_at, r.status, r.amount, r.currency,
          NULL AS method, NULL AS channel, r.payout_reference AS reference, NULL AS last4, r.order_id, NULL AS label
        FROM payouts r`
    case "transfers":
      return sql`SELECT 'transfers' AS kind, r.id, r.account_id, r.created_at, r.status, r.amount, r.currency,
          r.payment_method AS method, r.channel_id AS channel, NULL AS reference, NULL AS last4, r.order_id, NULL AS label
        FROM transfers r`
    case "customers":
      return sql`SELECT 'customers' AS kind, r.id, r.account_id, r.created_at, NULL AS status, NULL::bigint AS amount,
          NULL AS currency, NULL AS method, NULL AS channel, NULL AS reference, NULL AS last4, NULL AS order_id,
          COALESCE(r.name, r.email) AS label
        FROM customers r`
  }
}

/**
 * The query's filters as conditions on `r`, the kind's table, inside the scan of one granted
 * account `g.id` (validation has refused the filters the kind lacks).
 */
const whereOf = (sql: SqlClient.SqlClient, query: ConsoleQuery): Array<Statement.Fragment> => {
  const { kind } = query
  const where: Array<Statement.Fragment> = []
  // An id of the kind's own prefix is the row's; an order's id finds the rows that belong to it.
  if (query.id !== undefined) {
    where.push(kind !== "orders" && ConsoleSearch.kindOfId(query.id) === "orders" ? sql`r.order_id = ${query.id}` : sql`r.id = ${query.id}`)
  }
  if (query.reference !== undefined) {
    switch (kind) {
      case "transactions":
        // The reference's orders (`orders_reference_idx`), then their transactions (`transactions_order_idx`).
        // Evaluated once per account (it reads only the account `g.id`), not per transaction.
        where.push(sql`r.order_id = ANY(ARRAY(SELECT o.id COLLATE "default" FROM orders o
          WHERE o.account_id = g.id AND o.merchant_reference = ${query.reference}))`)
        break
      case "refunds":
        where.push(sql`r.refund_reference = ${query.reference}`)
        break
      case "payouts":
        where.push(sql`r.payout_reference = ${query.reference}`)
        break
      default:
        where.push(sql`r.merchant_reference = ${query.reference}`)
    }
  }
  if (query.amount !== undefined) where.push(sql`r.amount = ${query.amount}`)
  if (query.currency !== undefined) where.push(sql`r.currency = ${query.currency}`)
  if (query.status !== undefined) where.push(sql`r.status = ${query.status}`)
  if (query.method !== undefined) where.push(sql`r.payment_method = ${query.method}`)
  if (query.channel !== undefined) {
    const channel = query.channel
    const byId = channel.startsWith("ch_")
    if (kind === "transfers") where.push(sql`r.channel_id = ${channel}`)
    else if (kind === "transactions") where.push(byId ? sql`r.channel_id = ${channel}` : sql`r.provider = ${channel}`)
    // An order went through a channel when any of its transactions did: a channel id's few
    // transactions by `transactions_channel_idx`; a provider's (a large share) by probing each order.
    else if (byId) {
      where.push(sql`r.id IN (SELECT t.order_id FROM transactions t WHERE t.channel_id = ${channel} AND t.account_id = g.id)`)
    } else where.push(sql`EXISTS (SELECT 1 FROM transactions t WHERE t.order_id = r.id COLLATE "default" AND t.provider = ${channel})`)
  }
  if (query.last4 !== undefined) {
    // `transactions_last4_idx` (0047): the few transactions with those digits, then their orders. A
    // last four every payment has (the sandbox's 4242 in a test account) reads them all and sorts
    // them: bounded by the account's payments of that card (docs/decisions.md).
    const digits = (t: Statement.Fragment) =>
      sql`(${t}.payment_instrument->>'last4_digits') = ${query.last4} AND ${t}.payment_instrument->>'type' = 'card'`
    where.push(kind === "orders"
      ? sql`r.id IN (SELECT t.order_id FROM transactions t WHERE ${digits(sql`t`)} AND t.account_id = g.id)`
      : digits(sql`r`))
  }
  if (query.created_from !== undefined) where.push(SearchPg.createdFrom(sql, query.created_from))
  if (query.created_to !== undefined) where.push(sql`r.created_at < ${query.created_to}::timestamptz`)
  return where
}

const OrderFacts = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  status: Schema.String,
  amount: MinorUnits,
  currency: Schema.String,
  refunded_amount: MinorUnits,
  payment_method: Schema.String,
  capture_method: Schema.String,
  merchant_reference: Schema.NullOr(Schema.String),
  processing_profile: Schema.NullOr(Schema.String),
  livemode: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
})
/** The instrument's card fields only: decoding drops every other key (BIN, holder, document). */
const CardInstrument = Schema.NullOr(Schema.Struct({
  type: Schema.optional(Schema.String),
  card_brand: Schema.optional(Schema.String),
  last4_digits: Schema.optional(Schema.String),
  card_funding: Schema.optional(Schema.String),
  country_code: Schema.optional(Schema.String)
}))
const TransactionFacts = Schema.Struct({
  id: Schema.String,
  kind: Schema.String,
  status: Schema.String,
  amount: MinorUnits,
  currency: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp,
  parent_transaction_id: Schema.NullOr(Schema.String),
  provider: Schema.String,
  channel_id: Schema.NullOr(Schema.String),
  processing_profile: Schema.NullOr(Schema.String),
  provider_transaction_id: Schema.NullOr(Schema.String),
  decline_code: Schema.NullOr(Schema.String),
  three_ds: Schema.NullOr(Schema.String),
  payment_instrument: CardInstrument,
  // Issue 27: the story explains the recorded routing (null on follow-ups and older rows).
  routing: Payment.Transaction.fields.routing
})
const OutflowFacts = Schema.Struct({
  kind: Schema.Literals(["refund", "payout"]),
  id: Schema.String,
  status: Schema.String,
  amount: MinorUnits,
  currency: Schema.String,
  created_at: Timestamp,
  transaction_id: Schema.NullOr(Schema.String)
})
const EventFacts = Schema.Struct({ id: Schema.String, type: Schema.String, created_at: Timestamp, next_action_type: Schema.NullOr(Schema.String) })
const DeliveryFacts = Schema.Struct({
  id: Schema.String,
  event_id: Schema.String,
  endpoint_id: Schema.String,
  endpoint_url: Schema.NullOr(Schema.String),
  status: Schema.String,
  next_attempt_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
})
const AttemptFacts = Schema.Struct({
  delivery_id: Schema.String,
  attempted_at: Timestamp,
  status_code: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  error: Schema.NullOr(Schema.String),
  response: Schema.NullOr(Schema.String)
})
const Located = Schema.Struct({ account_id: Schema.String, order_id: Schema.NullOr(Schema.String) })

/**
 * One page of a search: the granted accounts, each one's first `limit + 1` matching keys in index
 * order (a LATERAL scan), the newest `limit + 1` of those, and then those rows in full.
 */
export const searchStatement = (sql: SqlClient.SqlClient, query: ConsoleQuery): Statement.Statement<unknown> => {
  const take = query.limit + 1
  const granted = query.accounts === "all"
    ? sql`SELECT a.id FROM accounts a`
    : sql`SELECT a.id FROM accounts a WHERE a.id = ANY(${query.accounts})`
  const conditions = [
    sql`r.account_id = g.id`,
    ...whereOf(sql, query),
    ...(query.cursor === undefined ? [] : [SearchPg.below(sql, query.cursor)])
  ]
  const keys = sql`SELECT k.id FROM (${granted}) g CROSS JOIN LATERAL (
      SELECT r.id, r.created_at FROM ${sql(TABLES[query.kind])} r WHERE ${sql.and(conditions)}
      ORDER BY r.created_at DESC, r.id DESC LIMIT ${take}) k
    ORDER BY k.created_at DESC, k.id DESC LIMIT ${take}`
  return sql`${fromOf(sql, query.kind)} WHERE r.id IN (${keys}) ORDER BY r.created_at DESC, r.id DESC`
}

const decodeAll = <S extends Schema.Decoder<unknown>>(schema: S) => Schema.decodeUnknownEffect(Schema.Array(schema))

/** The table and order column `locate` reads for each kind of id. */
const LOCATE: Readonly<Record<SearchKind | "event", { readonly table: string; readonly order: string }>> = {
  orders: { table: "orders", order: "id" },
  transactions: { table: "transactions", order: "order_id" },
  sessions: { table: "checkout_sessions", order: "order_id" },
  refunds: { table: "refunds", order: "order_id" },
  payouts: { table: "payouts", order: "order_id" },
  transfers: { table: "transfers", order: "order_id" },
  customers: { table: "customers", order: "NULL" },
  event: { table: "events", order: "order_id" }
}

export const layer: Layer.Layer<ConsoleReads, never, PgClient.PgClient> = Layer.effect(
  ConsoleReads,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const decodeRows = decodeAll(Row)

    const story = (orderId: string) =>
      Effect.gen(function*() {
        const [order] = yield* sql`SELECT id, account_id, status, amount, currency, refunded_amount, payment_method,
            capture_method, merchant_reference, processing_profile, livemode, created_at, updated_at
          FROM orders WHERE id = ${orderId}`.pipe(Effect.flatMap(decodeAll(OrderFacts)))
        if (order === undefined) return Option.none()
        const transactions = yield* sql`SELECT id, kind, status, amount, currency, created_at, updated_at,
            parent_transaction_id, provider, channel_id, processing_profile, provider_transaction_id, decline_code,
            three_ds, payment_instrument, routing
          FROM transactions WHERE order_id = ${orderId} ORDER BY created_at, id`.pipe(Effect.flatMap(decodeAll(TransactionFacts)))
        const outflows = yield* sql`SELECT 'refund' AS kind, id, status, amount, currency, created_at, transaction_id
            FROM refunds WHERE order_id = ${orderId}
          UNION ALL SELECT 'payout' AS kind, id, status, amount, currency, created_at, transaction_id
            FROM payouts WHERE order_id = ${orderId}`.pipe(Effect.flatMap(decodeAll(OutflowFacts)))
        const events = yield* sql`SELECT id, type, created_at, data->'next_action'->>'type' AS next_action_type FROM events WHERE order_id = ${orderId}
          ORDER BY created_at, seq`.pipe(Effect.flatMap(decodeAll(EventFacts)))
        // Deliveries outlive a deleted endpoint: its URL is then null.
        const deliveries = yield* sql`SELECT d.id, d.event_id, d.endpoint_id, w.url AS endpoint_url, d.status,
            d.next_attempt_at, d.created_at
          FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id
          WHERE e.order_id = ${orderId}`.pipe(Effect.flatMap(decodeAll(DeliveryFacts)))
        const attempts = yield* sql`SELECT a.delivery_id, a.attempted_at, a.status_code, a.duration_ms, a.error, a.response
          FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN events e ON e.id = d.event_id
          WHERE e.order_id = ${orderId} ORDER BY a.attempted_at, a.seq`.pipe(Effect.flatMap(decodeAll(AttemptFacts)))
        return Option.some(ConsoleStory.storyOf({ order, transactions, outflows, events, deliveries, attempts }))
      })

    const locate = (id: string) =>
      Effect.gen(function*() {
        const kind = ConsoleSearch.kindOfId(id)
        if (kind === undefined) return Option.none()
        const { order, table } = LOCATE[kind]
        const [found] = yield* sql`SELECT account_id, ${sql.literal(order)} AS order_id FROM ${sql(table)} WHERE id = ${id}`.pipe(
          Effect.flatMap(decodeAll(Located))
        )
        return found === undefined ? Option.none() : Option.some({ kind, ...found })
      })

    return ConsoleReads.of({
      search: (query) =>
        searchStatement(sql, query).pipe(
          Effect.flatMap(decodeRows),
          Effect.map((rows): Payment.Page<ConsoleRow> => pageOf(rows, query.limit)),
          Effect.orDie,
          Effect.withSpan("ConsoleReadsPg.search")
        ),
      story: (orderId) => story(orderId).pipe(Effect.orDie, Effect.withSpan("ConsoleReadsPg.story")),
      locate: (id) => locate(id).pipe(Effect.orDie, Effect.withSpan("ConsoleReadsPg.locate"))
    })
  })
)
