/**
 * What an operator's probes and scrapes ask of the driven side (issue 13, operations): whether the
 * stores this process depends on answer (readiness), and the figures only a query can give (the
 * webhook and reconciliation backlogs, the database connections). Not a domain port: nothing in the
 * payment core reads it; /readyz and /metrics (packages/http) do, at most once per probe or scrape.
 */
import { Cause, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { migrations } from "./storage/postgres/migrations/index.ts"
import { Redis } from "./redis/Redis.ts"

/** One dependency's answer: `reason` says what is wrong when it is not ok. */
export interface Check {
  readonly name: "database" | "migrations" | "redis"
  readonly ok: boolean
  readonly reason?: string | undefined
}

/** Figures from the database, cluster-wide (every process and worker shares them). */
export interface Backlogs {
  /** Deliveries due now (pending or failed, not paused, their next attempt in the past). */
  readonly webhooksDue: number
  /** Age in seconds of the oldest due delivery never attempted: the current commit→first-attempt lag. */
  readonly webhookOldestUnattemptedSeconds: number
  /** Provider calls not recorded yet whose grace has passed: what reconciliation still has to ask about. */
  readonly reconciliationDue: number
  /** Connections Tender's processes hold on the database, by state (`active`, `idle`, `idle in transaction`…). */
  readonly connections: ReadonlyArray<{ readonly state: string; readonly count: number }>
}

export class Operations extends Context.Service<Operations, {
  /** Every dependency's check; the process is ready when each is ok. */
  readonly readiness: Effect.Effect<ReadonlyArray<Check>>
  /** The backlogs; undefined over memory storage (one process, nothing to alert on). */
  readonly backlogs: (options: { readonly reconcileGraceMs: number }) => Effect.Effect<Backlogs | undefined>
}>()("@tender/adapters/Operations") {}

/** A probe must answer while the load balancer still waits: a dependency slower than this is not ready. */
const CHECK_TIMEOUT = "2 seconds"

/** Runs a check with a timeout; any failure or defect becomes a not-ok answer with its reason. */
const checked = (name: Check["name"], effect: Effect.Effect<string | undefined, unknown>): Effect.Effect<Check> =>
  effect.pipe(
    Effect.timeoutOrElse({ duration: CHECK_TIMEOUT, orElse: () => Effect.succeed(`no answer within ${CHECK_TIMEOUT}`) }),
    Effect.catchCause((cause) => {
      const error = Cause.squash(cause)
      return Effect.succeed(error instanceof Error ? error.message : String(error))
    }),
    Effect.map((problem): Check => problem === undefined ? { name, ok: true } : { name, ok: false, reason: problem })
  )

/**
 * The Redis check, when the process was given Redis (`REDIS_URL`: locks, rate limits, CVCs and the
 * replay cache live there, so a process that cannot reach it cannot take payments).
 */
const redisChecks = Effect.map(Effect.serviceOption(Redis), (redis) =>
  Option.match(redis, {
    onNone: () => Effect.succeed<ReadonlyArray<Check>>([]),
    onSome: (client) => Effect.map(checked("redis", Effect.as(Effect.tryPromise(() => client.ping()), undefined)), (check) => [check])
  }))

/** Memory storage: always ready but for Redis, when configured; no backlogs (one process, nothing to alert on). */
export const memoryLayer: Layer.Layer<Operations> = Layer.effect(
  Operations,
  Effect.map(redisChecks, (redis) =>
    Operations.of({
      readiness: Effect.map(redis, (checks) => [{ name: "database", ok: true }, ...checks]),
      backlogs: () => Effect.succeed(undefined)
    }))
)

/** PostgreSQL: reachable, and every migration this build knows recorded as applied. */
export const postgresLayer: Layer.Layer<Operations, never, SqlClient.SqlClient> = Layer.effect(
  Operations,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const redis = yield* redisChecks
    const known = migrations.map((migration) => migration.name)
    const database = checked("database", Effect.as(sql`SELECT 1`, undefined))
    const current = checked(
      "migrations",
      Effect.map(sql<{ readonly name: string }>`SELECT name FROM tender_migrations`, (rows) => {
        const applied = new Set(rows.map((row) => row.name))
        const missing = known.filter((name) => !applied.has(name))
        return missing.length === 0 ? undefined : `${missing.length} migration(s) not applied: ${missing.join(", ")} (run tender migrate)`
      })
    )
    return Operations.of({
      readiness: Effect.map(
        Effect.all([
          // Migrations are asked about only once the database answers (one reason, not two).
          Effect.flatMap(database, (db) => db.ok ? Effect.map(current, (m) => [db, m]) : Effect.succeed([db])),
          redis
        ], { concurrency: 2 }),
        ([db, more]) => [...db, ...more]
      ),
      backlogs: ({ reconcileGraceMs }) =>
        Effect.gen(function*() {
          const now = new Date()
          const before = new Date(now.getTime() - reconcileGraceMs).toISOString()
          // Each uses a partial index of its worker's own query (0022, 0008): cheap at any table size.
          const [webhooks] = yield* sql<{ readonly due: string; readonly oldest: Date | null }>`
            SELECT count(*) AS due, min(created_at) FILTER (WHERE attempts = 0) AS oldest FROM webhook_deliveries
            WHERE status IN ('pending', 'failed') AND NOT paused AND next_attempt_at <= ${now}`
          const [reconcile] = yield* sql<{ readonly due: string }>`
            SELECT count(*) AS due FROM transactions
            WHERE pending_call IS NOT NULL AND coalesce(pending_call->>'retry_at', pending_call->>'at') <= ${before}`
          const connections = yield* sql<{ readonly state: string | null; readonly count: string }>`
            SELECT state, count(*) AS count FROM pg_stat_activity
            WHERE application_name = 'tender' AND datname = current_database() GROUP BY state`
          return {
            webhooksDue: Number(webhooks?.due ?? 0),
            webhookOldestUnattemptedSeconds: webhooks?.oldest == null ? 0 : Math.max(0, (now.getTime() - new Date(webhooks.oldest).getTime()) / 1000),
            reconciliationDue: Number(reconcile?.due ?? 0),
            connections: connections.map((row) => ({ state: row.state ?? "unknown", count: Number(row.count) }))
          } satisfies Backlogs
        }).pipe(
          // A scrape must not fail for a slow or failing query: the figures are left out and the
          // readiness probe says why.
          Effect.timeoutOrElse({ duration: CHECK_TIMEOUT, orElse: () => Effect.succeed(undefined) }),
          Effect.catchCause(() => Effect.succeed(undefined))
        )
    })
  })
)
