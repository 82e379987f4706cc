/**
 * The in-memory database under every memory repository: named tables of immutable values, and
 * transactions that read their own writes and publish them only on success (copy-on-write: a
 * transaction works on a fork of the committed snapshot, which it swaps in when it succeeds).
 *
 * Transactions are serialised by one permit, as are writes made outside a transaction, so a
 * rolled-back transaction can never discard someone else's write. Reads never wait: outside a
 * transaction they see the last committed snapshot. A transaction started inside another one joins
 * it (the enclosing fork travels in the fiber's context).
 */
import { Context, Effect, Layer, Result, Semaphore } from "effect"

/** A typed handle on one table; the name is its identity. */
export interface Table<K, V> {
  readonly name: string
  readonly "~types"?: { readonly key: K; readonly value: V }
}

export const table = <K, V>(name: string): Table<K, V> => ({ name })

export interface Reader {
  get<K, V>(table: Table<K, V>): ReadonlyMap<K, V>
}

export interface Writer extends Reader {
  /** The table, copied on the first write of this snapshot so that no other snapshot sees the change. */
  mutable<K, V>(table: Table<K, V>): Map<K, V>
}

const EMPTY: ReadonlyMap<unknown, unknown> = new Map()

class Snapshot implements Writer {
  readonly tables: Map<string, Map<unknown, unknown>>
  readonly copied = new Set<string>()

  constructor(tables: Map<string, Map<unknown, unknown>>) {
    this.tables = tables
  }

  get<K, V>(t: Table<K, V>): ReadonlyMap<K, V> {
    return (this.tables.get(t.name) ?? EMPTY) as ReadonlyMap<K, V>
  }

  mutable<K, V>(t: Table<K, V>): Map<K, V> {
    if (!this.copied.has(t.name)) {
      this.tables.set(t.name, new Map(this.tables.get(t.name)))
      this.copied.add(t.name)
    }
    return this.tables.get(t.name) as Map<K, V>
  }

  fork(): Snapshot {
    return new Snapshot(new Map(this.tables))
  }

  /** Takes over the tables a child fork changed (the child copied them, so nobody else holds them). */
  absorb(child: Snapshot): void {
    for (const name of child.copied) {
      this.tables.set(name, child.tables.get(name)!)
      this.copied.add(name)
    }
  }
}

interface Transaction {
  readonly working: Snapshot
  /** False once it committed or rolled back: a fiber that outlived it must not write through it. */
  open: boolean
}

/** The open transaction of each database, by database identity (two memory databases may coexist). */
const OpenTransactions = Context.Reference<ReadonlyMap<object, Transaction>>(
  "@tender/adapters/MemoryDatabase/OpenTransactions",
  { defaultValue: () => new Map() }
)

export class MemoryDatabase extends Context.Service<MemoryDatabase, {
  read<A>(f: (db: Reader) => A): Effect.Effect<A>
  /**
   * Applies `f` atomically: its changes land only when it returns a success (an exception it throws
   * is a defect and changes nothing). `f` is synchronous, so no other fiber can observe or
   * interleave with a half-applied write.
   */
  write<A, E>(f: (db: Writer) => Result.Result<A, E>): Effect.Effect<A, E>
  transaction<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R>
  /** Whether the calling fiber runs inside a transaction of this database (and so holds its permit). */
  readonly inTransaction: Effect.Effect<boolean>
}>()("@tender/adapters/MemoryDatabase") {
  static readonly make = Effect.sync(() => {
    const identity = {}
    const permit = Semaphore.makeUnsafe(1)
    let committed = new Snapshot(new Map())

    const openTransaction = Effect.map(OpenTransactions, (open) => open.get(identity))

    /** Runs `f` on a fork and keeps its tables only on success: `target`'s own maps are never edited in place. */
    const applyTo = <A, E>(target: Snapshot, f: (db: Writer) => Result.Result<A, E>): Result.Result<A, E> => {
      const fork = target.fork()
      const result = f(fork)
      if (Result.isSuccess(result)) target.absorb(fork)
      return result
    }

    return MemoryDatabase.of({
      read: (f) => Effect.map(openTransaction, (tx) => f(tx?.working ?? committed)),
      write: (f) =>
        Effect.flatMap(openTransaction, (tx) => {
          if (tx === undefined) {
            // Outside a transaction, wait for any running one: its commit replaces the snapshot.
            return permit.withPermit(Effect.suspend(() => Effect.fromResult(applyTo(committed, f))))
          }
          return tx.open
            ? Effect.suspend(() => Effect.fromResult(applyTo(tx.working, f)))
            : Effect.die(new Error("MemoryDatabase: write through a transaction that has ended"))
        }),
      transaction: (effect) =>
        Effect.flatMap(OpenTransactions, (open) => {
          if (open.has(identity)) return effect
          return permit.withPermit(Effect.suspend(() => {
            const tx: Transaction = { working: committed.fork(), open: true }
            return effect.pipe(
              Effect.provideService(OpenTransactions, new Map(open).set(identity, tx)),
              Effect.tap(() => Effect.sync(() => (committed = tx.working))),
              Effect.ensuring(Effect.sync(() => (tx.open = false)))
            )
          }))
        }),
      inTransaction: Effect.map(openTransaction, (tx) => tx !== undefined && tx.open)
    })
  })

  static readonly layer: Layer.Layer<MemoryDatabase> = Layer.effect(MemoryDatabase, MemoryDatabase.make)
}
