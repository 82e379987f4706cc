/**
 * The provider journal's contract, run against the memory and the PostgreSQL adapters: values come
 * back as written, each kind keeps its first or its last write (WRITES), and scopes and kinds never
 * see each other's entries. PostgreSQL also: writes commit outside Tender's unit of work, racing
 * first writes from separate connections agree on one value, and retention has its column and index.
 */
import type { Vitest } from "@effect/vitest"
import { expect, layer } from "@effect/vitest"
import { UnitOfWork } from "@tender/domain"
import { Effect, Exit, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { KINDS, ProviderJournal, WRITES } from "../src/providers/shared/ProviderJournal.ts"
import * as ProviderJournalMemory from "../src/providers/shared/ProviderJournalMemory.ts"
import * as ProviderJournalPg from "../src/providers/shared/ProviderJournalPg.ts"
import * as PgDatabase from "../src/storage/postgres/PgDatabase.ts"
import * as UnitOfWorkPg from "../src/storage/postgres/UnitOfWorkPg.ts"
import { sharedConfig } from "./PgTestDatabase.ts"

/** Fresh per run: the PostgreSQL journal is shared by every run on the database. */
const unique = (name: string) => `${name}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2)}`

const journalContract = (it: Vitest.MethodsNonLive<ProviderJournal>) => {
  it.effect("recalls nothing for an unwritten key, and each JSON value as it was written", () =>
    Effect.gen(function*() {
      const journal = yield* ProviderJournal
      const scope = unique("scope")
      expect(yield* journal.recall(scope, "sent", "never")).toEqual(Option.none())
      const values = { sent: { operation: "capture", multicapture: true }, fenced: true, challenge_return: "Ab02b4c0!BQABAgA=", modification_outcome: false }
      for (const kind of KINDS) yield* journal.remember(scope, kind, "k", values[kind])
      for (const kind of KINDS) expect(yield* journal.recall(scope, kind, "k")).toEqual(Option.some(values[kind]))
    }))

  it.effect("a second write: first-write kinds keep the first value, last-write kinds take the new one", () =>
    Effect.gen(function*() {
      const journal = yield* ProviderJournal
      const scope = unique("writes")
      expect(WRITES).toEqual({ sent: "first", fenced: "first", challenge_return: "last", modification_outcome: "last" })
      for (const kind of KINDS) {
        yield* journal.remember(scope, kind, "k", { n: 1 })
        yield* journal.remember(scope, kind, "k", { n: 2 })
        expect(yield* journal.recall(scope, kind, "k"), kind).toEqual(Option.some({ n: WRITES[kind] === "first" ? 1 : 2 }))
      }
    }))

  it.effect("scopes and kinds are apart: one key in another scope or kind is another entry", () =>
    Effect.gen(function*() {
      const journal = yield* ProviderJournal
      const [a, b] = [unique("a"), unique("b")]
      yield* journal.remember(a, "fenced", "key", true)
      expect(yield* journal.recall(b, "fenced", "key")).toEqual(Option.none())
      expect(yield* journal.recall(a, "sent", "key")).toEqual(Option.none())
      // A scope ending where a key begins does not collide with its neighbour.
      yield* journal.remember(`${a}:x`, "challenge_return", "y", "one")
      expect(yield* journal.recall(a, "challenge_return", "x:y")).toEqual(Option.none())
      expect(yield* journal.recall(`${a}:x`, "challenge_return", "y")).toEqual(Option.some("one"))
    }))

  it.effect("hands out a copy: changing a recalled value changes nothing stored", () =>
    Effect.gen(function*() {
      const journal = yield* ProviderJournal
      const scope = unique("copy")
      const value = { operation: "refund", multicapture: false }
      yield* journal.remember(scope, "sent", "k", value)
      value.operation = "void"
      const recalled = Option.getOrThrow(yield* journal.recall(scope, "sent", "k")) as { operation: string }
      recalled.operation = "capture"
      expect(yield* journal.recall(scope, "sent", "k")).toEqual(Option.some({ operation: "refund", multicapture: false }))
    }))
}

layer(ProviderJournalMemory.layer, { excludeTestServices: true })("ProviderJournalMemory", (it) => {
  journalContract(it)
})

const pgJournal = ProviderJournalPg.layer.pipe(
  Layer.provideMerge(UnitOfWorkPg.layer),
  Layer.provideMerge(Layer.unwrap(Effect.map(sharedConfig, PgDatabase.layer)))
)

layer(pgJournal, { excludeTestServices: true, timeout: "2 minutes" })("ProviderJournalPg", (it) => {
  journalContract(it)

  it.effect("a write commits at once, outside the caller's unit of work: a rollback does not take it back", () =>
    Effect.gen(function*() {
      const journal = yield* ProviderJournal
      const uow = yield* UnitOfWork
      const scope = unique("uow")
      const exit = yield* Effect.exit(uow.transaction(Effect.andThen(journal.remember(scope, "sent", "k", { operation: "authorize", multicapture: false }), Effect.fail("rolled back"))))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* journal.recall(scope, "sent", "k")).toEqual(Option.some({ operation: "authorize", multicapture: false }))
    }))

  it.effect("first writes racing one key from separate connections agree on one stored value", () =>
    Effect.gen(function*() {
      const journal = yield* ProviderJournal
      const sql = yield* SqlClient.SqlClient
      const scope = unique("race")
      yield* Effect.all(Array.from({ length: 8 }, (_, i) => journal.remember(scope, "sent", "k", { operation: "capture", n: i })), { concurrency: "unbounded" })
      const rows = yield* sql<{ value: { n: number } }>`SELECT value FROM provider_journal WHERE scope = ${scope}`
      expect(rows).toHaveLength(1)
      expect(yield* journal.recall(scope, "sent", "k")).toEqual(Option.some(rows[0]!.value))
    }))

  it.effect("created_at is the first write's, kept by a later overwrite; a cleanup by age has its index", () =>
    Effect.gen(function*() {
      const journal = yield* ProviderJournal
      const sql = yield* SqlClient.SqlClient
      const scope = unique("retention")
      yield* journal.remember(scope, "modification_outcome", "psp", false)
      // Backdate the row, as if written long ago: an overwrite must not make it young again.
      yield* sql`UPDATE provider_journal SET created_at = now() - interval '90 days' WHERE scope = ${scope}`
      yield* journal.remember(scope, "modification_outcome", "psp", true)
      const [row] = yield* sql<{ value: boolean; old: boolean }>`
        SELECT value, created_at < now() - interval '89 days' AS old FROM provider_journal WHERE scope = ${scope}`
      expect(row).toEqual({ value: true, old: true })
      const indexes = yield* sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE tablename = 'provider_journal'`
      expect(indexes.map((i) => i.indexdef).some((d) => /\(created_at\)/.test(d))).toBe(true)
    }))
})
