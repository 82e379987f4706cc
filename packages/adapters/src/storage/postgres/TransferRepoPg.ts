/**
 * Transfers in PostgreSQL (migration 0010's `transfers`): one per order, version-checked updates,
 * reads by id scoped by account except the operator's `findAny` and the use cases' `findByOrder`.
 */
import { PgClient } from "@effect/sql-pg"
import { MoneyOut, TransferRepo } from "@tender/domain"
import { Effect, Layer, Schema } from "effect"
import { type SqlClient, SqlSchema } from "effect/sql"
import { VaultCipher } from "../../crypto/VaultCipher.ts"
import { jsonb, MinorUnits, Timestamp } from "./Columns.ts"
import { sealingClientSecrets } from "./SealedClientSecrets.ts"
import * as VersionedUpdate from "./VersionedUpdate.ts"

const StoredTransfer = Schema.Struct({
  ...MoneyOut.Transfer.fields,
  amount: MinorUnits,
  created_at: Timestamp,
  updated_at: Timestamp
})

const Key = Schema.Struct({ accountId: Schema.String, id: Schema.String })

export const layer: Layer.Layer<TransferRepo, never, SqlClient.SqlClient | PgClient.PgClient | VaultCipher> = Layer.effect(
  TransferRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    // A card transfer's client secret (next_action) is stored sealed (SealedClientSecrets.ts).
    const TransferRow = sealingClientSecrets(yield* VaultCipher, StoredTransfer)
    const json = jsonb(sql)
    const columns = (row: typeof TransferRow.Encoded) => ({
      ...row,
      payment_instrument: json(row.payment_instrument),
      next_action: json(row.next_action)
    })
    const from = sql`SELECT r.* FROM transfers r`

    const encode = Schema.encodeEffect(TransferRow)
    const insert = (transfer: MoneyOut.Transfer) =>
      Effect.flatMap(encode(transfer), (row) => sql`INSERT INTO transfers ${sql.insert(columns(row))}`)
    const update = VersionedUpdate.make(sql, { table: "transfers", what: "Transfer", Row: TransferRow, columns })
    const find = SqlSchema.findOneOption({
      Request: Key,
      Result: TransferRow,
      execute: ({ accountId, id }) => sql`${from} WHERE r.id = ${id} AND r.account_id = ${accountId}`
    })
    const findAny = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: TransferRow,
      execute: (id) => sql`${from} WHERE r.id = ${id}`
    })
    const findByOrder = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: TransferRow,
      execute: (orderId) => sql`${from} WHERE r.order_id = ${orderId}`
    })

    return TransferRepo.of({
      insert: (transfer) => insert(transfer).pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("TransferRepoPg.insert")),
      find: (accountId, id) => find({ accountId, id }).pipe(Effect.orDie),
      findAny: (id) => findAny(id).pipe(Effect.orDie),
      findByOrder: (orderId) => findByOrder(orderId).pipe(Effect.orDie),
      update
    })
  })
)
