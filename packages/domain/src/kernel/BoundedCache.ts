/**
 * A map with a fixed capacity: once full, each new key evicts the least recently used one. For
 * every in-process cache whose keys a caller can choose (a header, an IP address, an id): an
 * unbounded map there is memory anyone can fill.
 */
export class BoundedCache<K, V> {
  readonly capacity: number
  // A Map iterates in insertion order, so re-inserting on each use keeps the oldest use first.
  private readonly entries = new Map<K, V>()

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`BoundedCache capacity must be a positive integer, got ${capacity}`)
    this.capacity = capacity
  }

  get size(): number {
    return this.entries.size
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key)
    if (value !== undefined) {
      this.entries.delete(key)
      this.entries.set(key, value)
    }
    return value
  }

  set(key: K, value: V): this {
    this.entries.delete(key)
    this.entries.set(key, value)
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K)
    return this
  }

  has(key: K): boolean {
    return this.entries.has(key)
  }

  delete(key: K): boolean {
    return this.entries.delete(key)
  }
}
