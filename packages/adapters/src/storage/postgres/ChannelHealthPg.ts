/**
 * The channels' health shared by every server process through PostgreSQL (ChannelHealth; tables of
 * migration 0050; docs/decisions.md "Channel health shared across processes").
 *
 * Routing reads a channel's standing on every payment and observes every answer, so neither waits
 * on the database: each process holds a view (ChannelHealthView.ts) that its answers change at once,
 * and a background fiber (every `syncMs`, 1 s by default, for the layer's life) adds this process's
 * new counts into the window's rows, writes breakers the database has not taken, reads back the
 * window's sums and the breakers of every process, and deletes buckets past the window. What another
 * process saw therefore reaches this one's standings within about one sync period.
 *
 * A process just started waits for its first sync (bounded: FIRST_SYNC_WAIT) before it answers
 * standings or breakers, so it never routes or reports as if no channel had ever failed.
 *
 * Two things do not wait for the sync:
 * - a breaker opening or closing is written at once (forked from the observation): the process
 *   that saw a channel go down stops the others sending to it within their next sync, not two;
 * - a half-open breaker's probe is claimed in the database, one conditional upsert: one process
 *   wins it, whichever asks (a round trip, taken only while this process sees the breaker half
 *   open with its probe free; a lost claim is not asked again until the next sync).
 *
 * Consecutive failures are counted per process: a breaker opens in the process that saw five in a
 * row, and its opening is what the others share. A later decision wins (`changed_at`), so a stale
 * write never undoes a newer one.
 */
import { PgClient } from "@effect/sql-pg"
import type { BreakerState } from "@tender/domain/channels/RoutingModel"
import { ChannelHealth } from "@tender/domain/channels/RoutingPorts"
import * as SuccessRate from "@tender/domain/channels/SuccessRate"
import { Array as Arr, Clock, Deferred, Effect, Layer, Schedule } from "effect"
import { ChannelHealthView, type KeptBreaker, type WindowCount } from "../ChannelHealthView.ts"

export interface ChannelHealthPgOptions {
  /** How often this process writes its counts and reads everyone's (ms). */
  readonly syncMs: number
}

export const DEFAULT_OPTIONS: ChannelHealthPgOptions = { syncMs: 1_000 }

/**
 * The longest `standings` waits for a process's first sync: a process just started (the CLI's
 * `routing test`, a server's first payment) sees the deployment's breakers and rates, not an empty
 * view, yet a database slow to answer delays a payment by this at most, once (then routing goes on
 * with what this process knows: its breakers closed, its rates the prior).
 */
export const FIRST_SYNC_WAIT = "2 seconds"

interface BreakerRow {
  readonly channel_id: string
  readonly failures: number
  readonly opened_at: string | number | bigint | null
  readonly open_until: string | number | bigint | null
  readonly trips: number
  readonly probe_until: string | number | bigint | null
  readonly changed_at: string | number | bigint
}

/** bigint columns (epoch ms) as numbers: the driver may hand them over as strings or bigints. */
const ms = (value: string | number | bigint | null) => value === null ? null : Number(value)

const keptOf = (row: BreakerRow): KeptBreaker => ({
  state: {
    failures: row.failures,
    opened_at: ms(row.opened_at),
    open_until: ms(row.open_until),
    trips: row.trips,
    probe_until: ms(row.probe_until)
  },
  changed_at: ms(row.changed_at)!
})

const breakerColumns = (channelId: string, state: BreakerState, changedAt: number) => ({
  channel_id: channelId,
  failures: state.failures,
  opened_at: state.opened_at,
  open_until: state.open_until,
  trips: state.trips,
  probe_until: state.probe_until,
  changed_at: changedAt
})

/** Rows in one order, so two processes adding to the same rows lock them in the same order (no deadlock). */
const byKey = (a: WindowCount, b: WindowCount) =>
  a.channel_id < b.channel_id ? -1 : a.channel_id > b.channel_id ? 1 :
  a.method < b.method ? -1 : a.method > b.method ? 1 :
  a.currency < b.currency ? -1 : a.currency > b.currency ? 1 :
  a.brand < b.brand ? -1 : a.brand > b.brand ? 1 : a.bucket - b.bucket

export const layerWith = (options: ChannelHealthPgOptions): Layer.Layer<ChannelHealth, never, PgClient.PgClient> =>
  Layer.effect(
    ChannelHealth,
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const scope = yield* Effect.scope
      const view = new ChannelHealthView()
      /** Channels whose probe another process holds, as learnt since the last sync: asked no more until then. */
      let lostClaims = new Set<string>()
      /** Done once the first sync ended (well or not): what `standings` and `breakers` wait for in a process just started. */
      const firstSync = yield* Deferred.make<void>()
      let firstSynced = false

      /** Breaker rows written whole over what is there: each caller adds the `WHERE` that lets it. */
      const upsertBreakers = (rows: Arr.NonEmptyReadonlyArray<ReturnType<typeof breakerColumns>>) =>
        sql`INSERT INTO channel_breakers ${sql.insert(rows)}
          ON CONFLICT (channel_id) DO UPDATE SET failures = EXCLUDED.failures, opened_at = EXCLUDED.opened_at,
            open_until = EXCLUDED.open_until, trips = EXCLUDED.trips, probe_until = EXCLUDED.probe_until,
            changed_at = EXCLUDED.changed_at`

      /** Writes breakers the database has not taken; a later decision already there stands. */
      const writeBreakers = (ids?: ReadonlyArray<string>) =>
        Effect.suspend(() => {
          const taken = view.takeUnwritten(ids)
          if (!Arr.isReadonlyArrayNonEmpty(taken)) return Effect.void
          return sql`${upsertBreakers(Arr.map(taken, (b) => breakerColumns(b.channel_id, b.state, b.changed_at)))}
            WHERE channel_breakers.changed_at <= EXCLUDED.changed_at`.pipe(
            Effect.asVoid,
            Effect.tapError(() => Effect.sync(() => view.unwrite(taken.map((b) => b.channel_id))))
          )
        })

      const sync = Effect.gen(function*() {
        const counts = [...view.takePending()].sort(byKey)
        if (Arr.isArrayNonEmpty(counts)) {
          yield* sql`
            INSERT INTO channel_health_windows ${sql.insert(Arr.map(counts, (c) => ({ ...c })))}
            ON CONFLICT (channel_id, method, currency, brand, bucket) DO UPDATE
            SET attempts = channel_health_windows.attempts + EXCLUDED.attempts,
              approvals = channel_health_windows.approvals + EXCLUDED.approvals`.pipe(
            Effect.tapError(() => Effect.sync(() => view.restore()))
          )
        }
        yield* writeBreakers()
        const now = yield* Clock.currentTimeMillis
        const from = SuccessRate.windowStart(now)
        const [sums, breakers] = yield* Effect.all([
          sql<Omit<WindowCount, "bucket">>`
            SELECT channel_id, method, currency, brand, sum(attempts)::int AS attempts, sum(approvals)::int AS approvals
            FROM channel_health_windows WHERE bucket >= ${from}
            GROUP BY channel_id, method, currency, brand`,
          sql<BreakerRow>`SELECT channel_id, failures, opened_at, open_until, trips, probe_until, changed_at FROM channel_breakers`
        ], { concurrency: 2 }).pipe(Effect.tapError(() => Effect.sync(() => view.settle())))
        view.replaceShared(sums)
        for (const row of breakers) view.adopt(row.channel_id, keptOf(row))
        lostClaims = new Set()
        // Past the window: outside every sum already (an index range: nothing to find costs nothing).
        yield* sql`DELETE FROM channel_health_windows WHERE bucket < ${from}`
      })

      yield* Effect.forkScoped(
        sync.pipe(
          Effect.catchCause((cause) => Effect.logWarning("Channel health: sync with the database failed; retrying", cause)),
          Effect.ensuring(Effect.andThen(Effect.sync(() => (firstSynced = true)), Deferred.succeed(firstSync, undefined))),
          Effect.repeat(Schedule.spaced(options.syncMs))
        )
      )

      const report = (what: string) => Effect.catchCause((cause) => Effect.logWarning(`Channel health: ${what} failed; the next sync retries`, cause))

      return ChannelHealth.of({
        observe: (observation) =>
          Effect.suspend(() => {
            if (!view.observe(observation)) return Effect.void
            // Opened or closed: the others hear of it at their next sync, not after this one's.
            return Effect.asVoid(Effect.forkIn(report("writing a breaker")(writeBreakers([observation.channel_id])), scope))
          }),
        standings: (channelIds, segment, now) => {
          const read = Effect.sync(() => view.standings(channelIds, segment, now))
          // Once the first sync is done, no wait at all (no timer raced on the hot path).
          return firstSynced ? read : Effect.andThen(Effect.timeoutOption(Deferred.await(firstSync), FIRST_SYNC_WAIT), read)
        },
        claimProbe: (channelId, now) =>
          Effect.suspend(() => {
            const claimed = view.claimable(channelId, now)
            if (claimed === null || lostClaims.has(channelId)) return Effect.succeed(false)
            const seen = view.changedAt(channelId)
            // One winner, whoever asks: the row is locked by the first, and the others' condition is
            // then read on its claim. The row must hold no later decision than the one this process
            // saw (none at all, or an older one while this process's own is still being written:
            // the claim writes it with itself), and its probe must be free or lapsed.
            return sql<{ channel_id: string }>`${upsertBreakers([breakerColumns(channelId, claimed, now)])}
              WHERE channel_breakers.changed_at <= ${seen}
                AND (channel_breakers.probe_until IS NULL OR channel_breakers.probe_until <= ${now})
              RETURNING channel_id`.pipe(
              Effect.map((rows) => {
                if (rows.length === 1) {
                  view.keepClaim(channelId, claimed, now)
                  return true
                }
                lostClaims.add(channelId)
                return false
              }),
              // Unreachable storage: no probe (the channel stays skipped, or is tried as the last resort).
              Effect.catchCause((cause) => Effect.as(Effect.logWarning("Channel health: claiming a probe failed", cause), false))
            )
          }),
        breakers: () => Effect.andThen(Deferred.await(firstSync), Effect.sync(() => view.movedBreakers()))
      })
    })
  )

export const layer = layerWith(DEFAULT_OPTIONS)
