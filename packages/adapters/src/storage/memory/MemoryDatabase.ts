/**
 * The in-memory database under every memory repository: named tables of immutable values, and
 * transactions that read their own writes and publish them only on success.
 *
 * A write costs what it changes, not the size of its table: it works on an overlay (the keys it set
 * and the keys it deleted, over the unchanged table beneath), which is applied in place to what lies
 * beneath when it succeeds and dropped when it fails. Tables keep `Map`'s iteration order through it
 * (an updated key keeps its place, a new key goes last, a deleted then set key goes last), which the
 * repositories' "in creation order" listings rely on.
 *
 * Transactions are serialised by one permit, as are writes made outside a transaction, so a
 * rolled-back transaction can never discard someone else's write, and the committed tables change
 * only under the permit. Reads never wait: outside a transaction they see the last committed state
 * (a commit is synchronous, as is `read`'s function, so no reader sees one half applied). A
 * transaction started inside another one joins it (the enclosing overlay travels in the fiber's
 * context); a write inside a transaction is an overlay on the transaction's, absorbed on success.
 */
import { Context, Effect, Layer, Result, Semaphore } from "effect"

/** A typed handle on one table; the name is its identity. */
export interface Table<K, V> {
  readonly name: string
  readonly "~types"?: { readonly key: K; readonly value: V }
}

export const table = <K, V>(name: string): Table<K, V> => ({ name })

/** Adds `item` at the end of the list a list-valued table keeps under `key` (an index's ids, a row's history). */
export const append = <K, V>(w: Writer, t: Table<K, ReadonlyArray<V>>, key: K, item: V): void => {
  w.mutable(t).set(key, [...(w.get(t).get(key) ?? []), item])
}

export interface Reader {
  get<K, V>(table: Table<K, V>): ReadonlyMap<K, V>
}

export interface Writer extends Reader {
  /** The table as this write sees it, changed through an overlay so that nobody else sees the change until it lands. */
  mutable<K, V>(table: Table<K, V>): Map<K, V>
}

const EMPTY: ReadonlyMap<unknown, unknown> = new Map()

/**
 * A table's pending changes over `base`, which must not change while the overlay lives (the permit
 * and synchronous writes see to it). `updated` holds keys of `base` set in place; `appended` keys
 * that go after `base`'s, new ones or ones of `base` deleted and then set again (also in `deleted`),
 * in the order they were set, as a `Map` would place them.
 */
class Overlay<K, V> implements Map<K, V> {
  readonly base: ReadonlyMap<K, V>
  readonly updated = new Map<K, V>()
  readonly deleted = new Set<K>()
  readonly appended = new Map<K, V>()

  constructor(base: ReadonlyMap<K, V>) {
    this.base = base
  }

  get size(): number {
    return this.base.size - this.deleted.size + this.appended.size
  }

  has(key: K): boolean {
    return this.appended.has(key) || (!this.deleted.has(key) && this.base.has(key))
  }

  get(key: K): V | undefined {
    if (this.appended.has(key)) return this.appended.get(key)
    if (this.deleted.has(key)) return undefined
    return this.updated.has(key) ? this.updated.get(key) : this.base.get(key)
  }

  set(key: K, value: V): this {
    if (this.appended.has(key) || this.deleted.has(key) || !this.base.has(key)) this.appended.set(key, value)
    else this.updated.set(key, value)
    return this
  }

  delete(key: K): boolean {
    if (this.appended.delete(key)) return true
    if (this.deleted.has(key) || !this.base.has(key)) return false
    this.updated.delete(key)
    this.deleted.add(key)
    return true
  }

  clear(): void {
    for (const key of [...this.keys()]) this.delete(key)
  }

  /** Lazy like a `Map`'s: a key deleted before the walk reaches it is skipped, one set meanwhile is visited last. */
  *entries(): MapIterator<[K, V]> {
    for (const [key, value] of this.base) {
      if (this.deleted.has(key)) continue
      yield [key, this.updated.has(key) ? this.updated.get(key)! : value]
    }
    yield* this.appended
  }

  *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries()
  }

  forEach(callback: (value: V, key: K, map: Map<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this)
  }

  get [Symbol.toStringTag](): string {
    return "Overlay"
  }

  /** Lands the changes on `target`, which holds what `base` held (`base` itself or a fresh overlay on it), keeping the order. */
  applyTo(target: Map<K, V>): void {
    for (const key of this.deleted) target.delete(key)
    for (const [key, value] of this.updated) target.set(key, value)
    for (const [key, value] of this.appended) target.set(key, value)
  }
}

/** Where a `Changes` reads its tables from and lands them: the committed tables or an enclosing `Changes`. */
interface Store {
  tableNamed(name: string): ReadonlyMap<unknown, unknown>
  mutableNamed(name: string): Map<unknown, unknown>
}

/** The committed tables, changed only in place by a commit under the permit. */
class Committed implements Reader, Store {
  readonly tables = new Map<string, Map<unknown, unknown>>()

  get<K, V>(t: Table<K, V>): ReadonlyMap<K, V> {
    return this.tableNamed(t.name) as ReadonlyMap<K, V>
  }

  tableNamed(name: string): ReadonlyMap<unknown, unknown> {
    return this.tables.get(name) ?? EMPTY
  }

  mutableNamed(name: string): Map<unknown, unknown> {
    let rows = this.tables.get(name)
    if (rows === undefined) this.tables.set(name, rows = new Map())
    return rows
  }
}

/** One write's or one transaction's changes: an overlay per table it touched, over `parent`. */
class Changes implements Writer, Store {
  readonly parent: Store
  readonly overlays = new Map<string, Overlay<unknown, unknown>>()

  constructor(parent: Store) {
    this.parent = parent
  }

  get<K, V>(t: Table<K, V>): ReadonlyMap<K, V> {
    return this.tableNamed(t.name) as ReadonlyMap<K, V>
  }

  mutable<K, V>(t: Table<K, V>): Map<K, V> {
    return this.mutableNamed(t.name) as Map<K, V>
  }

  tableNamed(name: string): ReadonlyMap<unknown, unknown> {
    return this.overlays.get(name) ?? this.parent.tableNamed(name)
  }

  mutableNamed(name: string): Map<unknown, unknown> {
    let overlay = this.overlays.get(name)
    if (overlay === undefined) this.overlays.set(name, overlay = new Overlay(this.parent.tableNamed(name)))
    return overlay
  }

  /** Lands every change on the parent: in place on the committed tables, or into the enclosing transaction's overlays. */
  commit(): void {
    for (const [name, overlay] of this.overlays) overlay.applyTo(this.parent.mutableNamed(name))
  }
}

interface Transaction {
  readonly working: Changes
  /** False once it committed or rolled back: a fiber that outlived it must not write through it, and reads the committed state. */
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
    const committed = new Committed()

    const openTransaction = Effect.map(OpenTransactions, (open) => open.get(identity))

    /** Runs `f` on an overlay of `target` and lands its changes only on success. */
    const applyTo = <A, E>(target: Store, f: (db: Writer) => Result.Result<A, E>): Result.Result<A, E> => {
      const changes = new Changes(target)
      const result = f(changes)
      if (Result.isSuccess(result)) changes.commit()
      return result
    }

    return MemoryDatabase.of({
      read: (f) => Effect.map(openTransaction, (tx) => f(tx !== undefined && tx.open ? tx.working : committed)),
      write: (f) =>
        Effect.flatMap(openTransaction, (tx) => {
          if (tx === undefined) {
            // Outside a transaction, wait for any running one: the committed tables change only under the permit.
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
            const tx: Transaction = { working: new Changes(committed), open: true }
            return effect.pipe(
              Effect.provideService(OpenTransactions, new Map(open).set(identity, tx)),
              Effect.tap(() => Effect.sync(() => tx.working.commit())),
              Effect.ensuring(Effect.sync(() => (tx.open = false)))
            )
          }))
        }),
      inTransaction: Effect.map(openTransaction, (tx) => tx !== undefined && tx.open)
    })
  })

  static readonly layer: Layer.Layer<MemoryDatabase> = Layer.effect(MemoryDatabase, MemoryDatabase.make)
}
