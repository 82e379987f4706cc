/** The card vault in PostgreSQL: sealed numbers, non-sensitive columns, every read scoped by account. */
import { type AccountId, Card, CardVault, type Ids, type VaultedCard } from "@tender/domain"
import { Clock, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { VaultCipher } from "../../crypto/VaultCipher.ts"
import * as VaultEntries from "../VaultEntries.ts"
import * as ClientSecretRepoPg from "./ClientSecretRepoPg.ts"
import { Timestamp } from "./Columns.ts"

// The domain declares brand and funding as types only; these lists mirror Card.ts.

const CardRow = Schema.Struct({
  token: Schema.String,
  account_id: Schema.String,
  brand: Card.CardBrand,
  last4: Schema.String,
  bin: Schema.String,
  exp_month: Schema.Int,
  exp_year: Schema.Int,
  funding: Card.CardFunding,
  holder_name: Schema.NullOr(Schema.String),
  created_at: Timestamp
})

const SealedRow = Schema.Struct({
  number_iv: Schema.Uint8Array,
  number_ciphertext: Schema.Uint8Array,
  number_tag: Schema.Uint8Array
})

const Key = Schema.Struct({ accountId: Schema.String, token: Schema.String })

export const layer: Layer.Layer<CardVault, never, SqlClient.SqlClient | VaultCipher | Ids> = Layer.effect(
  CardVault,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const entries = yield* VaultEntries.make

    const findCard = SqlSchema.findOneOption({
      Request: Key,
      Result: CardRow,
      execute: ({ accountId, token }) =>
        sql`SELECT token, account_id, brand, last4, bin, exp_month, exp_year, funding, holder_name, created_at
            FROM card_vault WHERE token = ${token} AND account_id = ${accountId}`
    })
    // Reading the number for a call is the card's use: its last use moves to now in the same
    // statement, at most once a day. The retention policy counts in days, and writing the row on
    // every charge would add a commit's fsync to each one and serialise charges of one card on its
    // row lock.
    // The card's columns come with its sealed number, and whether a transfer collected it (what a
    // payment must know of it): one statement per call.
    const useSealed = SqlSchema.findOneOption({
      Request: Schema.Struct({ accountId: Schema.String, token: Schema.String, now: Schema.String }),
      Result: Schema.Struct({ ...CardRow.fields, ...SealedRow.fields, collected_for_transfer: Schema.Boolean }),
      execute: ({ accountId, now, token }) =>
        sql`WITH touched AS (
              UPDATE card_vault SET last_used_at = ${now}::timestamptz
              WHERE token = ${token} AND account_id = ${accountId}
                AND last_used_at < ${now}::timestamptz - interval '1 day'
            )
            SELECT token, account_id, brand, last4, bin, exp_month, exp_year, funding, holder_name, created_at,
              number_iv, number_ciphertext, number_tag,
              ${ClientSecretRepoPg.collectedForTransfer(sql, accountId, token)} AS collected_for_transfer
            FROM card_vault WHERE token = ${token} AND account_id = ${accountId}`
    })

    return CardVault.of({
      store: Effect.fn("CardVaultPg.store")(function*(input) {
        const { card, sealed } = yield* entries.create(input)
        yield* sql`
          INSERT INTO card_vault (token, account_id, number_iv, number_ciphertext, number_tag, brand, last4, bin,
            exp_month, exp_year, funding, holder_name, created_at, last_used_at)
          VALUES (${card.token}, ${card.account_id}, ${sealed.iv}, ${sealed.ciphertext}, ${sealed.tag}, ${card.brand},
            ${card.last4}, ${card.bin}, ${card.exp_month}, ${card.exp_year}, ${card.funding}, ${card.holder_name},
            ${card.created_at}, ${card.created_at})`.pipe(Effect.orDie)
        return card
      }),
      find: (accountId, token) =>
        findCard({ accountId, token }).pipe(
          Effect.map(Option.map((row): VaultedCard => ({ ...row, account_id: row.account_id as AccountId }))),
          Effect.orDie
        ),
      reveal: (accountId, token) =>
        Clock.currentTimeMillis.pipe(
          Effect.flatMap((now) => useSealed({ accountId, token, now: new Date(now).toISOString() })),
          Effect.orDie,
          Effect.flatMap(Option.match({
            onNone: () => Effect.succeedNone,
            onSome: ({ collected_for_transfer, number_ciphertext, number_iv, number_tag, ...card }) =>
              Effect.map(
                entries.reveal(accountId, token, { iv: number_iv, ciphertext: number_ciphertext, tag: number_tag }),
                (number) =>
                  Option.some({
                    card: { ...card, account_id: card.account_id as AccountId },
                    number,
                    collectedForTransfer: collected_for_transfer
                  })
              )
          }))
        ),
      purgeUnused: (usedBefore, options) =>
        (options?.dryRun === true
          ? sql<{ readonly n: string }>`SELECT count(*) AS n FROM card_vault WHERE last_used_at < ${usedBefore.toISOString()}::timestamptz`
          : sql<{ readonly n: string }>`WITH purged AS (
              DELETE FROM card_vault WHERE last_used_at < ${usedBefore.toISOString()}::timestamptz RETURNING 1
            ) SELECT count(*) AS n FROM purged`).pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0)), Effect.orDie)
    })
  })
)
