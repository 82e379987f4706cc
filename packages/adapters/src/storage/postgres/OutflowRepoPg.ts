/**
 * Refunds and payouts in PostgreSQL (tables of migration 0010). The per-account reference rule is
 * the partial unique index `<table>_reference_key`, so it holds across processes; the insert does
 * nothing on a clash rather than raise, so the enclosing transaction stays usable (as for orders).
 * One store shape serves both records.
 */
import { PgClient } from "@effect/sql-pg"
import { duplicateOutflowReference, MoneyOut, type OutflowStore, PayoutRepo, RefundRepo } from "@tender/domain"
import { Effect, Layer, Schema } from "effect"
import { type SqlClient, SqlSchema } from "effect/sql"
import { jsonb, MinorUnits, Timestamp } from "./Columns.ts"
import * as VersionedUpdate from "./VersionedUpdate.ts"

const stamped = { amount: MinorUnits, created_at: Timestamp, updated_at: Timestamp }
export const RefundRow = Schema.Struct({ ...MoneyOut.Refund.fields, ...stamped })
export const PayoutRow = Schema.Struct({ ...MoneyOut.Payout.fields, ...stamped })

const Key = Schema.Struct({ accountId: Schema.String, id: Schema.String })
const Reference = Schema.Struct({ accountId: Schema.String, reference: Schema.String })

interface Row {
  readonly id: string
  readonly account_id: string
  readonly version: number
}

const make = <A extends Row & MoneyOut.Refund | Row & MoneyOut.Payout, I extends Row>(options: {
  readonly table: "refunds" | "payouts"
  readonly what: "Refund" | "Payout"
  readonly field: "refund_reference" | "payout_reference"
  readonly Row: Schema.Codec<A, I>
  readonly referenceOf: (record: A) => string | null
}) =>
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const json = jsonb(sql)
    const columns = (row: I): Record<string, unknown> => {
      const instrument = (row as { readonly payment_instrument?: unknown }).payment_instrument
      const fields = { ...row } as Record<string, unknown>
      return instrument === undefined ? fields : { ...fields, payment_instrument: json(instrument) }
    }
    const table = sql(options.table)
    const from = sql`SELECT r.* FROM ${table} r`
    const column = sql(options.field)

    const insert = SqlSchema.findAll({
      Request: options.Row,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (row) =>
        sql`INSERT INTO ${table} ${sql.insert(columns(row))}
            ON CONFLICT (account_id, ${column}) WHERE ${column} IS NOT NULL DO NOTHING
            RETURNING id`
    })
    const update = VersionedUpdate.make(sql, { table: options.table, what: options.what, Row: options.Row, columns })
    const find = SqlSchema.findOneOption({
      Request: Key,
      Result: options.Row,
      execute: ({ accountId, id }) => sql`${from} WHERE r.id = ${id} AND r.account_id = ${accountId}`
    })
    const findAny = SqlSchema.findOneOption({ Request: Schema.String, Result: options.Row, execute: (id) => sql`${from} WHERE r.id = ${id}` })
    const findByReference = SqlSchema.findOneOption({
      Request: Reference,
      Result: options.Row,
      execute: ({ accountId, reference }) => sql`${from} WHERE r.account_id = ${accountId} AND r.${column} = ${reference}`
    })
    const findByTransaction = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: options.Row,
      execute: (id) => sql`${from} WHERE r.transaction_id = ${id}`
    })

    const store: OutflowStore<A> = {
      insert: (record) =>
        insert(record).pipe(
          Effect.orDie,
          Effect.flatMap((inserted) => {
            const reference = options.referenceOf(record)
            return inserted.length === 0 && reference !== null ? Effect.fail(duplicateOutflowReference(options.field, reference)) : Effect.void
          }),
          Effect.withSpan(`${options.what}RepoPg.insert`)
        ),
      find: (accountId, id) => find({ accountId, id }).pipe(Effect.orDie),
      findAny: (id) => findAny(id).pipe(Effect.orDie),
      findByReference: (accountId, reference) => findByReference({ accountId, reference }).pipe(Effect.orDie),
      findByTransaction: (id) => findByTransaction(id).pipe(Effect.orDie),
      update
    }
    return store
  })

export const refundLayer: Layer.Layer<RefundRepo, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  RefundRepo,
  make({ table: "refunds", what: "Refund", field: "refund_reference", Row: RefundRow, referenceOf: (r) => r.refund_reference })
)

const DayTotal = Schema.Struct({ total: MinorUnits })

export const payoutLayer: Layer.Layer<PayoutRepo, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  PayoutRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const store = yield* make({ table: "payouts", what: "Payout", field: "payout_reference", Row: PayoutRow, referenceOf: (p) => p.payout_reference })
    // Index payouts_day_idx (migration 0029) serves the sum.
    const dayTotal = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, currency: Schema.String, from: Schema.String, to: Schema.String }),
      Result: DayTotal,
      execute: ({ accountId, currency, from, to }) =>
        sql`SELECT COALESCE(SUM(amount), 0)::bigint AS total FROM payouts
            WHERE account_id = ${accountId} AND currency = ${currency} AND status <> 'failed'
              AND created_at >= ${from}::timestamptz AND created_at < ${to}::timestamptz`
    })
    return PayoutRepo.of({
      ...store,
      lockedDayTotal: (accountId, currency, from, to) =>
        // Held until the unit of work commits: a second payout of the account waits here, then sees this one's row.
        sql`SELECT pg_advisory_xact_lock(hashtext('tender_payouts_day'), hashtext(${`${accountId}:${currency}`}))`.pipe(
          Effect.andThen(dayTotal({ accountId, currency, from, to })),
          Effect.map((row) => row.total),
          Effect.orDie,
          Effect.withSpan("PayoutRepoPg.lockedDayTotal")
        )
    })
  })
)
