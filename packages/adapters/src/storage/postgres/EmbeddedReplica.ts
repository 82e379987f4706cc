/**
 * A streaming replica of an embedded PostgreSQL (Embedded.ts), for the topology script and the
 * replica tests (`TENDER_READ_DATABASE_URL`). The embedded binaries have no `pg_basebackup`, so it
 * takes a base backup with the low-level API (PostgreSQL docs, "Making a Base Backup Using the Low
 * Level API"):
 *
 *   1. on the primary, a physical replication slot (WAL from here on is kept for the replica),
 *      then `pg_backup_start` on one session;
 *   2. the cluster copied, without what the docs say to leave out (postmaster.pid, pg_wal's and the
 *      runtime directories' contents, temporary files);
 *   3. `pg_backup_stop` on the same session; its label file written into the copy as backup_label,
 *      with standby.signal and `primary_conninfo` / `primary_slot_name` in postgresql.auto.conf;
 *   4. `pg_ctl start` on the copy, on a port of its own: it replays from the backup and then streams.
 *
 *   <replicaDir>/pg/      the replica's cluster (owned by the `postgres` user when we run as root)
 *   <replicaDir>/pg.log   its log
 *
 * The replica is stopped, and its slot dropped, when the calling scope closes. The primary needs
 * nothing beyond initdb's defaults: `wal_level=replica`, `max_wal_senders=10` and a pg_hba line for
 * replication from 127.0.0.1.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Effect, Schema, type Scope } from "effect"
import { InfrastructureError, infrastructureError } from "../../InfrastructureError.ts"
import * as Embedded from "./Embedded.ts"

export interface ReplicaOptions {
  /** `recovery_min_apply_delay` (e.g. `"2s"`): a replica that lags its primary on purpose (tests). */
  readonly applyDelay?: string | undefined
}

export interface EmbeddedReplica {
  readonly host: string
  readonly port: number
  /** The primary's user and password: a physical replica has the primary's roles. */
  readonly username: string
  readonly password: string
  readonly database: string
  /** `postgres://…` of the replica's `tender` database: what `TENDER_READ_DATABASE_URL` takes. */
  readonly url: string
}

const failWith = (what: string) => infrastructureError(`could not start the PostgreSQL replica: ${what}`)
const fail = (message: string) => new InfrastructureError({ message: `could not start the PostgreSQL replica: ${message}` })

const PrimaryInfo = Schema.fromJsonString(Schema.Struct({ port: Schema.Int, password: Schema.String }))

/** Directories whose contents a base backup leaves out (they are rebuilt or meaningless on a copy). */
const EMPTIED = new Set(["pg_wal", "pg_replslot", "pg_dynshmem", "pg_notify", "pg_serial", "pg_snapshots", "pg_stat_tmp", "pg_subtrans"])
/** Files a base backup leaves out wherever they are. */
const SKIPPED = new Set(["postmaster.pid", "postmaster.opts", "backup_label", "tablespace_map", "pg_internal.init", "standby.signal", "recovery.signal"])

/**
 * Copies the cluster as the docs' list says, owned by the server user. Files that vanish while it
 * copies (the primary keeps running: temporary files, dropped relations) are skipped: WAL replay
 * from the backup's start makes the copy consistent whatever it caught mid-change. Of pg_wal only
 * the directories are kept (archive_status, summaries).
 */
const copyCluster = async (from: string, to: string, runAs: Embedded.RunAs) => {
  const own = (target: string) => (runAs === undefined ? Promise.resolve() : fs.chown(target, runAs.uid, runAs.gid))
  const copyDir = async (source: string, target: string, depth: number, emptied: boolean) => {
    await fs.mkdir(target, { mode: 0o700 })
    await own(target)
    const entries = await fs.readdir(source, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return []
      throw error
    })
    for (const entry of entries) {
      const s = path.join(source, entry.name)
      const t = path.join(target, entry.name)
      if (entry.isDirectory()) {
        await copyDir(s, t, depth + 1, depth === 0 && EMPTIED.has(entry.name))
      } else if (!emptied && !SKIPPED.has(entry.name) && !entry.name.startsWith("pgsql_tmp")) {
        try {
          await fs.copyFile(s, t)
          await own(t)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
        }
      }
    }
  }
  await copyDir(from, to, 0, false)
}

const quote = (value: string) => `'${value.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`

/** The replica's settings, appended as pg_basebackup -R would: where to stream from, through which slot. */
const standbySettings = (primaryPort: number, password: string, slot: string, options: ReplicaOptions) => {
  const conninfo = `host=${Embedded.HOST} port=${primaryPort} user=${Embedded.USER} password=${password} application_name=${slot}`
  return [
    "",
    "# Written by Tender's EmbeddedReplica.ts: a streaming replica of the embedded primary.",
    `primary_conninfo = ${quote(conninfo)}`,
    `primary_slot_name = ${quote(slot)}`,
    "hot_standby = on",
    ...(options.applyDelay === undefined ? [] : [`recovery_min_apply_delay = ${quote(options.applyDelay)}`]),
    ""
  ].join("\n")
}

/**
 * Starts a streaming replica of the embedded primary running on `primaryDataDir` (started or joined
 * by Embedded.start) in `replicaDataDir`, which must not hold a cluster yet. Stopped, and its slot
 * dropped, when the scope closes.
 */
export const start = (
  primaryDataDir: string,
  replicaDataDir: string,
  options: ReplicaOptions = {}
): Effect.Effect<EmbeddedReplica, InfrastructureError, Scope.Scope> =>
  Effect.gen(function*() {
    const primary = Embedded.pathsOf(primaryDataDir)
    const paths = Embedded.pathsOf(replicaDataDir)
    const bin = yield* Embedded.binaries
    const runAs = yield* Embedded.serverUser
    const info = yield* Effect.tryPromise({
      try: () => fs.readFile(primary.info, "utf8"),
      catch: failWith(`no embedded primary on ${primaryDataDir} (${primary.info} unreadable)`)
    }).pipe(Effect.flatMap(Schema.decodeUnknownEffect(PrimaryInfo)), Effect.mapError(failWith(`${primary.info} is not a server's record`)))
    yield* Effect.tryPromise({
      try: async () => {
        if (await fs.access(paths.cluster).then(() => true, () => false)) throw new Error(`${paths.cluster} exists`)
        await fs.mkdir(paths.root, { recursive: true })
        if (runAs !== undefined) await fs.chown(paths.root, runAs.uid, runAs.gid)
      },
      catch: failWith(`could not prepare ${paths.root}`)
    })
    const slot = `tender_replica_${randomBytes(6).toString("hex")}`
    const onPrimary = <A, E>(what: string, f: Parameters<typeof Embedded.withMaintenanceClient<A, E>>[2]) =>
      Embedded.withMaintenanceClient(info.port, info.password, f).pipe(Effect.mapError(failWith(what)))

    // One session from pg_backup_start to pg_backup_stop: a non-exclusive backup belongs to it (and
    // is aborted if the session ends, e.g. when the copy fails).
    const backup = yield* onPrimary("the base backup failed", (sql) =>
      Effect.gen(function*() {
        // Reserved before the backup starts, so every WAL segment from its start on is kept for the replica.
        yield* sql`SELECT slot_name FROM pg_create_physical_replication_slot(${slot}, true)`
        yield* sql`SELECT pg_backup_start(${slot}, true)::text AS lsn`
        yield* Effect.tryPromise({
          try: () => copyCluster(primary.cluster, paths.cluster, runAs),
          catch: failWith(`could not copy ${primary.cluster}`)
        })
        const rows = yield* sql<{ labelfile: string; spcmapfile: string | null }>`SELECT labelfile, spcmapfile FROM pg_backup_stop(false)`
        return rows[0]
      }))
    const dropSlot = onPrimary("", (sql) => sql`SELECT pg_drop_replication_slot(${slot})`).pipe(Effect.ignore)
    // From here a failure leaves a slot holding WAL on the primary: drop it then too.
    yield* Effect.addFinalizer(() => dropSlot)

    yield* Effect.tryPromise({
      try: async () => {
        const files: Array<readonly [string, string]> = [
          ["backup_label", backup.labelfile],
          ["standby.signal", ""],
          ...(backup.spcmapfile ? [["tablespace_map", backup.spcmapfile] as const] : [])
        ]
        for (const [name, contents] of files) {
          const file = path.join(paths.cluster, name)
          await fs.writeFile(file, contents, { mode: 0o600 })
          if (runAs !== undefined) await fs.chown(file, runAs.uid, runAs.gid)
        }
        await fs.appendFile(path.join(paths.cluster, "postgresql.auto.conf"), standbySettings(info.port, info.password, slot, options))
      },
      catch: failWith(`could not write the standby's files into ${paths.cluster}`)
    })

    // Stopped before its slot is dropped (finalizers run last added first).
    yield* Effect.addFinalizer(() => Embedded.stop(bin, paths, runAs))
    // A port found free can be taken before the server binds it; a few attempts cover that race.
    const port = yield* Effect.gen(function*() {
      const candidate = yield* Embedded.freePort
      const result = yield* Embedded.pgCtlStart(bin, paths, runAs, candidate)
      if (result.code !== 0) {
        const log = yield* Effect.promise(() => fs.readFile(paths.log, "utf8").catch(() => ""))
        return yield* fail(`pg_ctl start failed: ${Embedded.lastLines(result.output, 3)}\n${Embedded.lastLines(log)}`)
      }
      return candidate
    }).pipe(Effect.retry({ times: 2 }))

    return {
      host: Embedded.HOST,
      port,
      username: Embedded.USER,
      password: info.password,
      database: Embedded.DATABASE,
      url: `postgres://${Embedded.USER}:${encodeURIComponent(info.password)}@${Embedded.HOST}:${port}/${Embedded.DATABASE}`
    }
  }).pipe(Effect.withSpan("EmbeddedReplica.start"))
