/**
 * Provider channels in PostgreSQL (table `channels`, migration 0014): the routing record in plain
 * columns, the credentials sealed beside it. Every read is scoped by account.
 */
import { PgClient } from "@effect/sql-pg"
import { type AccountId, Channel, ChannelRepo } from "@tender/domain"
import { Effect, Layer, Option, Schema } from "effect"
import { type SqlClient, SqlSchema } from "effect/sql"
import type { VaultCipher } from "../../crypto/VaultCipher.ts"
import * as ChannelCredentials from "../ChannelCredentials.ts"
import { jsonb, Timestamp } from "./Columns.ts"

const Row = Schema.Struct({
  ...Channel.Channel.fields,
  created_at: Timestamp,
  updated_at: Timestamp
})

const SealedRow = Schema.Struct({
  credentials_iv: Schema.Uint8Array,
  credentials_ciphertext: Schema.Uint8Array,
  credentials_tag: Schema.Uint8Array
})

const Key = Schema.Struct({ accountId: Schema.String, id: Schema.String })

export const layer: Layer.Layer<ChannelRepo, never, SqlClient.SqlClient | PgClient.PgClient | VaultCipher> = Layer.effect(
  ChannelRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const credentials = yield* ChannelCredentials.make
    const json = jsonb(sql)
    const select = sql`SELECT id, account_id, provider, mode, methods, currencies, countries, priority, status,
      created_at, updated_at FROM channels`

    const findOne = SqlSchema.findOneOption({
      Request: Key,
      Result: Row,
      execute: ({ accountId, id }) => sql`${select} WHERE id = ${id} AND account_id = ${accountId}`
    })
    const findAny = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Row,
      execute: (id) => sql`${select} WHERE id = ${id}`
    })
    const findAll = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (accountId) => sql`${select} WHERE account_id = ${accountId} ORDER BY created_at, seq`
    })

    return ChannelRepo.of({
      insert: Effect.fn("ChannelRepoPg.insert")(function*(channel, given) {
        const sealed = yield* credentials.seal(channel.account_id, channel.id, given)
        yield* sql`
          INSERT INTO channels (id, account_id, provider, mode, methods, currencies, countries, priority, status,
            credentials_iv, credentials_ciphertext, credentials_tag, created_at, updated_at)
          VALUES (${channel.id}, ${channel.account_id}, ${channel.provider}, ${channel.mode}, ${json(channel.methods)},
            ${json(channel.currencies)}, ${json(channel.countries)}, ${channel.priority}, ${channel.status},
            ${sealed.iv}, ${sealed.ciphertext}, ${sealed.tag}, ${channel.created_at}, ${channel.updated_at})`.pipe(Effect.orDie)
      }),
      get: (accountId, id) => findOne({ accountId, id }).pipe(Effect.orDie),
      getAny: (id) => findAny(id).pipe(Effect.orDie),
      listByAccount: (accountId) => findAll(accountId).pipe(Effect.orDie),
      // The fence is the row as `previous` read it (channels carry no version): its status and updated_at.
      update: (previous, next) =>
        sql<{ id: string }>`
          UPDATE channels SET methods = ${json(next.methods)}, currencies = ${json(next.currencies)},
            countries = ${json(next.countries)}, priority = ${next.priority}, status = ${next.status},
            updated_at = ${next.updated_at}
          WHERE id = ${previous.id} AND account_id = ${previous.account_id} AND status = ${previous.status}
            AND updated_at = ${previous.updated_at}
          RETURNING id`.pipe(Effect.map((rows) => rows.length === 1), Effect.orDie)
    })
  })
)

export const credentialsLayer: Layer.Layer<ChannelCredentials.ChannelCredentials, never, SqlClient.SqlClient | PgClient.PgClient | VaultCipher> =
  Layer.effect(
    ChannelCredentials.ChannelCredentials,
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const credentials = yield* ChannelCredentials.make
      const findSealed = SqlSchema.findOneOption({
        Request: Key,
        Result: SealedRow,
        execute: ({ accountId, id }) =>
          sql`SELECT credentials_iv, credentials_ciphertext, credentials_tag
              FROM channels WHERE id = ${id} AND account_id = ${accountId}`
      })
      return ChannelCredentials.ChannelCredentials.of({
        open: (accountId: AccountId, id) =>
          findSealed({ accountId, id }).pipe(
            Effect.orDie,
            Effect.flatMap(Option.match({
              onNone: () => Effect.succeedNone,
              onSome: (row) =>
                Effect.asSome(credentials.open(accountId, id, {
                  iv: row.credentials_iv,
                  ciphertext: row.credentials_ciphertext,
                  tag: row.credentials_tag
                }))
            }))
          )
      })
    })
  )
