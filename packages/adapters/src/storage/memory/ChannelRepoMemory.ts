/** Provider channels in memory: the same records and sealed credentials as PostgreSQL keeps. */
import { type AccountId, type Channel, ChannelRepo } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import type { Sealed, VaultCipher } from "../../crypto/VaultCipher.ts"
import * as ChannelCredentials from "../ChannelCredentials.ts"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"

interface Row {
  readonly channel: Channel.Channel
  readonly sealed: Sealed
}

const channels = table<string, Row>("channels")

const rowOf = (db: MemoryDatabase["Service"], accountId: AccountId, id: string) =>
  db.read((r) => Option.filter(Option.fromNullishOr(r.get(channels).get(id)), (row) => row.channel.account_id === accountId))

export const layer: Layer.Layer<ChannelRepo, never, MemoryDatabase | VaultCipher> = Layer.effect(
  ChannelRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const credentials = yield* ChannelCredentials.make
    return ChannelRepo.of({
      insert: Effect.fnUntraced(function*(channel, given) {
        const sealed = yield* credentials.seal(channel.account_id, channel.id, given)
        yield* db.write((w) => {
          // Ids are random, so a clash is a bug upstream: a defect, as the primary key makes it in PostgreSQL.
          if (w.get(channels).has(channel.id)) throw new Error("ChannelRepoMemory: duplicate channel id")
          w.mutable(channels).set(channel.id, { channel, sealed })
          return Result.succeed(undefined)
        })
      }),
      get: (accountId, id) => Effect.map(rowOf(db, accountId, id), Option.map((row) => row.channel)),
      getAny: (id) => db.read((r) => Option.map(Option.fromNullishOr(r.get(channels).get(id)), (row) => row.channel)),
      // By creation time; the sort is stable and a Map iterates in insertion order, which breaks ties as `seq` does in PostgreSQL.
      listByAccount: (accountId) =>
        db.read((r) =>
          [...r.get(channels).values()]
            .filter((row) => row.channel.account_id === accountId)
            .map((row) => row.channel)
            .sort((a, b) => a.created_at.localeCompare(b.created_at))
        ),
      update: (previous, next) =>
        db.write((w) => {
          const row = w.get(channels).get(previous.id)
          // The fence, as in PostgreSQL: the row as `previous` read it (its status and updated_at).
          if (
            row === undefined || row.channel.account_id !== previous.account_id || row.channel.status !== previous.status ||
            row.channel.updated_at !== previous.updated_at
          ) {
            return Result.succeed(false)
          }
          w.mutable(channels).set(previous.id, { ...row, channel: { ...next, id: previous.id, account_id: previous.account_id } })
          return Result.succeed(true)
        })
    })
  })
)

export const credentialsLayer: Layer.Layer<ChannelCredentials.ChannelCredentials, never, MemoryDatabase | VaultCipher> = Layer.effect(
  ChannelCredentials.ChannelCredentials,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const credentials = yield* ChannelCredentials.make
    return ChannelCredentials.ChannelCredentials.of({
      open: (accountId, id) =>
        Effect.flatMap(rowOf(db, accountId, id), (row) =>
          Option.isSome(row)
            ? Effect.asSome(credentials.open(accountId, id, row.value.sealed))
            : Effect.succeedNone)
    })
  })
)
