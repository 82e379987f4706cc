/**
 * The primary of `tender serve --workers N`: it prepares what only one process may do, forks N
 * children that each run the whole server (and the background workers) on the one port, keeps
 * them running, and stops them. It serves no request and opens no connection pool itself.
 *
 *   before forking  the vault key (generated once into the data dir in embedded mode), the embedded
 *                   PostgreSQL (started here, so exactly one process owns it; the children join it
 *                   through <dataDir>/pg.json and never stop it), and the migrations (applied once,
 *                   not raced by N children).
 *   at start        a child that fails before it listens (Redis refusing, the port taken meanwhile)
 *                   tells the primary why (`failedStart`) and exits; the primary stops the others
 *                   and fails with that one line, exit status 1: restarting it would fail the same
 *                   way, for ever (decisions.md, "Start-up failures").
 *   while running   node:cluster hands each new connection to the next child (round robin); a child
 *                   that dies once all N have listened is forked again (after a second if its
 *                   replacement died before it listened; after 3×N such deaths in a row the primary
 *                   gives up and fails). Without REDIS_URL the primary keeps the locks, rate limits
 *                   and CVCs every child shares (ClusterBroker.ts).
 *   on SIGTERM/INT  every child is sent SIGTERM and drains; a child still running after 30 s is
 *                   killed; then the scope closes, which stops the embedded PostgreSQL if this run
 *                   started it.
 */
import cluster, { type Worker } from "node:cluster"
import type { TenderConfig } from "@tender/adapters/Config"
import * as ClusterBroker from "@tender/adapters/cluster/ClusterBroker"
import * as Infrastructure from "@tender/adapters/Infrastructure"
import * as EmbeddedPostgres from "@tender/adapters/storage/postgres/Embedded"
import * as VaultKey from "@tender/adapters/crypto/VaultKey"
import { InfrastructureError } from "@tender/adapters/InfrastructureError"
import * as Metrics from "@tender/http/Metrics"
import { Effect } from "effect"
import { documentOf, Reported } from "./Report.ts"

/** How long a child has to drain after SIGTERM before it is killed. */
const STOP_GRACE_MS = 30_000
/** A child that dies before it listened is restarted after this, not at once. */
const RESTART_DELAY_MS = 1_000
/**
 * Replacement children that died before listening, in a row (per child slot), after which the
 * primary stops and fails: children that cannot start (the database gone since) would otherwise be
 * restarted forever.
 */
const FAILED_STARTS_BEFORE_GIVING_UP = 3

/** Whether this process is a child forked by `primary`: it then serves as one of the N. */
export const isChild = (): boolean => cluster.isWorker

/** In a child: a primary that is gone (killed) stops it too, gracefully, instead of leaving an orphan on the port. */
export const followPrimary = Effect.sync(() => {
  process.once("disconnect", () => process.kill(process.pid, "SIGTERM"))
})

/** What a child sends its primary when it cannot start: the line the primary reports. */
interface FailedStart {
  readonly tender: "failed-start"
  readonly message: string
}

const isFailedStart = (message: unknown): message is FailedStart =>
  typeof message === "object" && message !== null && (message as FailedStart).tender === "failed-start" &&
  typeof (message as FailedStart).message === "string"

/**
 * In a child whose serving failed: tells the primary why (once the message is on its way, so the
 * exit that follows cannot lose it), then fails as already reported, so that of N children failing
 * alike the operator reads one line, the primary's, not N.
 */
export const failedStart = (error: unknown): Effect.Effect<never, Reported> =>
  Effect.andThen(
    Effect.callback<void>((resume) => {
      const sent: FailedStart = { tender: "failed-start", message: documentOf(error).message }
      if (process.send === undefined || !process.connected) return resume(Effect.void)
      process.send(sent, undefined, {}, () => resume(Effect.void))
    }),
    Effect.fail(new Reported())
  )

/** Runs the primary until interrupted (SIGTERM/SIGINT through the runtime), then stops everything. */
export const primary = (config: TenderConfig, workers: number) =>
  Effect.scoped(Effect.gen(function*() {
    yield* VaultKey.resolve(config)
    if (config.storage === "postgres") {
      if (config.databaseUrl === undefined) yield* EmbeddedPostgres.start(config.dataDir)
      yield* Infrastructure.migrate(config)
    }
    const broker = config.redisUrl === undefined ? yield* ClusterBroker.make : undefined
    // A scrape of /metrics reaches one child; the primary gathers every child's figures for it.
    yield* Effect.acquireRelease(Effect.sync(() => Metrics.aggregateInPrimary()), (stop) => Effect.sync(stop))

    let stopping = false
    let failedStarts = 0
    // Children that have listened: until all N of the first ones have, a failed start ends the start.
    let listening = 0
    // Until the primary waits below, a failure is kept for it to find (a child can fail that early).
    let gaveUp: string | undefined
    let giveUp = (message: string) => {
      gaveUp ??= message
    }
    const running = new Set<Worker>()
    const fork = () => {
      let listened = false
      let reason: string | undefined
      const worker = cluster.fork()
      // An IPC send to a child that just died errors on the worker; unheard, it would crash the
      // primary and with it every child. Its exit is handled below.
      worker.on("error", () => {})
      worker.once("listening", () => {
        listened = true
        listening++
        failedStarts = 0
      })
      worker.on("message", (message) => {
        if (isFailedStart(message)) reason = message.message
      })
      running.add(worker)
      broker?.attach(worker)
      const exited = (how: string) => {
        if (stopping) return
        if (!listened && listening < workers) {
          return giveUp(reason ?? `a server process exited before it listened (${how}); see its output above`)
        }
        if (!listened && ++failedStarts >= FAILED_STARTS_BEFORE_GIVING_UP * workers) {
          return giveUp(`server processes keep exiting before they listen (last: ${reason ?? how})`)
        }
        const delay = listened ? 0 : RESTART_DELAY_MS
        // A serving child that failed told why (failedStart): logged here, since it printed nothing.
        Effect.runFork(Effect.logWarning(`tender serve: worker ${worker.process.pid} exited (${reason ?? how}); starting another`))
        setTimeout(() => {
          if (!stopping) fork()
        }, delay)
      }
      worker.on("exit", (code, signal) => {
        running.delete(worker)
        const how = signal ?? `code ${code}`
        // Its last message (why it failed) may still be in the channel: it is read before the channel closes.
        if (worker.process.connected) worker.process.once("disconnect", () => exited(how))
        else exited(how)
      })
    }

    const stopAll = Effect.callback<void>((resume) => {
      stopping = true
      if (running.size === 0) return resume(Effect.void)
      const force = setTimeout(() => {
        for (const worker of running) worker.process.kill("SIGKILL")
      }, STOP_GRACE_MS)
      for (const worker of running) {
        worker.on("exit", () => {
          if (running.size === 0) {
            clearTimeout(force)
            resume(Effect.void)
          }
        })
        worker.process.kill("SIGTERM")
      }
    })

    yield* Effect.acquireRelease(
      Effect.sync(() => {
        for (let i = 0; i < workers; i++) fork()
      }),
      () => stopAll
    )
    yield* Effect.logInfo(`tender serve: ${workers} worker processes (pid ${process.pid} is their primary)`)
    // Runs until interrupted, or until the children cannot be kept running.
    return yield* Effect.callback<never, InfrastructureError>((resume) => {
      if (gaveUp !== undefined) return resume(Effect.fail(new InfrastructureError({ message: gaveUp })))
      giveUp = (message) => resume(Effect.fail(new InfrastructureError({ message })))
    })
  }))
