/**
 * Webhook deliveries and their attempts in PostgreSQL. Workers in any number of processes claim
 * due deliveries with `FOR UPDATE SKIP LOCKED` and a lease, so no two claim the same row at once;
 * an attempt and the state it leads to are written by one statement, so neither lands alone, and
 * only while the row still carries the writer's lease token (fencing a worker that outlived it).
 *
 * Wake-ups (issue 24): triggers (migration 0039) NOTIFY `tender_delivery_due` when deliveries are
 * stored, and when one is retried by hand or resumed; the dispatcher's `wakeups` LISTENs on a
 * connection of its own, as AccountCachePg does, and says it is not heard while that connection
 * is lost (the dispatcher polls meanwhile), until it listens again.
 */
import { PgClient, PgConnection } from "@effect/sql-pg"
import { Account, type DeliveryWakeups, Webhook, WebhookDeliveryRepo } from "@tender/domain"
import { Array as Arr, Effect, Layer, Option, Queue, Schedule, Schema } from "effect"
import { insertOrDefer } from "./WriteBehind.ts"
import { type SqlClient, SqlSchema, type Statement } from "effect/sql"
import { attemptOfAnotherDelivery, deliveryNotStored } from "../Conflicts.ts"
import { statusFilter } from "../Search.ts"
import { Timestamp } from "./Columns.ts"
import { EventRow } from "./EventRepoPg.ts"
import * as SearchPg from "./SearchPg.ts"
import { EndpointRow } from "./WebhookEndpointRepoPg.ts"

/** The channel migration 0039's triggers notify. */
export const CHANNEL = "tender_delivery_due"

export interface Options {
  /** Wait between attempts to listen again after the wake-ups' connection is lost. */
  readonly listenRetryMs: number
}

export const DEFAULT_OPTIONS: Options = { listenRetryMs: 1_000 }

export const DeliveryRow = Schema.Struct({
  ...Webhook.WebhookDelivery.fields,
  next_attempt_at: Schema.NullOr(Timestamp),
  last_attempt_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp
})

export const AttemptRow = Schema.Struct({ ...Webhook.DeliveryAttempt.fields, attempted_at: Timestamp })
/** An attempt as read: a NULL `response` (no answer, or logged before it was kept) is the record's absent one. */
const StoredAttempt = Schema.Struct({ ...AttemptRow.fields, response: Schema.NullOr(Schema.String) })
const attemptOf = ({ response, ...attempt }: typeof StoredAttempt.Type): Webhook.DeliveryAttempt =>
  response === null ? attempt : { ...attempt, response }

const Key = Schema.Struct({ accountId: Schema.String, id: Schema.String })
const Written = Schema.Struct({ id: Schema.String })
const Claim = Schema.Struct({
  now: Schema.String,
  leaseUntil: Schema.String,
  lease: Schema.String,
  limit: Schema.Int,
  perAccount: Schema.Int,
  perEndpoint: Schema.Int,
  excludeEndpoints: Schema.Array(Schema.String),
  excludeAccounts: Schema.Array(Schema.String),
  busy: Schema.optional(Schema.UndefinedOr(Schema.Struct({
    endpoints: Schema.Array(Schema.Tuple([Schema.String, Schema.Number])),
    accounts: Schema.Array(Schema.Tuple([Schema.String, Schema.Number]))
  })))
})

/** A claimed row with what its attempt needs, joined in the claim's statement (jsonb: `null` when gone). */
const ClaimedRow = Schema.Struct({
  ...DeliveryRow.fields,
  event: Schema.NullOr(EventRow),
  endpoint: Schema.NullOr(EndpointRow),
  signing: Schema.NullOr(Schema.Struct({
    signing_secret: Account.Account.fields.signing_secret,
    previous_signing_secret: Schema.NullOr(Schema.String),
    previous_signing_secret_expires_at: Schema.NullOr(Timestamp)
  }))
})

/** What a delivery's progress changes (and the end of its lease); the rest is fixed at insert. */
const progress = (row: typeof DeliveryRow.Encoded) => ({
  status: row.status,
  attempts: row.attempts,
  next_attempt_at: row.next_attempt_at,
  last_attempt_at: row.last_attempt_at,
  updated_at: row.updated_at,
  lease_token: null
})

/** The repository over the client's database; its wake-ups listen again `options.listenRetryMs` after a loss. */
export const layerWith = (options: Options): Layer.Layer<WebhookDeliveryRepo, never, SqlClient.SqlClient | PgClient.PgClient> => Layer.effect(
  WebhookDeliveryRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const from = sql`SELECT r.* FROM webhook_deliveries r`

    const encode = Schema.encodeEffect(Schema.NonEmptyArray(DeliveryRow))
    const insert = (stored: Arr.NonEmptyReadonlyArray<Webhook.WebhookDelivery>) =>
      Effect.flatMap(encode(stored), (rows) =>
        insertOrDefer(
          rows.map((row) => ({ table: "webhook_deliveries" as const, id: row.id, version: undefined, columns: row })),
          sql`INSERT INTO webhook_deliveries ${sql.insert(rows)}`
        ))
    const find = SqlSchema.findOneOption({
      Request: Key,
      Result: DeliveryRow,
      execute: ({ accountId, id }) => sql`${from} WHERE r.id = ${id} AND r.account_id = ${accountId}`
    })
    const findAny = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: DeliveryRow,
      execute: (id) => sql`${from} WHERE r.id = ${id}`
    })
    const page = SearchPg.keyset(sql, from, DeliveryRow)
    const claimDue = SqlSchema.findAll({
      Request: Claim,
      Result: ClaimedRow,
      // Each step costs what the dispatcher's bounds allow, not what the backlog holds (issue 12
      // review): `heads` walks `webhook_deliveries_endpoint_due_idx` one endpoint at a time (a loose
      // index scan: one probe per endpoint with open deliveries, giving its oldest), and `pool` takes
      // the oldest `perEndpoint` due rows of each endpoint that is due, not excluded, of an account
      // not excluded, and not disabled (its rows are `paused`, out of the index, by the domain's pause
      // rule, `pause` below; the check here covers what the rule misses: a row retried while paused, or
      // fanned out as its endpoint was being disabled). `picked` ranks the pool per account
      // and takes it round-robin across accounts. `due` then locks those still due, skipping rows
      // another worker holds (the re-check sees a concurrent claim's committed lease). The ranking
      // reads no locks, so a claim running beside another picks rows that one holds: `extra`
      // replaces what `due` skipped with the oldest of the rest of the pool nobody holds (`spare`:
      // within each account's room). MATERIALIZED runs each locking SELECT
      // exactly once: one re-run by the planner could claim more than `limit` rows. The claim order
      // is the old due time, which the lease overwrites, hence `due_at`.
      // The caller's attempts in flight (`busy_e`, `busy_a`) count against both bounds, inside this
      // one statement: an endpoint's pool is what is left of its bound, an account's rank starts
      // after its busy ones, and `extra` takes of an account at most what `due` left of its room.
      // Everything claimed can run at once, so nothing is handed back (issue 13).
      // Each claimed row comes back with its event, its endpoint and its account's signing secrets
      // (issue 24: no read per delivery or per claim after it), as the claim's snapshot has them.
      execute: ({ busy, excludeAccounts, excludeEndpoints, lease, leaseUntil, limit, now, perAccount, perEndpoint }) => {
        const counts = (pairs: ReadonlyArray<readonly [string, number]> | undefined) =>
          sql`SELECT * FROM unnest(${(pairs ?? []).map(([id]) => id)}::text[], ${(pairs ?? []).map(([, n]) => n)}::int[]) AS b(id, n)`
        const busyOf = (table: Statement.Fragment, id: Statement.Fragment) =>
          sql`COALESCE((SELECT b.n FROM ${table} b WHERE b.id = ${id}), 0)`
        const open = sql`d.status IN ('pending', 'failed') AND NOT d.paused`
        const claimable = sql`${open} AND d.next_attempt_at <= ${now}::timestamptz`
        const head = sql`SELECT d.endpoint_id, d.account_id, d.next_attempt_at FROM webhook_deliveries d`
        return sql`WITH RECURSIVE busy_e AS (${counts(busy?.endpoints)}), busy_a AS (${counts(busy?.accounts)}),
            heads AS (
              (${head} WHERE ${open} ORDER BY d.endpoint_id, d.next_attempt_at, d.id LIMIT 1)
              UNION ALL
              SELECT n.* FROM heads h CROSS JOIN LATERAL (
                ${head} WHERE ${open} AND d.endpoint_id > h.endpoint_id
                ORDER BY d.endpoint_id, d.next_attempt_at, d.id LIMIT 1
              ) n
            ), pool AS (
              SELECT p.* FROM heads h CROSS JOIN LATERAL (
                SELECT d.id, d.account_id, d.next_attempt_at FROM webhook_deliveries d
                WHERE d.endpoint_id = h.endpoint_id AND ${claimable}
                ORDER BY d.next_attempt_at, d.id
                LIMIT GREATEST(0, ${perEndpoint}::int - ${busyOf(sql`busy_e`, sql`h.endpoint_id`)})
              ) p
              WHERE h.next_attempt_at <= ${now}::timestamptz
                AND h.endpoint_id <> ALL(${excludeEndpoints}) AND h.account_id <> ALL(${excludeAccounts})
                AND NOT EXISTS (
                  SELECT 1 FROM webhook_endpoints e WHERE e.id = h.endpoint_id AND e.status = 'disabled'
                )
            ), ranked AS (
              SELECT p.id, p.next_attempt_at, ${busyOf(sql`busy_a`, sql`p.account_id`)} +
                row_number() OVER (PARTITION BY p.account_id ORDER BY p.next_attempt_at, p.id) AS in_account
              FROM pool p
            ), picked AS (
              SELECT r.id FROM ranked r
              WHERE r.in_account <= ${perAccount}
              ORDER BY r.in_account, r.next_attempt_at, r.id
              LIMIT ${limit}
            ), due AS MATERIALIZED (
              SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
              WHERE d.id IN (SELECT id FROM picked) AND ${claimable}
              FOR UPDATE SKIP LOCKED
            ), spare AS (
              SELECT s.id FROM (
                SELECT p.id, p.account_id,
                  row_number() OVER (PARTITION BY p.account_id ORDER BY p.next_attempt_at, p.id) AS n
                FROM pool p WHERE p.id NOT IN (SELECT id FROM picked)
              ) s
              WHERE s.n + ${busyOf(sql`busy_a`, sql`s.account_id`)}
                + (SELECT count(*) FROM due x JOIN pool q ON q.id = x.id WHERE q.account_id = s.account_id) <= ${perAccount}
            ), extra AS MATERIALIZED (
              SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
              WHERE d.id IN (SELECT id FROM spare) AND ${claimable}
              ORDER BY d.next_attempt_at, d.id
              LIMIT (SELECT count(*) FROM picked) - (SELECT count(*) FROM due)
              FOR UPDATE SKIP LOCKED
            ), taken AS (
              SELECT * FROM due UNION ALL SELECT * FROM extra
            ), claimed AS (
              UPDATE webhook_deliveries r
              SET next_attempt_at = ${leaseUntil}::timestamptz, updated_at = ${now}::timestamptz,
                lease_token = ${lease}
              FROM taken due WHERE r.id = due.id
              RETURNING r.*, due.next_attempt_at AS due_at
            )
            SELECT c.*, to_jsonb(e) AS event, to_jsonb(w) AS endpoint,
              CASE WHEN a.id IS NULL THEN NULL ELSE jsonb_build_object(
                'signing_secret', a.signing_secret,
                'previous_signing_secret', a.previous_signing_secret,
                'previous_signing_secret_expires_at', a.previous_signing_secret_expires_at
              ) END AS signing
            FROM claimed c
            LEFT JOIN events e ON e.id = c.event_id
            LEFT JOIN webhook_endpoints w ON w.id = c.endpoint_id
            LEFT JOIN accounts a ON a.id = c.account_id
            ORDER BY c.due_at, c.id`
      }
    })
    // The fence of both writes: the row still carries the lease its writer holds (none: NULL).
    const fenced = (row: typeof DeliveryRow.Encoded) =>
      sql`id = ${row.id} AND account_id = ${row.account_id} AND lease_token IS NOT DISTINCT FROM ${row.lease_token}`
    const recordAttempts = SqlSchema.findAll({
      Request: Schema.Array(Schema.Struct({ delivery: DeliveryRow, attempt: AttemptRow })),
      Result: Written,
      // One statement for a batch of attempts (issue 13: one round trip and one commit for all the
      // attempts finished while the last batch was written). It is atomic on its own and joins the
      // caller's transaction when there is one (no savepoint). Each attempt is inserted from its
      // updated row, so it lands only with the state it leads to, and not at all when its fence (the
      // row still carries the writer's lease token) does not hold.
      // The batch travels as one JSON parameter (typed columns by `jsonb_to_recordset`): a column
      // of an array parameter that is all NULL (no status code in a batch of failures) has no type.
      execute: (batch) => {
        const rows = batch.map(({ attempt, delivery }) => ({
          ...progress(delivery),
          id: delivery.id,
          account_id: delivery.account_id,
          // The lease the writer holds (the fence); the row's own lease ends with the write.
          fence: delivery.lease_token,
          attempted_at: attempt.attempted_at,
          status_code: attempt.status_code,
          duration_ms: attempt.duration_ms,
          error: attempt.error,
          response: attempt.response ?? null
        }))
        return sql`WITH input AS (
              SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS i(id text, account_id text,
                fence text, status text, attempts integer, next_attempt_at timestamptz,
                last_attempt_at timestamptz, updated_at timestamptz, attempted_at timestamptz,
                status_code integer, duration_ms integer, error text, response text)
            ), updated AS (
              UPDATE webhook_deliveries d
              SET status = i.status, attempts = i.attempts, next_attempt_at = i.next_attempt_at,
                last_attempt_at = i.last_attempt_at, updated_at = i.updated_at, lease_token = NULL
              FROM input i
              WHERE d.id = i.id AND d.account_id = i.account_id AND d.lease_token IS NOT DISTINCT FROM i.fence
              RETURNING d.id
            )
            INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, error, response)
            SELECT i.id, i.attempted_at, i.status_code, i.duration_ms, i.error, i.response
            FROM input i JOIN updated u ON u.id = i.id
            RETURNING delivery_id AS id`
      }
    })
    const update = SqlSchema.findAll({
      Request: DeliveryRow,
      Result: Written,
      execute: (row) =>
        sql`UPDATE webhook_deliveries SET ${sql.update(progress(row))} WHERE ${fenced(row)} RETURNING id`
    })
    const attempts = SqlSchema.findAll({
      Request: Schema.String,
      Result: StoredAttempt,
      execute: (deliveryId) =>
        sql`SELECT a.delivery_id, a.attempted_at, a.status_code, a.duration_ms, a.error, a.response
            FROM webhook_attempts a WHERE a.delivery_id = ${deliveryId} ORDER BY a.attempted_at, a.seq`
    })

    // No row written: the fence did not hold (false), or there is no such delivery: for an update,
    // pruned since it was read (retention; false too), for an attempt's record a defect (a leased
    // delivery is never pruned); a row of another account is a defect.
    const written = (delivery: Webhook.WebhookDelivery, gone: "false" | "defect" = "defect") => (rows: ReadonlyArray<unknown>) =>
      rows.length > 0 ? Effect.succeed(true) : Effect.flatMap(findAny(delivery.id).pipe(Effect.orDie), (found) =>
        (found._tag === "None" && gone === "defect") || (found._tag === "Some" && found.value.account_id !== delivery.account_id)
          ? Effect.die(deliveryNotStored(delivery.id))
          : Effect.succeed(false))

    /**
     * Listens until the connection fails: heard meanwhile. A wake-up once listening (what was stored
     * while nobody listened was announced to nobody), and once the connection is lost (the
     * dispatcher, idle for as long as it was heard, polls from then on).
     */
    const listen = (signal: Queue.Queue<void>, heard: { value: boolean }) =>
      Effect.scoped(Effect.gen(function*() {
        const connection = yield* PgConnection.make(sql.config)
        const notices = yield* connection.listen(CHANNEL)
        heard.value = true
        yield* Queue.offer(signal, undefined)
        yield* Effect.forever(Effect.andThen(Queue.takeAll(notices), Queue.offer(signal, undefined)))
      })).pipe(
        Effect.ensuring(Effect.andThen(Effect.sync(() => {
          heard.value = false
        }), Queue.offer(signal, undefined))),
        Effect.catchCause((cause) => Effect.logWarning("webhook dispatcher: listening for new deliveries failed; polling until it listens again", cause)),
        Effect.repeat(Schedule.spaced(options.listenRetryMs))
      )

    const wakeups = Effect.gen(function*() {
      const signal = yield* Queue.sliding<void>(1)
      const heard = { value: false }
      yield* Effect.forkScoped(listen(signal, heard))
      return { next: Queue.take(signal), heard: Effect.sync(() => heard.value) } satisfies DeliveryWakeups
    })

    return WebhookDeliveryRepo.of({
      insert: (...stored) =>
        !Arr.isReadonlyArrayNonEmpty(stored) ? Effect.void : insert(stored).pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("WebhookDeliveryRepoPg.insert")),
      find: (accountId, id) => find({ accountId, id }).pipe(Effect.orDie),
      findAny: (id) => findAny(id).pipe(Effect.orDie),
      search: (query) => {
        const status = statusFilter(query)
        const where: Array<Statement.Fragment> = []
        if (query.account_id !== undefined) where.push(sql`r.account_id = ${query.account_id}`)
        if (query.endpoint_id !== undefined) where.push(sql`r.endpoint_id = ${query.endpoint_id}`)
        if (query.event_id !== undefined) where.push(sql`r.event_id = ${query.event_id}`)
        if (status !== undefined) where.push(sql`r.status = ANY(${status})`)
        if (query.created_from !== undefined) where.push(SearchPg.createdFrom(sql, query.created_from))
        return page(where, query).pipe(Effect.withSpan("WebhookDeliveryRepoPg.search"))
      },
      claimDue: (claim) =>
        claimDue(claim).pipe(
          Effect.map((rows) =>
            rows.map(({ endpoint, event, signing, ...delivery }) => ({
              delivery,
              event: Option.fromNullOr(event),
              endpoint: Option.fromNullOr(endpoint),
              signing: Option.fromNullOr(signing)
            }))
          ),
          Effect.orDie,
          Effect.withSpan("WebhookDeliveryRepoPg.claimDue")
        ),
      wakeups,
      recordAttempts: (batch) => {
        const mismatched = batch.find(({ attempt, delivery }) => attempt.delivery_id !== delivery.id)
        if (mismatched !== undefined) return Effect.die(attemptOfAnotherDelivery(mismatched.attempt.delivery_id, mismatched.delivery.id))
        if (new Set(batch.map(({ delivery }) => delivery.id)).size < batch.length) {
          return Effect.die(new Error("WebhookDeliveryRepoPg.recordAttempts: a delivery twice in one batch"))
        }
        if (batch.length === 0) return Effect.succeed([])
        return recordAttempts(batch).pipe(
          Effect.orDie,
          Effect.flatMap((rows) => {
            const recorded = new Set(rows.map((row) => row.id))
            return Effect.forEach(batch, ({ delivery }) =>
              recorded.has(delivery.id) ? Effect.succeed(true) : written(delivery)([]))
          }),
          Effect.withSpan("WebhookDeliveryRepoPg.recordAttempts")
        )
      },
      // The pause rule's decision, in the caller's unit of work (one statement over the endpoint's
      // rows, by webhook_deliveries_endpoint_idx); rows already so are left alone.
      pause: (decision) =>
        sql`UPDATE webhook_deliveries SET paused = ${decision.paused}
            WHERE endpoint_id = ${decision.endpoint_id} AND status = ANY(${decision.statuses}) AND paused <> ${decision.paused}`.pipe(
          Effect.asVoid,
          Effect.orDie,
          Effect.withSpan("WebhookDeliveryRepoPg.pause")
        ),
      update: (delivery) =>
        update(delivery).pipe(
          Effect.orDie,
          Effect.flatMap(written(delivery, "false")),
          Effect.withSpan("WebhookDeliveryRepoPg.update")
        ),
      attempts: (deliveryId) => attempts(deliveryId).pipe(Effect.map((rows) => rows.map(attemptOf)), Effect.orDie)
    })
  })
)

/** The repository with the default options (wake-ups listen again 1 s after a loss). */
export const layer = layerWith(DEFAULT_OPTIONS)
