/**
 * Where the PostgreSQL tests run: one server for the whole run (PgTestServer.ts, vitest's
 * globalSetup: the server at `DATABASE_URL` when it is set, else one embedded server), where each
 * test file gets its own database, a copy of a template the migrations were applied to once.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted, Schedule } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { expect, inject } from "vitest"
import type { TenderConfig } from "../src/Config.ts"

/** The run's server, as PgTestServer.ts provides it to every test file. */
export interface TestPostgres {
  /** A URL of the server (its maintenance database): where databases are created. */
  readonly url: string
  /** The migrated database each test file's database is copied from. */
  readonly template: string
  /** The prefix of every database this run creates (dropped at the end on an external server). */
  readonly prefix: string
}

declare module "vitest" {
  interface ProvidedContext {
    readonly postgres: TestPostgres
  }
}

/**
 * The tests' vault key: a server reached by URL cannot generate one into a data dir, and every
 * file's database is a copy of one template, so all of them use this one.
 */
export const TEST_VAULT_KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

/** A temporary directory, removed (server files included) when the scope closes. */
export const tempDir = (prefix = "tender-test-") =>
  Effect.acquireRelease(
    Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), prefix))),
    (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
  )

export const configFor = (dataDir: string, databaseUrl: string | undefined): TenderConfig => ({
  storage: "postgres",
  dataDir,
  databaseUrl,
  redisUrl: undefined,
  vaultKey: databaseUrl === undefined ? undefined : TEST_VAULT_KEY
})

/** Runs one statement (CREATE / DROP DATABASE) on the server at `url`, on a connection of its own. */
export const admin = (url: string, statement: string) =>
  Effect.scoped(Effect.flatMap(PgClient.makeClient({ url: Redacted.make(url) }), (sql) => sql.unsafe(statement)))
    .pipe(Effect.provide(Reactivity.layer))

/** `url` with its database replaced by `database`. */
export const urlOf = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

const newName = (prefix: string) => `${prefix}${Date.now().toString(36)}_${Math.floor(Math.random() * 1e9).toString(36)}`

/** A new database on the run's server: a copy of the migrated template, or empty (`template0`). */
const createDatabase = (from: "migrated" | "empty") =>
  Effect.gen(function*() {
    const server = inject("postgres")
    const name = newName(server.prefix)
    const template = from === "migrated" ? server.template : "template0"
    // CREATE DATABASE … TEMPLATE fails while another session is copying the same template: retry.
    yield* admin(server.url, `CREATE DATABASE ${name} TEMPLATE ${template}`).pipe(
      Effect.retry({ times: 20, schedule: Schedule.spaced("200 millis") }),
      Effect.orDie
    )
    return urlOf(server.url, name)
  })

/**
 * Each test file's database, by the file's path: vitest runs files without isolation
 * (vitest.config.ts), so this module, loaded once per worker, outlives a file and serves the next.
 */
const fileDatabases = new Map<string, Promise<string>>()

/**
 * The test file's migrated database: created on first use, a copy of the template. Tests in it
 * create their own rows with random ids; the run's end removes it with the server.
 */
export const fileDatabaseUrl = (): Promise<string> => {
  const file = expect.getState().testPath ?? ""
  let database = fileDatabases.get(file)
  if (database === undefined) {
    database = Effect.runPromise(createDatabase("migrated"))
    fileDatabases.set(file, database)
  }
  return database
}

/** A config of this file's database (with a scratch data dir, removed when the scope closes). */
export const sharedConfig = Effect.gen(function*() {
  const dir = yield* tempDir()
  return configFor(dir, yield* Effect.promise(fileDatabaseUrl))
})

/** A database nobody has migrated: a new empty database on the run's server. */
export const freshConfig = Effect.gen(function*() {
  const dir = yield* tempDir()
  return configFor(dir, yield* createDatabase("empty"))
})

/** This file's database as a test server's storage (startTestServer, the HTTP suites). */
export const fileStorage = async () => ({
  storage: "postgres" as const,
  // Unused: the database is reached by URL and the vault key is given.
  dataDir: ".tender-test",
  databaseUrl: await fileDatabaseUrl(),
  vaultKey: TEST_VAULT_KEY
})
