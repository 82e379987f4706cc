/**
 * A team's own payment service embedding Tender: plain `node:http`, no Tender HTTP server, the use
 * cases of @tender/domain over the ports of @tender/adapters in this process.
 *
 *   POST /payments               {"amount":"25.00","currency":"USD","card":"4242424242424242"}
 *                                a card payment on the provider (sandbox or acme), authorized now, captured later
 *   POST /payments/:id/capture   captures it
 *   POST /payments/:id/refund    {"amount":"10.00"} (optional: the whole payment)
 *   GET  /payments/:id/events    its events, oldest first
 *
 * Storage: PostgreSQL when DATABASE_URL is set (with TENDER_VAULT_KEY, 64 hex characters), the
 * embedded PostgreSQL under TENDER_DATA_DIR with `--postgres`, else memory. Provider: Tender's
 * sandbox, or with `--provider acme` the team's own (acme.mjs) in its place.
 *
 *   node service.mjs [--port 3000] [--postgres] [--provider acme]   serve
 *   node service.mjs --demo [--postgres] [--provider acme]          serve on a free port, call each route once, print, stop
 *
 * Plain JavaScript: runs on Node 22 without type stripping.
 */
import { Infrastructure } from "@tender/adapters"
import { Accounts, CardTokens, EventRepo, Outflows, Payments, UseCases } from "@tender/domain"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { createServer } from "node:http"
import { pathToFileURL } from "node:url"
import * as Acme from "./acme.mjs"

/** Tender's configuration from the environment and the flags. */
export const configOf = (argv = process.argv.slice(2), env = process.env) => {
  const postgres = env.DATABASE_URL !== undefined || argv.includes("--postgres")
  const providerAt = argv.indexOf("--provider")
  return {
    provider: providerAt >= 0 ? argv[providerAt + 1] : "sandbox",
    storage: postgres ? "postgres" : "memory",
    dataDir: env.TENDER_DATA_DIR ?? ".tender",
    databaseUrl: env.DATABASE_URL || undefined,
    vaultKey: env.TENDER_VAULT_KEY || undefined
  }
}

/** Builds Tender (migrating PostgreSQL) and starts the HTTP service; `close` stops both. */
export const start = async (config, port = 0) => {
  const providers = { sandbox: Layer.empty, acme: Acme.layer }
  if (!(config.provider in providers)) throw new Error(`Unknown provider ${config.provider}: sandbox or acme`)
  // Our provider, when it is acme, takes the place of Tender's sandbox (the later layer of a merge wins).
  const layer = UseCases.layer.pipe(Layer.provideMerge(Layer.merge(Infrastructure.layer(config), providers[config.provider])))
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const run = (effect) => Effect.runPromise(Effect.provideContext(effect, context))

  // The service's one merchant: a Tender test account (on the sandbox, or on acme).
  const account = await run(Effect.gen(function*() {
    const accounts = yield* Accounts
    const created = yield* accounts.create({ name: "embed-service", mode: "test" })
    return yield* accounts.get(created.account_id)
  }))

  const routes = {
    "POST /payments": (body) =>
      Effect.gen(function*() {
        const card = yield* (yield* CardTokens).tokenize(account, {
          number: body.card ?? "4242424242424242",
          exp_month: 12,
          exp_year: new Date().getFullYear() + 2,
          cvc: "123"
        })
        const payments = yield* Payments
        const payment = yield* payments.create(account, {
          amount: body.amount,
          currency: body.currency,
          country: body.country ?? "US",
          merchant_reference: body.reference ?? `order-${Date.now()}`,
          capture_method: "manual",
          // Our server holds the card: authorize now, without asking the customer for the CVC again.
          collect_cvv: false,
          payment_method: { code: "card", details: { card_token: card.token } }
        })
        // Which provider took it: the sandbox, or ours.
        const { provider } = yield* payments.getTransaction(account, payment.transaction_id)
        return { ...payment, provider }
      }),
    "POST /payments/:id/capture": (_body, id) => Effect.flatMap(Payments, (payments) => payments.capture(account, { order_id: id })),
    "POST /payments/:id/refund": (body, id) =>
      Effect.flatMap(Outflows, (outflows) => outflows.refund(account, { order_id: id, amount: body.amount })),
    "GET /payments/:id/events": (_body, id) =>
      Effect.gen(function*() {
        yield* (yield* Payments).getOrder(account, id) // this account's, or 404
        const events = yield* (yield* EventRepo).listByOrder(id)
        return events.map((event) => ({ type: event.type, created_at: event.created_at }))
      })
  }

  const server = createServer(async (req, res) => {
    const reply = (status, value) => {
      res.writeHead(status, { "content-type": "application/json" })
      res.end(JSON.stringify(value))
    }
    try {
      const segments = new URL(req.url ?? "/", "http://local").pathname.split("/").filter(Boolean)
      const id = segments[1]
      const key = `${req.method} /${segments.map((s, i) => (i === 1 ? ":id" : s)).join("/")}`
      const route = routes[key]
      if (route === undefined) return reply(404, { error: { code: "not_found" } })
      let text = ""
      for await (const chunk of req) text += chunk
      const exit = await Effect.runPromiseExit(Effect.provideContext(route(text ? JSON.parse(text) : {}, id), context))
      if (Exit.isSuccess(exit)) return reply(200, exit.value)
      // The domain's failures carry a code (validation_failed, order_not_found, …); the status is ours to pick.
      const error = exit.cause.reasons.find((r) => r._tag === "Fail")?.error
      if (error?.code !== undefined) {
        return reply(error.code.endsWith("_not_found") ? 404 : 400, { error: { code: error.code, message: error.message } })
      }
      console.error(exit.cause)
      return reply(500, { error: { code: "internal" } })
    } catch (error) {
      reply(400, { error: { code: "bad_request", message: String(error) } })
    }
  })
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: async () => {
      await new Promise((resolve) => server.close(resolve))
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}

/** The demo: one payment through every route, as a client of the service would call them. */
const demo = async (service) => {
  const call = async (method, path, body) => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const value = await response.json()
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(value)}`)
    return value
  }
  const payment = await call("POST", "/payments", { amount: "25.00", currency: "USD" })
  console.log(`payment ${payment.order_id}: ${payment.status} on ${payment.provider}`)
  const captured = await call("POST", `/payments/${payment.order_id}/capture`)
  console.log(`captured: ${captured.status}`)
  const refund = await call("POST", `/payments/${payment.order_id}/refund`, { amount: "10.00" })
  console.log(`refund ${refund.id}: ${refund.status} ${refund.amount} ${refund.currency}`)
  const events = await call("GET", `/payments/${payment.order_id}/events`)
  console.log(`events: ${events.map((e) => e.type).join(", ")}`)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const argv = process.argv.slice(2)
  const portAt = argv.indexOf("--port")
  const service = await start(configOf(argv), argv.includes("--demo") ? 0 : Number(portAt >= 0 ? argv[portAt + 1] : 3000))
  if (argv.includes("--demo")) {
    try {
      await demo(service)
    } finally {
      await service.close()
    }
  } else {
    console.log(`listening on ${service.url} (${configOf(argv).storage} storage)`)
    const stop = () => service.close().then(() => process.exit(0))
    process.once("SIGINT", stop)
    process.once("SIGTERM", stop)
  }
}
