/**
 * The benchmark's baseline: a bare `node:http` server (no framework, no validation, no auth, no
 * signatures, no card decryption) that writes what Tender writes for a card payment, through the
 * `pg` driver, against the same PostgreSQL as the Tender server under test.
 *
 *   npx node bench/baseline.ts --data-dir <tender data dir> --account <acct_…> [--mode writes|tender-sql] [--port 0] [--pool 10]
 *
 * It reads the embedded server's address from `<dataDir>/pg.json` (written by the `tender serve`
 * that started it), writes only rows of the account it is given (a second account the bench creates,
 * so Tender's own rows are untouched) and prints one line `{"listening":<port>}` on stdout when ready.
 * SIGTERM or SIGINT closes the server and the pool. Statements are named (prepared once per
 * connection), as Tender's are.
 *
 * --mode writes (the baseline): the writes alone, one transaction per request.
 *   POST /v1/payments          INSERT the order (pending) and its transaction (initial), UPDATE both to
 *                              their final status, INSERT the event (payment.succeeded, or
 *                              payment.authorized when capture_method is manual): 7 statements.
 *   POST /v1/payments/capture  `{"order_id"}`: SELECT the order FOR UPDATE and its authorization,
 *                              INSERT the capture (processing), UPDATE it to completed, UPDATE the
 *                              order to succeeded, INSERT payment.succeeded: 8 statements.
 *
 * --mode tender-sql: the statements Tender sends, in the same transactions (read off PostgreSQL's
 * log with log_statement = all): the account lookup, the two vault reads, the reserving
 * transaction, then the recording one that re-reads under FOR UPDATE and rewrites whole rows.
 *   POST /v1/payments          14 statements in 3 autocommits and 2 transactions.
 *   POST /v1/payments/capture  13 statements in 2 autocommits and 2 transactions.
 * What remains between this and Tender is Tender's own work: the Effect runtime, HTTP API and schema
 * decoding/encoding, signatures, the rate limiter, the lock, card decryption and the sandbox.
 */
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { parseArgs } from "node:util"
import pg from "pg"

const { values: args } = parseArgs({
  options: {
    "data-dir": { type: "string" },
    account: { type: "string" },
    mode: { type: "string", default: "writes" },
    port: { type: "string", default: "0" },
    pool: { type: "string", default: "10" }
  }
})
const dataDir = args["data-dir"]
const accountId = args.account
const mode = args.mode
if (dataDir === undefined || accountId === undefined || (mode !== "writes" && mode !== "tender-sql")) {
  console.error("usage: bench/baseline.ts --data-dir <dir> --account <acct_…> [--mode writes|tender-sql] [--port 0] [--pool 10]")
  process.exit(2)
}
const mirror = mode === "tender-sql"

const info = JSON.parse(readFileSync(path.join(dataDir, "pg.json"), "utf8")) as { port: number; password: string }
// Tender's pool is @effect/sql-pg's default of 10 connections.
const pool = new pg.Pool({
  host: "127.0.0.1",
  port: info.port,
  user: "postgres",
  password: info.password,
  database: "tender",
  max: Number(args.pool),
  application_name: `tender-bench-baseline-${mode}`
})

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
/** `prefix_` + 24 base62 characters, as Tender's ids. */
const id = (prefix: string) => {
  const bytes = randomBytes(24)
  let body = ""
  for (const b of bytes) body += ALPHABET[b % 62]
  return `${prefix}_${body}`
}

/** What the vault knows of 4242…: the instrument Tender copies onto the transaction. */
const INSTRUMENT = { type: "card", card_brand: "visa", last4_digits: "4242", bin: "424242", card_funding: "credit" }

class HttpError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

type Queryable = pg.Pool | pg.PoolClient

/** A named statement: parsed once per connection, as Tender's are. */
const statement = (name: string, text: string) =>
  <R extends pg.QueryResultRow = Record<string, unknown>>(db: Queryable, values: ReadonlyArray<unknown>) =>
    db.query<R>({ name, text, values: [...values] })

const inTransaction = async <A>(work: (client: pg.PoolClient) => Promise<A>): Promise<A> => {
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const result = await work(client)
    await client.query("COMMIT")
    return result
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

// --- statements -------------------------------------------------------------------------------

const ORDER_COLUMNS = `id, account_id, livemode, merchant_reference, subtype, status, amount, currency, country,
  payment_method, capture_method, processing_profile, customer, success_url, cancel_url, card_token,
  payment_instrument, received_amount, created_at, updated_at, version`
const TRANSACTION_COLUMNS = `id, order_id, account_id, livemode, kind, status, amount, currency, payment_method,
  processing_profile, provider, provider_transaction_id, decline_code, payment_instrument, parent_transaction_id,
  final, multicapture, next_action, three_ds, expires_at, created_at, updated_at, version`

const insertOrder = statement(
  "insert_order",
  `INSERT INTO orders (${ORDER_COLUMNS})
    VALUES ($1, $2, false, $3, 'direct_payment', 'pending', $4, $5, $6, $7, $8, NULL, NULL, NULL, NULL, $9, NULL, NULL, $10, $10, 1)
    RETURNING id`
)
const insertTransaction = statement(
  "insert_transaction",
  `INSERT INTO transactions (${TRANSACTION_COLUMNS})
    VALUES ($1, $2, $3, false, $4, $5, $6, $7, $8, NULL, 'sandbox', NULL, NULL, $9, $10, $11, NULL, NULL, NULL, NULL, $12, $12, 1)
    RETURNING id`
)
/** writes mode: only the columns that change. */
const updateOrderStatus = statement(
  "update_order_status",
  `UPDATE orders SET status = $3, payment_instrument = $4, updated_at = $5, version = version + 1
    WHERE id = $1 AND account_id = $2 AND version = $6 RETURNING id`
)
const updateTransactionStatus = statement(
  "update_transaction_status",
  `UPDATE transactions SET status = $3, provider_transaction_id = $4, multicapture = $5, updated_at = $6, version = version + 1
    WHERE id = $1 AND account_id = $2 AND version = $7 RETURNING id`
)
/** tender-sql mode: every column rewritten, as Tender's repositories do. */
const updateOrderRow = statement(
  "update_order_row",
  `UPDATE orders SET livemode = $3, merchant_reference = $4, subtype = $5, status = $6, amount = $7, currency = $8,
      country = $9, payment_method = $10, capture_method = $11, processing_profile = $12, customer = $13,
      success_url = $14, cancel_url = $15, card_token = $16, payment_instrument = $17, received_amount = $18,
      created_at = $19, updated_at = $20, version = $21
    WHERE id = $1 AND account_id = $2 AND version = $21 - 1 RETURNING id`
)
const updateTransactionRow = statement(
  "update_transaction_row",
  `UPDATE transactions SET order_id = $3, livemode = $4, kind = $5, status = $6, amount = $7, currency = $8,
      payment_method = $9, processing_profile = $10, provider = $11, provider_transaction_id = $12, decline_code = $13,
      payment_instrument = $14, parent_transaction_id = $15, final = $16, multicapture = $17, next_action = $18,
      three_ds = $19, expires_at = $20, created_at = $21, updated_at = $22, version = $23
    WHERE id = $1 AND account_id = $2 AND version = $23 - 1 RETURNING id`
)
const insertEvent = statement(
  "insert_event",
  `INSERT INTO events (id, account_id, type, created_at, livemode, processing_profile, order_id, data)
    VALUES ($1, $2, $3, $4, false, NULL, $5, $6) RETURNING id`
)
const selectAccount = statement(
  "select_account",
  `SELECT a.id, a.name, a.mode, a.status, a.publishable_key, a.signing_secret, a.ip_allowlist,
      a.processing_profiles, a.vault_enabled, a.rate_limit, a.created_at, a.updated_at, a.version,
      COALESCE((
        SELECT jsonb_agg(jsonb_build_object('hash', k.hash, 'hint', k.hint, 'created_at', k.created_at, 'revoked_at', k.revoked_at)
          ORDER BY k.position)
        FROM account_secret_keys k WHERE k.account_id = a.id
      ), '[]'::jsonb) AS secret_keys
    FROM accounts a WHERE a.id = $1`
)
// The card belongs to Tender's account (the bench vaults one card): read by token only.
const selectCard = statement(
  "select_card",
  `SELECT token, account_id, brand, last4, bin, exp_month, exp_year, funding, holder_name, created_at
    FROM card_vault WHERE token = $1`
)
const selectSealed = statement("select_sealed", `SELECT number_iv, number_ciphertext, number_tag FROM card_vault WHERE token = $1`)
const lockOrder = statement("lock_order", `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 FOR UPDATE`)
const findOrder = statement("find_order", `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 AND account_id = $2`)
const findTransaction = statement("find_transaction", `SELECT ${TRANSACTION_COLUMNS} FROM transactions WHERE id = $1`)
const listTransactions = statement(
  "list_transactions",
  `SELECT ${TRANSACTION_COLUMNS} FROM transactions WHERE order_id = $1 ORDER BY created_at, id`
)
const findAuthorization = statement(
  "find_authorization",
  `SELECT id, provider_transaction_id, payment_instrument FROM transactions
    WHERE order_id = $1 AND kind = 'authorization' AND status = 'completed'`
)

// --- rows as Tender's repositories write them -------------------------------------------------

interface OrderRow {
  id: string
  account_id: string
  livemode: boolean
  merchant_reference: string
  subtype: string
  status: string
  amount: string | number
  currency: string
  country: string
  payment_method: string
  capture_method: string
  processing_profile: string | null
  customer: unknown
  success_url: string | null
  cancel_url: string | null
  card_token: string | null
  payment_instrument: unknown
  received_amount: string | number | null
  created_at: Date | string
  updated_at: Date | string
  version: number
}

interface TransactionRow {
  id: string
  order_id: string
  account_id: string
  livemode: boolean
  kind: string
  status: string
  amount: string | number
  currency: string
  payment_method: string
  processing_profile: string | null
  provider: string
  provider_transaction_id: string | null
  decline_code: string | null
  payment_instrument: unknown
  parent_transaction_id: string | null
  final: boolean | null
  multicapture: boolean | null
  next_action: unknown
  three_ds: string | null
  expires_at: Date | string | null
  created_at: Date | string
  updated_at: Date | string
  version: number
}

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value))

const writeOrderRow = (db: Queryable, o: OrderRow) =>
  updateOrderRow(db, [
    o.id, o.account_id, o.livemode, o.merchant_reference, o.subtype, o.status, o.amount, o.currency, o.country,
    o.payment_method, o.capture_method, o.processing_profile, json(o.customer), o.success_url, o.cancel_url,
    o.card_token, json(o.payment_instrument), o.received_amount, o.created_at, o.updated_at, o.version
  ])

const writeTransactionRow = (db: Queryable, t: TransactionRow) =>
  updateTransactionRow(db, [
    t.id, t.account_id, t.order_id, t.livemode, t.kind, t.status, t.amount, t.currency, t.payment_method,
    t.processing_profile, t.provider, t.provider_transaction_id, t.decline_code, json(t.payment_instrument),
    t.parent_transaction_id, t.final, t.multicapture, json(t.next_action), t.three_ds, t.expires_at, t.created_at,
    t.updated_at, t.version
  ])

const event = (db: Queryable, type: string, orderId: string, at: string, data: Record<string, unknown>) =>
  insertEvent(db, [id("evt"), accountId, type, at, orderId, JSON.stringify(data)])

// --- the two routes ---------------------------------------------------------------------------

interface PaymentBody {
  readonly amount: string
  readonly currency: string
  readonly country: string
  readonly merchant_reference: string
  readonly capture_method?: "automatic" | "manual"
  readonly payment_method: { readonly code: string; readonly details?: { readonly card_token?: string } }
}

const create = async (input: unknown) => {
  const body = input as PaymentBody
  const amount = Math.round(Number(body.amount) * 100)
  if (!Number.isFinite(amount) || typeof body.merchant_reference !== "string" || typeof body.payment_method?.code !== "string") {
    throw new HttpError(400, "bad request")
  }
  const manual = body.capture_method === "manual"
  const token = body.payment_method.details?.card_token ?? null
  const orderId = id("ord")
  const txnId = id("txn")
  const providerId = id("sbx")
  const status = manual ? "authorized" : "succeeded"
  const method = body.payment_method.code
  if (mirror) {
    await selectAccount(pool, [accountId])
    if (token !== null) {
      const card = await selectCard(pool, [token])
      await selectSealed(pool, [token])
      if (card.rowCount === 0) throw new HttpError(404, `no card ${token}`)
    }
  }
  const at = new Date().toISOString()
  const insert = async (client: pg.PoolClient) => {
    const inserted = await insertOrder(client, [
      orderId, accountId, body.merchant_reference, amount, body.currency, body.country, method,
      manual ? "manual" : "automatic", token, at
    ])
    if (inserted.rowCount === 0) throw new HttpError(409, `duplicate merchant_reference ${body.merchant_reference}`)
    await insertTransaction(client, [
      txnId, orderId, accountId, manual ? "authorization" : "payment", "initial", amount, body.currency, method,
      JSON.stringify(INSTRUMENT), null, null, at
    ])
  }
  const eventData = (done: string) => ({
    order_id: orderId, transaction_id: txnId, merchant_reference: body.merchant_reference, subtype: "direct_payment",
    order_status: status, transaction_status: "completed", amount: amount / 100, currency: body.currency,
    payment_method: method, capture_method: manual ? "manual" : "automatic", provider_transaction_id: providerId,
    additional_identifiers: [{ identifier: orderId, type: "order" }], payment_instrument: INSTRUMENT, at: done
  })
  if (!mirror) {
    await inTransaction(async (client) => {
      await insert(client)
      const done = new Date().toISOString()
      await updateOrderStatus(client, [orderId, accountId, status, manual ? null : JSON.stringify(INSTRUMENT), done, 1])
      await updateTransactionStatus(client, [txnId, accountId, "completed", providerId, manual ? false : null, done, 1])
      await event(client, manual ? "payment.authorized" : "payment.succeeded", orderId, done, eventData(done))
    })
  } else {
    await inTransaction(insert)
    await inTransaction(async (client) => {
      const order = (await lockOrder<OrderRow>(client, [orderId])).rows[0]
      const txn = (await findTransaction<TransactionRow>(client, [txnId])).rows[0]
      if (order === undefined || txn === undefined) throw new HttpError(500, `order ${orderId} vanished`)
      const done = new Date().toISOString()
      await writeOrderRow(client, {
        ...order, status, payment_instrument: manual ? null : INSTRUMENT, updated_at: done, version: order.version + 1
      })
      await writeTransactionRow(client, {
        ...txn, status: "completed", provider_transaction_id: providerId, multicapture: manual ? false : null,
        updated_at: done, version: txn.version + 1
      })
      await event(client, manual ? "payment.authorized" : "payment.succeeded", orderId, done, eventData(done))
    })
  }
  return {
    order_id: orderId, transaction_id: txnId, merchant_reference: body.merchant_reference,
    status: manual ? "authorized" : "completed", amount: amount / 100, currency: body.currency,
    provider_transaction_id: providerId, additional_identifiers: [{ identifier: orderId, type: "order" }], next_action: null
  }
}

const capture = async (input: unknown) => {
  const orderId = (input as { readonly order_id?: unknown }).order_id
  if (typeof orderId !== "string") throw new HttpError(400, "order_id is required")
  const captureId = id("txn")
  const providerId = id("sbx")
  const settledEvent = (order: OrderRow, authId: string, authProviderId: string | null, amount: number, done: string) => ({
    order_id: orderId, transaction_id: authId, merchant_reference: order.merchant_reference, subtype: "direct_payment",
    order_status: "succeeded", transaction_status: "completed", amount: amount / 100, currency: order.currency,
    payment_method: order.payment_method, capture_method: "manual", provider_transaction_id: authProviderId,
    additional_identifiers: [{ identifier: orderId, type: "order" }], captured_amount: amount / 100,
    capture_transaction_id: captureId, capture_provider_transaction_id: providerId, at: done
  })
  const reply = (order: OrderRow, amount: number) => ({
    order_id: orderId, transaction_id: captureId, merchant_reference: order.merchant_reference, status: "completed",
    amount: amount / 100, currency: order.currency, provider_transaction_id: providerId,
    additional_identifiers: [{ identifier: orderId, type: "order" }], next_action: null, captured_amount: amount / 100
  })
  const insertCapture = (client: pg.PoolClient, order: OrderRow, auth: { id: string; payment_instrument: unknown }, at: string) =>
    insertTransaction(client, [
      captureId, orderId, accountId, "capture", "processing", order.amount, order.currency, order.payment_method,
      json(auth.payment_instrument), auth.id, true, at
    ])

  if (!mirror) {
    return inTransaction(async (client) => {
      const order = (await lockOrder<OrderRow>(client, [orderId])).rows[0]
      if (order === undefined || order.account_id !== accountId) throw new HttpError(404, `no order ${orderId}`)
      const auth = (await findAuthorization<{ id: string; provider_transaction_id: string; payment_instrument: unknown }>(client, [orderId])).rows[0]
      if (order.status !== "authorized" || auth === undefined) throw new HttpError(409, `order ${orderId} is ${order.status}`)
      const amount = Number(order.amount)
      await insertCapture(client, order, auth, new Date().toISOString())
      const done = new Date().toISOString()
      await updateTransactionStatus(client, [captureId, accountId, "completed", providerId, null, done, 1])
      await updateOrderStatus(client, [orderId, accountId, "succeeded", json(auth.payment_instrument), done, order.version])
      await event(client, "payment.succeeded", orderId, done, settledEvent(order, auth.id, auth.provider_transaction_id, amount, done))
      return reply(order, amount)
    })
  }

  await selectAccount(pool, [accountId])
  if ((await findOrder(pool, [orderId, accountId])).rowCount === 0) throw new HttpError(404, `no order ${orderId}`)
  const authorizationOf = (order: OrderRow, txns: ReadonlyArray<TransactionRow>) => {
    const auth = txns.find((t) => t.kind === "authorization" && t.status === "completed")
    if (order.status !== "authorized" || auth === undefined) throw new HttpError(409, `order ${orderId} is ${order.status}`)
    return auth
  }
  await inTransaction(async (client) => {
    const order = (await lockOrder<OrderRow>(client, [orderId])).rows[0]
    const auth = authorizationOf(order, (await listTransactions<TransactionRow>(client, [orderId])).rows)
    await insertCapture(client, order, auth, new Date().toISOString())
  })
  return inTransaction(async (client) => {
    const order = (await lockOrder<OrderRow>(client, [orderId])).rows[0]
    const txns = (await listTransactions<TransactionRow>(client, [orderId])).rows
    const auth = authorizationOf(order, txns)
    const reserved = txns.find((t) => t.id === captureId)
    if (reserved === undefined) throw new HttpError(500, `capture ${captureId} vanished`)
    const amount = Number(order.amount)
    const done = new Date().toISOString()
    await writeTransactionRow(client, { ...reserved, status: "completed", provider_transaction_id: providerId, updated_at: done, version: reserved.version + 1 })
    await writeOrderRow(client, { ...order, status: "succeeded", payment_instrument: auth.payment_instrument, updated_at: done, version: order.version + 1 })
    await event(client, "payment.succeeded", orderId, done, settledEvent(order, auth.id, auth.provider_transaction_id, amount, done))
    return reply(order, amount)
  })
}

// --- the server -------------------------------------------------------------------------------

const routes: Record<string, (body: unknown) => Promise<unknown>> = {
  "/v1/payments": create,
  "/v1/payments/capture": capture
}

const send = (res: http.ServerResponse, status: number, value: unknown) => {
  const text = JSON.stringify(value)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const server = http.createServer((req, res) => {
  const route = req.method === "POST" ? routes[req.url ?? ""] : undefined
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    if (route === undefined) return send(res, 404, { code: "not_found" })
    let body: unknown
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      return send(res, 400, { code: "invalid_json" })
    }
    route(body).then(
      (value) => send(res, 200, value),
      (error: unknown) =>
        error instanceof HttpError
          ? send(res, error.status, { code: "error", message: error.message })
          : send(res, 500, { code: "internal", message: String(error) })
    )
  })
})
server.keepAliveTimeout = 60_000

const shutdown = () => {
  server.close()
  server.closeAllConnections()
  void pool.end().then(() => process.exit(0), () => process.exit(1))
  setTimeout(() => process.exit(1), 5_000).unref()
}
process.on("SIGTERM", shutdown)
process.on("SIGINT", shutdown)

// Fail fast (before announcing readiness) when the database, the tables or the account are not there.
await pool.query("SELECT 1 FROM orders, transactions, events, card_vault LIMIT 0")
if ((await pool.query("SELECT 1 FROM accounts WHERE id = $1", [accountId])).rowCount !== 1) {
  console.error(`no account ${accountId} in the database`)
  process.exit(1)
}
server.listen(Number(args.port), "127.0.0.1", () => {
  const address = server.address()
  console.log(JSON.stringify({ listening: typeof address === "object" && address !== null ? address.port : null }))
})
