/** The vault in memory: the same sealed numbers as PostgreSQL stores, never the number itself. */
import { type AccountId, CardVault, type Ids } from "@tender/domain"
import { Clock, Effect, Layer, Option, Result } from "effect"
import type { VaultCipher } from "../../crypto/VaultCipher.ts"
import * as VaultEntries from "../VaultEntries.ts"
import { collectedForTransfer } from "./ClientSecretRepoMemory.ts"
import { MemoryDatabase, type Reader, table } from "./MemoryDatabase.ts"

const DAY_MS = 86_400_000

const cards = table<string, VaultEntries.VaultEntry>("card_vault")

export const layer: Layer.Layer<CardVault, never, MemoryDatabase | VaultCipher | Ids> = Layer.effect(
  CardVault,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const entries = yield* VaultEntries.make
    const entryIn = (r: Reader, accountId: AccountId, token: string) =>
      Option.filter(Option.fromNullishOr(r.get(cards).get(token)), (e) => e.card.account_id === accountId)

    return CardVault.of({
      store: Effect.fnUntraced(function*(card) {
        const entry = yield* entries.create(card)
        yield* db.write((w) => {
          w.mutable(cards).set(entry.card.token, entry)
          return Result.succeed(undefined)
        })
        return entry.card
      }),
      find: (accountId, token) => db.read((r) => Option.map(entryIn(r, accountId, token), (e) => e.card)),
      reveal: (accountId, token) =>
        // One snapshot, as CardVaultPg's one statement: the card and whether a transfer collected it.
        Effect.flatMap(db.read((r) => ({ entry: entryIn(r, accountId, token), collected: collectedForTransfer(r, accountId, token) })), ({ collected, entry }) =>
          Option.isSome(entry)
            ? Effect.gen(function*() {
              const nowMs = yield* Clock.currentTimeMillis
              yield* db.write((w) => {
                const current = w.mutable(cards).get(token)
                // At most once a day, as CardVaultPg does (the policy counts in days).
                if (current !== undefined && Date.parse(current.last_used_at) < nowMs - DAY_MS) {
                  w.mutable(cards).set(token, { ...current, last_used_at: new Date(nowMs).toISOString() })
                }
                return Result.succeed(undefined)
              })
              return Option.some({
                card: entry.value.card,
                number: yield* entries.reveal(accountId, token, entry.value.sealed),
                collectedForTransfer: collected
              })
            })
            : Effect.succeedNone),
      purgeUnused: (usedBefore, options) =>
        db.write((w) => {
          const table = w.mutable(cards)
          const unused = [...table.values()].filter((e) => Date.parse(e.last_used_at) < usedBefore.getTime())
          if (options?.dryRun !== true) for (const e of unused) table.delete(e.card.token)
          return Result.succeed(unused.length)
        })
    })
  })
)
