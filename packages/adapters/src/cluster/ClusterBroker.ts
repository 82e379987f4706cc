/**
 * Locks, rate limits and CVCs shared by the children of one `tender serve --workers N` when there is
 * no Redis: the primary process keeps them (in the in-process adapters, the one home of their
 * rules) and every child reaches them over the cluster's IPC channel.
 *
 *   primary   `attach(worker)` answers a child's requests: a lock is a fiber of LocksMemory's
 *             `withLock` that tells the child it holds the key and waits for its release; a rate
 *             limit is RateLimiterMemory's bucket; a CVC is CvcStoreMemory's entry.
 *   child     `layer`: Locks, RateLimiter and CvcStore that ask the primary.
 *
 * Why the primary rather than PostgreSQL advisory locks: a lock held across a provider call would
 * pin a pooled connection for its duration, and buckets and CVCs have no table to live in; the
 * primary is already the one process every child shares, and it sees a child die (`exit`), so the
 * locks a crashed child held are released at once instead of after a TTL. An account's 100/s is
 * one bucket for every child, and a CVC put through one child is taken through another.
 *
 * CVCs cross a local pipe between two processes of one service and stay in the primary's memory
 * only, as they would in one process; they are never logged. Requests and replies are tagged
 * `TAG`, so other IPC messages (the cluster's own) pass by.
 */
import type { Worker } from "node:cluster"
import { CvcStore, Locks, RateLimiter, type RateLimitDecision } from "@tender/domain"
import { Context, Effect, Fiber, Layer, Option } from "effect"
import * as LocksMemory from "../locks/LocksMemory.ts"
import { busy, DEFAULT_WAIT_MS } from "../locks/Locking.ts"
import * as RateLimiterMemory from "../ratelimit/RateLimiterMemory.ts"
import * as CvcStoreMemory from "../storage/memory/CvcStoreMemory.ts"

const TAG = "tender:coordination"

type Request =
  | { readonly op: "lock"; readonly key: string; readonly waitMs: number }
  | { readonly op: "unlock" }
  | { readonly op: "consume"; readonly key: string; readonly perSecond: number; readonly burst: number }
  | { readonly op: "cvc-put"; readonly token: string; readonly cvc: string }
  | { readonly op: "cvc-take"; readonly token: string }

type Envelope<A> = A & { readonly tag: typeof TAG; readonly id: number }

const isEnvelope = (message: unknown): message is Envelope<{ readonly op?: string; readonly result?: unknown }> =>
  typeof message === "object" && message !== null && (message as { tag?: unknown }).tag === TAG &&
  typeof (message as { id?: unknown }).id === "number"

// ---- primary ----

/** The primary's store: the in-process adapters every child's requests are answered from. */
export interface Broker {
  /** Answers `worker`'s requests until it exits; the locks it held are released when it does. */
  readonly attach: (worker: Worker) => void
}

export const make: Effect.Effect<Broker> = Effect.gen(function*() {
  const services = yield* Layer.build(Layer.mergeAll(LocksMemory.layer, RateLimiterMemory.layer, CvcStoreMemory.layer)).pipe(
    Effect.scoped
  )
  const locks = Context.get(services, Locks)
  const limiter = Context.get(services, RateLimiter)
  const cvcs = Context.get(services, CvcStore)

  const attach = (worker: Worker) => {
    // Lock requests of this child still waiting or holding, by the child's id for them.
    const held = new Map<number, Fiber.Fiber<void>>()
    const reply = (id: number, result: unknown) => {
      // With a callback a send to a child that has just died fails there, not as an 'error' event.
      if (worker.isConnected()) worker.send({ tag: TAG, id, result }, undefined, undefined, () => {})
    }
    const answer = <A>(id: number, effect: Effect.Effect<A>) => {
      Effect.runFork(Effect.map(effect, (result) => reply(id, result)))
    }
    const release = (id: number) => {
      const fiber = held.get(id)
      if (fiber === undefined) return
      held.delete(id)
      Effect.runFork(Fiber.interrupt(fiber))
    }

    worker.on("message", (message: unknown) => {
      if (!isEnvelope(message)) return
      const request = message as unknown as Envelope<Request>
      const id = request.id
      switch (request.op) {
        case "lock": {
          // Held until the child's `unlock` (or its exit) interrupts the fiber; a wait that runs out answers false.
          const fiber = Effect.runFork(
            locks.withLock(request.key, Effect.andThen(Effect.sync(() => reply(id, true)), Effect.never), { waitMs: request.waitMs }).pipe(
              Effect.catch(() => Effect.sync(() => reply(id, false))),
              Effect.ensuring(Effect.sync(() => held.delete(id)))
            )
          )
          held.set(id, fiber)
          return
        }
        case "unlock":
          return release(id)
        case "consume":
          return answer(id, limiter.consume(request.key, { perSecond: request.perSecond, burst: request.burst }))
        case "cvc-put":
          return answer(id, Effect.as(cvcs.put(request.token, request.cvc), null))
        case "cvc-take":
          return answer(id, Effect.map(cvcs.take(request.token), Option.getOrNull))
      }
    })
    // A child that died holds nothing any more: its locks go to the next waiter now.
    worker.on("exit", () => {
      for (const id of [...held.keys()]) release(id)
    })
  }

  return { attach }
})

// ---- child ----

/**
 * Locks, RateLimiter and CvcStore of a cluster child: each call is a request to the primary over
 * IPC. Outside a cluster child (no IPC channel) building it is a defect: the caller chose it wrongly.
 */
export const layer: Layer.Layer<Locks | RateLimiter | CvcStore> = Layer.effectContext(Effect.sync(() => {
  const send = process.send?.bind(process)
  if (send === undefined) throw new Error("ClusterBroker.layer needs the IPC channel of a cluster child")
  const pending = new Map<number, (result: unknown) => void>()
  let next = 0
  process.on("message", (message: unknown) => {
    if (!isEnvelope(message)) return
    const resume = pending.get(message.id)
    pending.delete(message.id)
    resume?.(message.result)
  })
  // Without the primary nothing can be locked or limited: what waits for it fails rather than hangs.
  process.on("disconnect", () => {
    for (const [id, resume] of pending) {
      pending.delete(id)
      resume(undefined)
    }
  })
  const post = (id: number, request: Request) => send({ tag: TAG, id, ...request }, undefined, undefined, () => {})
  const call = <A>(request: Request, id = ++next) =>
    Effect.callback<A>((resume) => {
      pending.set(id, (result) =>
        resume(result === undefined ? Effect.die(new Error("the cluster primary is gone")) : Effect.succeed(result as A)))
      post(id, request)
      return Effect.sync(() => pending.delete(id))
    })

  const locks = Locks.of({
    withLock: (key, effect, options) => {
      const waitMs = options?.waitMs ?? DEFAULT_WAIT_MS
      return Effect.scoped(Effect.gen(function*() {
        const id = ++next
        // Registered before asking: a grant that lands after we stopped waiting is still given back.
        yield* Effect.addFinalizer(() => Effect.sync(() => post(id, { op: "unlock" })))
        const granted = yield* call<boolean>({ op: "lock", key, waitMs }, id)
        if (!granted) return yield* Effect.fail(busy(key, waitMs))
        return yield* effect
      }))
    }
  })
  const limiter = RateLimiter.of({
    consume: (key, limit) =>
      call<RateLimitDecision>({
        op: "consume",
        key,
        perSecond: limit.perSecond,
        burst: limit.burst
      })
  })
  const cvcs = CvcStore.of({
    put: (token, cvc) => Effect.asVoid(call<null>({ op: "cvc-put", token, cvc })),
    take: (token) => Effect.map(call<string | null>({ op: "cvc-take", token }), Option.fromNullishOr)
  })
  return Context.make(Locks, locks).pipe(Context.add(RateLimiter, limiter), Context.add(CvcStore, cvcs))
}))
