/**
 * Issue 24: the retention round runs in the `tender serve` process, as configured. A server with
 * `TENDER_RETENTION_DAYS=30` and its round every 300 ms (`TENDER_RETENTION_INTERVAL_MS`) removes an
 * event delivered 100 days ago, with its delivery and attempt, and an expired replay-cache row,
 * while an equally old event whose delivery is owed (paused for a disabled endpoint) stays; and a
 * `tender worker` given a retention that is no whole number of days refuses to start.
 */
import type pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import { makeHome, type Merchant, type Served } from "./support/Tender.ts"

const home = makeHome("tender-retention-")
let served: Served
let db: pg.Pool
let merchant: Merchant & { readonly account_id: string }

beforeAll(async () => {
  served = await home.serve({ TENDER_RETENTION_DAYS: "30", TENDER_RETENTION_INTERVAL_MS: "300" })
  merchant = await home.runJson("accounts", "create", "--name", "Retention")
  db = home.database()
}, 150_000)

afterAll(async () => {
  await db?.end()
  await served?.stop()
  await home.cleanup()
}, 120_000)

/**
 * An event `days` old with one delivery of `status` to endpoint `endpoint` (no such endpoint row is
 * needed) and its attempt, in one transaction: the server's round, every 300 ms, must never meet the
 * delivery without its attempt (it could prune it between the two inserts).
 */
const storeHistory = async (tag: string, days: number, status: "succeeded" | "failed", paused: boolean) => {
  const at = new Date(Date.now() - days * 86_400_000).toISOString()
  const client = await db.connect()
  try {
    await client.query("BEGIN")
    await client.query(
      `INSERT INTO events (id, account_id, type, created_at, livemode, data) VALUES ($1, $2, 'payment.succeeded', $3, false, '{}')`,
      [`evt_${tag}`, merchant.account_id, at]
    )
    await client.query(
      `INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at,
         last_attempt_at, created_at, updated_at, paused)
       VALUES ($1, $2, 'we_retention', $3, 'payment.succeeded', $4, 1, $5, $6, $6, $6, $7)`,
      [`whd_${tag}`, merchant.account_id, `evt_${tag}`, status, status === "failed" ? "2999-01-01T00:00:00Z" : null, at, paused]
    )
    await client.query(
      `INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, error) VALUES ($1, $2, 200, 12, NULL)`,
      [`whd_${tag}`, at]
    )
    await client.query("COMMIT")
  } finally {
    client.release()
  }
}

const count = async (table: string, column: string, value: string) =>
  (await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [value])).rows[0].n as number

it("the serve process prunes delivered history past the retention and expired replay rows; an owed delivery and its event stay", async () => {
  const tag = Date.now().toString(36)
  await storeHistory(`${tag}done`, 100, "succeeded", false)
  await storeHistory(`${tag}owed`, 100, "failed", true)
  await db.query(
    `INSERT INTO replay_signatures (account_id, digest, kind, request_id, expires_at) VALUES ($1, $2, 'request', 'req_old', now() - interval '1 hour')`,
    [merchant.account_id, `${tag}expired`]
  )
  const deadline = Date.now() + 20_000
  // A round prunes the event log first, then the expired replay rows: wait for both.
  const pruned = async () => (await count("events", "id", `evt_${tag}done`)) === 0 && (await count("replay_signatures", "digest", `${tag}expired`)) === 0
  while (!(await pruned()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
  expect(await count("events", "id", `evt_${tag}done`)).toBe(0)
  expect(await count("webhook_deliveries", "id", `whd_${tag}done`)).toBe(0)
  expect(await count("webhook_attempts", "delivery_id", `whd_${tag}done`)).toBe(0)
  expect(await count("replay_signatures", "digest", `${tag}expired`)).toBe(0)
  expect(await count("events", "id", `evt_${tag}owed`)).toBe(1)
  expect(await count("webhook_deliveries", "id", `whd_${tag}owed`)).toBe(1)
  expect(await count("webhook_attempts", "delivery_id", `whd_${tag}owed`)).toBe(1)
}, 60_000)

it("a worker refuses to start with a retention that is no whole number of days, 1 or more", async () => {
  const worker = home.start(["worker"], { TENDER_RETENTION_DAYS: "0" })
  const code = await new Promise<number | null>((resolve) => worker.process.on("exit", (c) => resolve(c)))
  expect(code).not.toBe(0)
  expect(worker.log()).toContain("TENDER_RETENTION_DAYS must be a whole number of days")
}, 120_000)
