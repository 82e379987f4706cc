/**
 * The memory database's own guarantees, which every memory repository relies on: a write or a
 * transaction lands whole or not at all, a transaction reads its own writes and joins an enclosing
 * one, readers outside it see the last committed state, and tables iterate in `Map`'s order
 * (the repositories' "in creation order" listings) however the changes were grouped.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Result } from "effect"
import { MemoryDatabase, table, type Writer } from "../src/storage/memory/MemoryDatabase.ts"

const rows = table<string, number>("rows")
const other = table<string, string>("other")

const make = MemoryDatabase.make
const entries = (db: MemoryDatabase["Service"]) => db.read((r) => [...r.get(rows)])
const set = (db: MemoryDatabase["Service"], key: string, value: number) =>
  db.write((w) => Result.succeed(void w.mutable(rows).set(key, value)))

describe("MemoryDatabase", () => {
  it.effect("a write whose function fails or throws changes nothing, in any table", () =>
    Effect.gen(function*() {
      const db = yield* make
      yield* set(db, "a", 1)
      const failed = yield* Effect.flip(db.write((w) => {
        w.mutable(rows).set("a", 2)
        w.mutable(rows).set("b", 3)
        w.mutable(rows).delete("a")
        w.mutable(other).set("x", "y")
        return Result.fail("no" as const)
      }))
      expect(failed).toBe("no")
      const died = yield* Effect.exit(db.write((w) => {
        w.mutable(rows).set("c", 4)
        w.mutable(other).set("x", "y")
        throw new Error("defect")
      }))
      expect(died._tag).toBe("Failure")
      expect(yield* entries(db)).toEqual([["a", 1]])
      expect(yield* db.read((r) => r.get(other).size)).toBe(0)
    }))

  it.effect("a transaction reads its own writes, publishes them on success and drops them all on failure", () =>
    Effect.gen(function*() {
      const db = yield* make
      yield* set(db, "a", 1)
      const seen = yield* db.transaction(Effect.gen(function*() {
        yield* set(db, "a", 10)
        yield* set(db, "b", 2)
        return yield* entries(db)
      }))
      expect(seen).toEqual([["a", 10], ["b", 2]])
      expect(yield* entries(db)).toEqual([["a", 10], ["b", 2]])

      const failed = yield* Effect.flip(db.transaction(Effect.gen(function*() {
        yield* set(db, "a", 99)
        yield* db.write((w) => Result.succeed(w.mutable(rows).delete("b")))
        yield* set(db, "c", 3)
        return yield* Effect.fail("rolled back" as const)
      })))
      expect(failed).toBe("rolled back")
      expect(yield* entries(db)).toEqual([["a", 10], ["b", 2]])
      expect(yield* db.inTransaction).toBe(false)
    }))

  it.effect("a failing write inside a transaction drops only its own changes", () =>
    Effect.gen(function*() {
      const db = yield* make
      const seen = yield* db.transaction(Effect.gen(function*() {
        yield* set(db, "a", 1)
        yield* Effect.flip(db.write((w) => {
          w.mutable(rows).set("a", 2)
          w.mutable(rows).set("b", 2)
          return Result.fail("no")
        }))
        yield* Effect.exit(db.write((w) => {
          w.mutable(rows).delete("a")
          throw new Error("defect")
        }))
        return yield* entries(db)
      }))
      expect(seen).toEqual([["a", 1]])
      expect(yield* entries(db)).toEqual([["a", 1]])
    }))

  it.effect("a transaction inside a transaction joins it: its writes land only with the outer one's", () =>
    Effect.gen(function*() {
      const db = yield* make
      const inner = db.transaction(Effect.gen(function*() {
        expect(yield* db.inTransaction).toBe(true)
        yield* set(db, "inner", 1)
      }))
      yield* Effect.flip(db.transaction(Effect.gen(function*() {
        yield* inner
        // Joined, not committed on its own: still invisible to the committed state, visible here.
        expect(yield* entries(db)).toEqual([["inner", 1]])
        return yield* Effect.fail("outer fails")
      })))
      expect(yield* entries(db)).toEqual([])
      yield* db.transaction(Effect.andThen(inner, set(db, "outer", 2)))
      expect(yield* entries(db)).toEqual([["inner", 1], ["outer", 2]])
    }))

  it.effect("readers outside a running transaction see the last committed state, then its commit whole", () =>
    Effect.gen(function*() {
      const db = yield* make
      yield* set(db, "a", 1)
      const written = yield* Deferred.make<void>()
      const proceed = yield* Deferred.make<void>()
      const tx = yield* Effect.forkChild(db.transaction(Effect.gen(function*() {
        yield* set(db, "a", 2)
        yield* set(db, "b", 3)
        yield* Deferred.succeed(written, undefined)
        yield* Deferred.await(proceed)
      })))
      yield* Deferred.await(written)
      expect(yield* entries(db)).toEqual([["a", 1]])
      // A write outside the transaction waits for it (one permit), so it lands after the commit.
      const outside = yield* Effect.forkChild(set(db, "c", 4))
      expect(yield* entries(db)).toEqual([["a", 1]])
      yield* Deferred.succeed(proceed, undefined)
      yield* Fiber.join(tx)
      yield* Fiber.join(outside)
      expect(yield* entries(db)).toEqual([["a", 2], ["b", 3], ["c", 4]])
    }))

  it.effect("a fiber that outlives its transaction cannot write through it and reads the committed state", () =>
    Effect.gen(function*() {
      const db = yield* make
      const ended = yield* Deferred.make<void>()
      const straggler = yield* db.transaction(Effect.gen(function*() {
        yield* set(db, "a", 1)
        return yield* Effect.forkDetach(Effect.andThen(
          Deferred.await(ended),
          Effect.gen(function*() {
            const read = yield* entries(db)
            const write = yield* Effect.exit(set(db, "b", 2))
            return { read, write: write._tag }
          })
        ))
      }))
      yield* set(db, "c", 3)
      yield* Deferred.succeed(ended, undefined)
      expect(yield* Fiber.join(straggler)).toEqual({ read: [["a", 1], ["c", 3]], write: "Failure" })
      expect(yield* entries(db)).toEqual([["a", 1], ["c", 3]])
    }))

  it.effect("keeps Map's order: an updated key keeps its place, a new key goes last, a deleted then set key goes last", () =>
    Effect.gen(function*() {
      const db = yield* make
      yield* db.write((w) => {
        const t = w.mutable(rows)
        for (const key of ["a", "b", "c", "d"]) t.set(key, 0)
        return Result.succeed(undefined)
      })
      yield* db.write((w) => {
        const t = w.mutable(rows)
        t.set("b", 1) // in place
        t.delete("a")
        t.set("a", 2) // after d
        t.set("e", 3) // after a
        t.delete("c")
        t.set("a", 4) // stays after d, before e
        expect([...t.keys()]).toEqual(["b", "d", "a", "e"])
        expect(t.size).toBe(4)
        expect(t.has("c")).toBe(false)
        return Result.succeed(undefined)
      })
      expect(yield* entries(db)).toEqual([["b", 1], ["d", 0], ["a", 4], ["e", 3]])
    }))

  it.effect("deleting and setting while iterating a table behaves as on a Map", () =>
    Effect.gen(function*() {
      const db = yield* make
      const model = new Map<string, number>()
      const sweep = (t: Map<string, number>) => {
        const visited: Array<string> = []
        for (const [key, value] of t) {
          visited.push(key)
          if (value % 2 === 0) t.delete(key)
          if (key === "k1") t.set("late", 7)
          if (key === "k3") t.delete("k4")
        }
        return visited
      }
      for (let i = 0; i < 6; i++) {
        model.set(`k${i}`, i)
        yield* set(db, `k${i}`, i)
      }
      const visited = yield* db.write((w) => Result.succeed(sweep(w.mutable(rows))))
      expect(visited).toEqual(sweep(model))
      expect(yield* entries(db)).toEqual([...model])
    }))

  it.effect("any mix of writes, failures, transactions and nested writes ends as the same changes on a plain Map", () =>
    Effect.gen(function*() {
      const db = yield* make
      const model = new Map<string, number>()
      // A fixed pseudo-random walk (xorshift), so a failure reproduces.
      let seed = 0x2545f491
      const next = (n: number) => {
        seed ^= seed << 13
        seed ^= seed >>> 17
        seed ^= seed << 5
        return (seed >>> 0) % n
      }
      type Op = readonly [key: string, value: number | undefined]
      const ops = (n: number): Array<Op> =>
        Array.from({ length: n }, () => [`k${next(12)}`, next(3) === 0 ? undefined : next(1000)] as const)
      const applyOps = (t: Map<string, number>, list: ReadonlyArray<Op>) => {
        for (const [key, value] of list) value === undefined ? t.delete(key) : t.set(key, value)
      }
      const writeOps = (list: ReadonlyArray<Op>, fail: boolean) =>
        db.write((w: Writer) => {
          applyOps(w.mutable(rows), list)
          return fail ? Result.fail("no") : Result.succeed(undefined)
        }).pipe(Effect.ignore)

      for (let round = 0; round < 300; round++) {
        if (next(2) === 0) {
          const list = ops(1 + next(6))
          const fail = next(4) === 0
          yield* writeOps(list, fail)
          if (!fail) applyOps(model, list)
        } else {
          const writes = Array.from({ length: 1 + next(4) }, () => ({ list: ops(1 + next(5)), fail: next(4) === 0 }))
          const failTx = next(4) === 0
          const inTx = new Map(model)
          yield* db.transaction(Effect.gen(function*() {
            for (const { fail, list } of writes) {
              yield* writeOps(list, fail)
              if (!fail) applyOps(inTx, list)
              expect(yield* entries(db)).toEqual([...inTx])
            }
            if (failTx) return yield* Effect.fail("rolled back")
          })).pipe(Effect.ignore)
          if (!failTx) {
            model.clear()
            for (const [key, value] of inTx) model.set(key, value)
          }
        }
        expect(yield* entries(db)).toEqual([...model])
        expect(yield* db.read((r) => r.get(rows).size)).toBe(model.size)
      }
    }))
})
