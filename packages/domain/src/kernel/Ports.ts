/**
 * Ports: what the domain needs from the outside world. Each is a service with no default
 * implementation; packages/adapters provides memory, PostgreSQL and Redis layers for them.
 */
import { Context, type Effect, type Scope } from "effect"
import type { Conflict } from "./Errors.ts"

/** Storage failed in a way no caller can handle (connection lost, disk full): a defect upstream. */
export class StorageError extends Error {
  readonly _tag = "StorageError"
}

/**
 * Unit of work: runs an effect inside one storage transaction, so a state change and the events it
 * emits commit together. Nested calls join the enclosing transaction.
 */
export class UnitOfWork extends Context.Service<UnitOfWork, {
  /** Runs `effect` in one storage transaction (or in the enclosing one). */
  transaction<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R>
}>()("@tender/domain/UnitOfWork") {}

/** Mutual exclusion across processes (Redis) or within one (memory). */
export class Locks extends Context.Service<Locks, {
  /** Runs `effect` while holding `key`; waits up to `waitMs` for it, then fails with `Conflict`. */
  withLock<A, E, R>(
    key: string,
    effect: Effect.Effect<A, E, R>,
    options?: { readonly waitMs?: number; readonly ttlMs?: number }
  ): Effect.Effect<A, E | Conflict, Exclude<R, Scope.Scope>>
}>()("@tender/domain/Locks") {}

/**
 * What one take from a token bucket decided, in the whole numbers the `RateLimit-*` and `Retry-After`
 * headers send (docs/decisions.md, "Rate-limit headers").
 */
export interface RateLimitDecision {
  readonly allowed: boolean
  /** When refused, whole seconds until a token is there (at least 1); 0 when allowed. */
  readonly retryAfterSeconds: number
  /** Whole tokens left after this request. */
  readonly remaining: number
  /** Whole seconds (rounded up) until the bucket is full again. */
  readonly resetSeconds: number
}

/** Token-bucket rate limiting per key (account). */
export class RateLimiter extends Context.Service<RateLimiter, {
  /** Takes one token from the key's bucket: whether the request is allowed, what is left, when to retry. */
  consume(
    key: string,
    limit: { readonly perSecond: number; readonly burst: number }
  ): Effect.Effect<RateLimitDecision>
}>()("@tender/domain/RateLimiter") {}

/**
 * SHA-256, hex: of API keys and client secrets (high-entropy random strings, so one SHA-256 is
 * enough), and of a create's canonical request (to recognise the same request again, not to hide it).
 */
export class KeyHasher extends Context.Service<KeyHasher, {
  /** The SHA-256 of the string, hex. */
  hash(key: string): Effect.Effect<string>
}>()("@tender/domain/KeyHasher") {}

