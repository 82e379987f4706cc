/**
 * Where the PostgreSQL tests run: the server at `DATABASE_URL` when it is set (CI), else an
 * embedded server in a temporary data directory, removed when the test's scope closes.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import type { TenderConfig } from "../src/Config.ts"

export const externalUrl = process.env.DATABASE_URL || undefined

/** Only for tests against an external server, which cannot generate the key itself. */
const TEST_VAULT_KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

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

/** The shared test database: tests in it create their own rows with random ids. */
export const sharedConfig = Effect.map(tempDir(), (dir) => configFor(dir, externalUrl))

/**
 * A database nobody has migrated: a new embedded cluster, or a new database on the external server
 * (dropped afterwards).
 */
export const freshConfig = Effect.gen(function*() {
  const dir = yield* tempDir()
  if (externalUrl === undefined) return configFor(dir, undefined)
  const name = `tender_test_${Date.now()}_${Math.floor(Math.random() * 1e6)}`
  const admin = (statement: string) =>
    Effect.scoped(Effect.flatMap(PgClient.makeClient({ url: Redacted.make(externalUrl) }), (sql) => sql.unsafe(statement)))
      .pipe(Effect.provide(Reactivity.layer), Effect.orDie)
  yield* Effect.acquireRelease(
    admin(`CREATE DATABASE ${name}`),
    () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  )
  const url = new URL(externalUrl)
  url.pathname = `/${name}`
  return configFor(dir, url.toString())
})
