/**
 * Checkout sessions in PostgreSQL. The reference rule (contract.md: one open, pending_action or
 * completed session per reference and account) is the partial unique index of migration 0005, so
 * it holds across processes; a session that ends expired, failed or canceled leaves the index and
 * frees its reference. Reads by id are scoped by account except the operator's `findAny`, the
 * use cases' `findByOrder` and `lock`, and the sweeper's `listOverdue`.
 */
import { PgClient } from "@effect/sql-pg"
import { CheckoutSession, CheckoutSessionRepo } from "@tender/domain"
import { Effect, Layer, Option, Schema } from "effect"
import { type SqlClient, SqlSchema } from "effect/sql"
import { duplicateSessionReference, lockOutsideUnitOfWork } from "../Conflicts.ts"
import { VaultCipher } from "../../crypto/VaultCipher.ts"
import { jsonb, MinorUnits, Timestamp } from "./Columns.ts"
import { sealingClientSecrets } from "./SealedClientSecrets.ts"
import * as SearchPg from "./SearchPg.ts"
import * as VersionedUpdate from "./VersionedUpdate.ts"

const StoredSession = Schema.Struct({
  ...CheckoutSession.CheckoutSession.fields,
  amount: MinorUnits,
  expires_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp
})

const Inserted = Schema.Struct({ id: Schema.String })
const Key = Schema.Struct({ accountId: Schema.String, id: Schema.String })
const Reference = Schema.Struct({ accountId: Schema.String, reference: Schema.String })
const Overdue = Schema.Struct({ now: Schema.String, limit: Schema.Int })

export const layer: Layer.Layer<CheckoutSessionRepo, never, SqlClient.SqlClient | PgClient.PgClient | VaultCipher> = Layer.effect(
  CheckoutSessionRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    // The card form's client secret a session shows while pending_action is stored sealed (SealedClientSecrets.ts).
    const CheckoutSessionRow = sealingClientSecrets(yield* VaultCipher, StoredSession)
    const json = jsonb(sql)
    const columns = (row: typeof CheckoutSessionRow.Encoded) => ({
      ...row,
      payment_methods: json(row.payment_methods),
      next_action: json(row.next_action),
      customer: json(row.customer),
      line_items: json(row.line_items)
    })
    const from = sql`SELECT r.* FROM checkout_sessions r`

    const insert = SqlSchema.findAll({
      Request: CheckoutSessionRow,
      Result: Inserted,
      // DO NOTHING rather than a unique-violation error, as for orders: the enclosing transaction
      // stays usable when the use case handles the refusal. A racing insert of the same reference
      // is waited for (commit or rollback) before this one decides. Only this index is an arbiter:
      // a clash on the id or the order is still an error, a defect.
      execute: (row) =>
        sql`INSERT INTO checkout_sessions ${sql.insert(columns(row))}
            ON CONFLICT (account_id, merchant_reference) WHERE status IN ('open', 'pending_action', 'completed')
            DO NOTHING
            RETURNING id`
    })
    const update = VersionedUpdate.make(sql, {
      table: "checkout_sessions",
      what: "CheckoutSession",
      Row: CheckoutSessionRow,
      columns
    })
    const find = SqlSchema.findOneOption({
      Request: Key,
      Result: CheckoutSessionRow,
      execute: ({ accountId, id }) => sql`${from} WHERE r.id = ${id} AND r.account_id = ${accountId}`
    })
    const findAny = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: CheckoutSessionRow,
      execute: (id) => sql`${from} WHERE r.id = ${id}`
    })
    const findByOrder = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: CheckoutSessionRow,
      execute: (orderId) => sql`${from} WHERE r.order_id = ${orderId}`
    })
    const findNewestByReference = SqlSchema.findOneOption({
      Request: Reference,
      Result: CheckoutSessionRow,
      execute: ({ accountId, reference }) =>
        sql`${from} WHERE r.account_id = ${accountId} AND r.merchant_reference = ${reference}
            ORDER BY r.created_at DESC, r.id DESC LIMIT 1`
    })
    const lock = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: CheckoutSessionRow,
      execute: (id) => sql`${from} WHERE r.id = ${id} FOR UPDATE`
    })
    const listOverdue = SqlSchema.findAll({
      Request: Overdue,
      Result: CheckoutSessionRow,
      // Exactly the predicate of `checkout_sessions_overdue_idx`: the sweeper reads only live sessions.
      execute: ({ limit, now }) =>
        sql`${from}
            WHERE r.status IN ('open', 'pending_action') AND r.expires_at <= ${now}::timestamptz
            ORDER BY r.expires_at, r.id LIMIT ${limit}`
    })
    const search = SearchPg.make(sql, {
      from,
      reference: (reference) => sql`r.merchant_reference = ${reference}`,
      Row: CheckoutSessionRow
    })

    const inTransaction = Effect.map(Effect.serviceOption(sql.transactionService), Option.isSome)

    return CheckoutSessionRepo.of({
      insert: (session) =>
        insert(session).pipe(
          Effect.orDie,
          Effect.flatMap((inserted) =>
            inserted.length === 0 ? Effect.fail(duplicateSessionReference(session.merchant_reference)) : Effect.void
          ),
          Effect.withSpan("CheckoutSessionRepoPg.insert")
        ),
      find: (accountId, id) => find({ accountId, id }).pipe(Effect.orDie),
      findAny: (id) => findAny(id).pipe(Effect.orDie),
      findByOrder: (orderId) => findByOrder(orderId).pipe(Effect.orDie),
      findNewestByReference: (accountId, reference) =>
        findNewestByReference({ accountId, reference }).pipe(Effect.orDie),
      lock: (id) =>
        Effect.flatMap(inTransaction, (open) =>
          open ? lock(id).pipe(Effect.orDie) : Effect.die(lockOutsideUnitOfWork("CheckoutSessionRepo"))),
      update,
      search: (accountId, query) => search(accountId, query).pipe(Effect.withSpan("CheckoutSessionRepoPg.search")),
      listOverdue: (now, limit) =>
        listOverdue({ now, limit }).pipe(Effect.orDie, Effect.withSpan("CheckoutSessionRepoPg.listOverdue"))
    })
  })
)
