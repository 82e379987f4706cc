/**
 * ClusterBroker across real processes: this test is the cluster's primary (as `tender serve
 * --workers N`'s is), two forked children use the broker's Locks, RateLimiter and CvcStore
 * (fixtures/cluster-child.ts), and what one child holds or stores the other must see.
 */
import cluster, { type Worker } from "node:cluster"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as ClusterBroker from "../src/cluster/ClusterBroker.ts"

const CHILD = fileURLToPath(new URL("./fixtures/cluster-child.ts", import.meta.url))

let broker: ClusterBroker.Broker
const children: Array<Worker> = []
let nextTest = 0

const fork = () =>
  new Promise<Worker>((resolve, reject) => {
    const worker = cluster.fork()
    broker.attach(worker)
    worker.once("message", (message: { ready?: boolean }) => (message.ready ? resolve(worker) : reject(new Error("not ready"))))
    worker.once("exit", (code) => reject(new Error(`child exited with ${code}`)))
  })

/** Sends `command` to `worker`; resolves with its result, and calls `onHeld` when a `hold` holds its lock. */
const ask = <A = unknown>(worker: Worker, command: Record<string, unknown>, onHeld?: () => void) =>
  new Promise<A>((resolve, reject) => {
    const test = ++nextTest
    const listener = (message: { test?: number; held?: boolean; done?: { ok?: A; error?: string } }) => {
      if (message.test !== test) return
      if (message.held === true) return onHeld?.()
      worker.off("message", listener)
      if (message.done?.error !== undefined) reject(new Error(message.done.error))
      else resolve(message.done?.ok as A)
    }
    worker.on("message", listener)
    worker.send({ ...command, test })
  })

beforeAll(async () => {
  broker = await Effect.runPromise(ClusterBroker.make)
  // Node runs the .ts child as is (type stripping), without the test runner's loader flags.
  cluster.setupPrimary({ exec: CHILD, execArgv: [], silent: false })
  children.push(await fork(), await fork())
}, 60_000)

afterAll(() => {
  for (const worker of cluster.workers === undefined ? [] : Object.values(cluster.workers)) worker?.process.kill("SIGKILL")
})

describe("ClusterBroker", () => {
  it("a lock is held by one child at a time: holds of one key from both children never overlap", async () => {
    const holds = await Promise.all(
      Array.from({ length: 8 }, (_, i) => ask<{ start: number; end: number }>(children[i % 2]!, { cmd: "hold", key: "order:o1", ms: 30 }))
    )
    const sorted = [...holds].sort((a, b) => a.start - b.start)
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.start).toBeGreaterThanOrEqual(sorted[i - 1]!.end)
  })

  it("a wait that runs out is a Conflict; other keys are not held up", async () => {
    let held!: () => void
    const holding = new Promise<void>((resolve) => (held = resolve))
    const long = ask(children[0]!, { cmd: "hold", key: "order:busy", ms: 1_000 }, () => held())
    await holding
    await expect(ask(children[1]!, { cmd: "hold", key: "order:busy", ms: 1, waitMs: 100 })).rejects.toThrow(/being changed by another request/)
    await expect(ask(children[1]!, { cmd: "hold", key: "order:other", ms: 1, waitMs: 100 })).resolves.toMatchObject({ start: expect.any(Number) })
    await long
  })

  it("the locks of a child that dies are released at once, not after a TTL", async () => {
    const doomed = await fork()
    let held!: () => void
    const holding = new Promise<void>((resolve) => (held = resolve))
    void ask(doomed, { cmd: "hold", key: "order:crash", ms: 600_000 }, () => held()).catch(() => {})
    await holding
    doomed.process.kill("SIGKILL")
    const started = Date.now()
    await ask(children[0]!, { cmd: "hold", key: "order:crash", ms: 1, waitMs: 5_000 })
    expect(Date.now() - started).toBeLessThan(3_000)
  })

  it("a CVC put through one child is taken through the other, once", async () => {
    await ask(children[0]!, { cmd: "put", token: "tok_shared", cvc: "123" })
    expect(await ask(children[1]!, { cmd: "take", token: "tok_shared" })).toBe("123")
    expect(await ask(children[1]!, { cmd: "take", token: "tok_shared" })).toBeNull()
    expect(await ask(children[0]!, { cmd: "take", token: "tok_shared" })).toBeNull()
  })

  it("a rate limit is one bucket for both children", async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => ask<{ allowed: boolean }>(children[i % 2]!, { cmd: "consume", key: "acct_1", burst: 5 }))
    )
    expect(answers.filter((a) => a.allowed)).toHaveLength(5)
  })
})
