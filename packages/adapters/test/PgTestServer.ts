/**
 * vitest's globalSetup: the run's one PostgreSQL, started before any test file and stopped after
 * the last. The server at `DATABASE_URL` when it is set (CI with a server of its own), else one
 * embedded server in a temporary directory. The migrations are applied once, to a template
 * database; each test file copies it into a database of its own (PgTestDatabase.ts), so files
 * neither share rows nor pay for a server start and the migrations each.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Exit, Layer, Scope } from "effect"
import type { TestProject } from "vitest/node"
import * as Embedded from "../src/storage/postgres/Embedded.ts"
import * as PgDatabase from "../src/storage/postgres/PgDatabase.ts"
import { admin, configFor, urlOf } from "./PgTestDatabase.ts"

export default async function setup(project: TestProject) {
  const scope = Effect.runSync(Scope.make())
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "tender-test-pg-"))
  const external = process.env.DATABASE_URL || undefined
  // Distinct per run, so runs sharing an external server never meet.
  const prefix = `tender_t${Date.now().toString(36)}${process.pid}_`
  const template = `${prefix}template`
  let url = external ?? ""
  // A failed start or migration must not leave the embedded server running behind the failed run.
  try {
    if (external === undefined) {
      const server = await Effect.runPromise(Scope.provide(scope)(Embedded.start(dir)))
      url = `postgres://${server.username}:${encodeURIComponent(server.password)}@${server.host}:${server.port}/${server.database}`
      // A throwaway cluster needs no durability: commits need not wait for the disk.
      await Effect.runPromise(admin(url, "ALTER SYSTEM SET fsync = off"))
      await Effect.runPromise(admin(url, "ALTER SYSTEM SET synchronous_commit = off"))
      await Effect.runPromise(admin(url, "ALTER SYSTEM SET full_page_writes = off"))
      await Effect.runPromise(admin(url, "SELECT pg_reload_conf()"))
    }
    await Effect.runPromise(admin(url, `CREATE DATABASE ${template}`))
    // Migrated, then every connection to it closed: a template being copied must have none.
    await Effect.runPromise(Effect.scoped(Layer.build(PgDatabase.layer(configFor(dir, urlOf(url, template))))))
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await fs.rm(dir, { recursive: true, force: true })
    throw error
  }
  project.provide("postgres", { url, template, prefix })

  return async () => {
    if (external !== undefined) {
      const names = await Effect.runPromise(
        Effect.map(admin(url, `SELECT datname FROM pg_database WHERE datname LIKE '${prefix}%'`), (rows) => rows.map((row) => String((row as { datname: string }).datname)))
      )
      for (const name of names) await Effect.runPromise(admin(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    }
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await fs.rm(dir, { recursive: true, force: true })
  }
}
