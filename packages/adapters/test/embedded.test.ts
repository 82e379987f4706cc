/**
 * The embedded PostgreSQL's lifecycle across layer builds and processes: one server per data
 * directory, stopped by its owner only, recovered after a crash, never re-initialised.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Option, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as PgDatabase from "../src/storage/postgres/PgDatabase.ts"
import * as Embedded from "../src/storage/postgres/Embedded.ts"
import { configFor, tempDir } from "./PgTestDatabase.ts"

const embeddedConfig = (dataDir: string) => configFor(dataDir, undefined)

/** Builds the connected layer in its own scope and memo map, as a separate process would. */
const connectIn = (scope: Scope.Scope, dataDir: string) =>
  Layer.buildWithMemoMap(PgDatabase.client(embeddedConfig(dataDir)), Layer.makeMemoMapUnsafe(), scope).pipe(
    Effect.map((context) => <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provide(effect, context))
  )

const serverIdentity = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ port: number; started: Date }>`SELECT inet_server_port() AS port, pg_postmaster_start_time() AS started`
).pipe(Effect.map(([row]) => ({ port: Number(row.port), started: row.started.getTime() })))

const readInfo = (dataDir: string) =>
  Effect.promise(async () => JSON.parse(await fs.readFile(path.join(dataDir, "pg.json"), "utf8")) as {
    port: number
    pid: number
  })

const isRunning = (dataDir: string) => Effect.map(Embedded.status(dataDir), (s) => s.running)

const holdFixture = path.join(import.meta.dirname, "fixtures", "hold-embedded.ts")

/**
 * The fixture holding the embedded server of `dataDir` in a child process (started at `startAt`, an
 * epoch in ms, when given), with what it printed; killed when the scope closes.
 */
const holder = (dataDir: string, startAt?: number) =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [holdFixture, dataDir, ...(startAt === undefined ? [] : [String(startAt)])], {
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    const started = Effect.promise(() =>
      Promise.race([
        new Promise<{ port: number; owned: boolean }>((resolve) =>
          child.stdout.once("data", (chunk: Buffer) => resolve(JSON.parse(chunk.toString("utf8"))))
        ),
        exited.then(() => Promise.reject(new Error(`the fixture exited before starting the server:\n${stderr}`)))
      ])
    )
    return { child, exited, started }
  })

/** Stops a server whose owner was killed: adopt it, then leave (the adopter stops it). */
const stopOrphan = (dataDir: string) =>
  Effect.gen(function*() {
    if (yield* isRunning(dataDir)) yield* Effect.scoped(Embedded.start(dataDir))
  }).pipe(Effect.ignore)

describe("embedded PostgreSQL", () => {
  it.live("two independent layer builds share one server; only the one that started it stops it", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir()
      const first = yield* Scope.make()
      const second = yield* Scope.make()

      const viaFirst = yield* connectIn(first, dataDir)
      const info = yield* readInfo(dataDir)
      expect(info.pid).toBe(process.pid)
      const viaSecond = yield* connectIn(second, dataDir)
      expect(yield* readInfo(dataDir)).toEqual(info)

      const a = yield* viaFirst(serverIdentity)
      const b = yield* viaSecond(serverIdentity)
      expect(a).toEqual(b)
      expect(a.port).toBe(info.port)

      // The joiner leaving does not stop the server under the owner.
      yield* Scope.close(second, Exit.void)
      expect(yield* viaFirst(serverIdentity)).toEqual(a)
      expect(yield* isRunning(dataDir)).toBe(true)

      yield* Scope.close(first, Exit.void)
      expect(yield* isRunning(dataDir)).toBe(false)
    }), 60_000)

  it.live("a second start in the same data directory joins and does not own the server", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir()
      const owner = yield* Embedded.start(dataDir)
      const joiner = yield* Effect.scoped(Embedded.start(dataDir))
      expect(owner.owned).toBe(true)
      expect(joiner.owned).toBe(false)
      expect(joiner.port).toBe(owner.port)
      expect(joiner.password).toBe(owner.password)
      expect(yield* isRunning(dataDir)).toBe(true)
    }), 60_000)

  it.live("data survives a restart: the cluster is initialised once", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir()
      const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
        Effect.scoped(Effect.flatMap(Effect.scope, (scope) => Effect.flatMap(connectIn(scope, dataDir), (via) => via(effect))))
      const version = path.join(dataDir, "pg", "PG_VERSION")

      yield* run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.andThen(sql`CREATE TABLE kept (v text)`, sql`INSERT INTO kept VALUES ('x')`)))
      const initialised = (yield* Effect.promise(() => fs.stat(version))).mtimeMs
      expect(yield* isRunning(dataDir)).toBe(false)

      const rows = yield* run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ v: string }>`SELECT v FROM kept`))
      expect(rows).toEqual([{ v: "x" }])
      expect((yield* Effect.promise(() => fs.stat(version))).mtimeMs).toBe(initialised)
    }), 60_000)

  it.live("an owner killed with SIGKILL leaves a server that the next process adopts and stops", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir()
      // Whatever happens below, leave no process and no server behind.
      yield* Effect.addFinalizer(() => stopOrphan(dataDir))
      const { child, exited, started: starting } = yield* holder(dataDir)
      const started = yield* starting
      expect(started.owned).toBe(true)
      child.kill("SIGKILL")
      yield* Effect.promise(() => exited)
      // The crashed owner could not stop it.
      expect(yield* isRunning(dataDir)).toBe(true)
      expect((yield* readInfo(dataDir)).pid).toBe(child.pid)

      const adopted = yield* Effect.scoped(Effect.gen(function*() {
        const server = yield* Embedded.start(dataDir)
        expect((yield* readInfo(dataDir)).pid).toBe(process.pid)
        return server
      }))
      expect(adopted.owned).toBe(true)
      expect(adopted.port).toBe(started.port)
      expect(yield* isRunning(dataDir)).toBe(false)
    }), 60_000)

  it.live("a stale postmaster.pid and pg.json from a crashed run do not prevent a start", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir()
      const first = yield* Effect.scoped(Embedded.start(dataDir))
      expect(yield* isRunning(dataDir)).toBe(false)
      // What a machine crash leaves: a lock file naming a dead postmaster, an owner that is gone.
      yield* Effect.promise(async () => {
        const pidFile = path.join(dataDir, "pg", "postmaster.pid")
        await fs.writeFile(pidFile, `999999\n${path.join(dataDir, "pg")}\n0\n${first.port}\n\n127.0.0.1\n0 0\nready\n`)
        const info = JSON.parse(await fs.readFile(path.join(dataDir, "pg.json"), "utf8"))
        await fs.writeFile(path.join(dataDir, "pg.json"), JSON.stringify({ ...info, pid: 999999 }))
      })
      const second = yield* Effect.scoped(Effect.gen(function*() {
        const server = yield* Embedded.start(dataDir)
        expect(yield* isRunning(dataDir)).toBe(true)
        return server
      }))
      expect(second.owned).toBe(true)
      expect(Option.isSome((yield* Embedded.status(dataDir)).info)).toBe(true)
    }), 60_000)

  it.live("two processes started at once on a fresh directory: one initialises and owns the server, the other joins it", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir()
      yield* Effect.addFinalizer(() => stopOrphan(dataDir))
      // Both spin until the same instant, so they reach the lock together.
      const at = Date.now() + 1_500
      const [a, b] = yield* Effect.all([holder(dataDir, at), holder(dataDir, at)])
      const [first, second] = yield* Effect.all([a.started, b.started], { concurrency: 2 })
      expect([first.owned, second.owned].sort()).toEqual([false, true])
      expect(second.port).toBe(first.port)
      // Neither died after printing (the loser of an initdb race dies while the winner serves).
      expect(a.child.exitCode).toBeNull()
      expect(b.child.exitCode).toBeNull()
      const owner = first.owned ? a.child : b.child
      expect((yield* readInfo(dataDir)).pid).toBe(owner.pid)
    }), 90_000)

  it.live("a lock file its holder has created but not yet written is not taken for a stale one", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir()
      const paths = Embedded.pathsOf(dataDir)
      // What a contender sees between the holder's exclusive create and its write of the pid.
      yield* Effect.promise(() => fs.writeFile(paths.lock, "", { flag: "wx" }))
      let taken = false
      const contender = yield* Effect.forkChild(Effect.scoped(Effect.andThen(Embedded.startupLock(paths), Effect.sync(() => {
        taken = true
      }))))
      yield* Effect.sleep("600 millis")
      expect(taken).toBe(false)
      // The holder finishes and releases: the contender takes it.
      yield* Effect.promise(() => fs.rm(paths.lock))
      yield* Fiber.join(contender)
      expect(taken).toBe(true)
    }), 30_000)
})
