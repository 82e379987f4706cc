/**
 * The isolation matrix (issue 12, Done when): every route the server has, as the HttpApi value and
 * Server.ROUTES_OUTSIDE_API list them, is probed by other accounts with account A's ids of every
 * kind (orders, transactions, captures, refunds, payouts, transfers, sessions, customers, card
 * tokens, webhook endpoints, deliveries, events, client secrets, references, processing profiles,
 * search cursors), by path parameter, by body field and by query. Each answer must be the spec's
 * not-found code for the route (404), an empty page, or the prober's own object, and must carry none
 * of A's ids, references or secrets that the request did not itself send. A's objects, read through
 * A's own key before and after, must be unchanged.
 *
 * The probers: B, a test-mode account (the same mode as A's objects); L, a live-mode account (keys
 * are per account and mode, so ids also cross modes: contract.md, accounts create --mode); P, a
 * test-mode account with a Stripe channel, for the provider routes that name a channel.
 *
 * A new route without an entry in PROBES fails its own test, saying where to add one.
 */
import { createServer, type Server } from "node:http"
import { signatureHeader } from "@tender/adapters/providers/stripe/StripeSignature"
import type { TenderConfig } from "@tender/adapters/Config"
import { type Credentials, type Reply, send } from "@tender/client/Testing"
import { Channels, TransactionRepo } from "@tender/domain"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api } from "../src/Api.ts"
import { endpointsOf } from "../src/Routes.ts"
import { ROUTES_OUTSIDE_API } from "../src/Server.ts"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"

type Account = Credentials & { readonly account_id: string; readonly publishable_key: string }

/** An account probing A's objects; `live` when its key is a live-mode key. */
interface Prober {
  readonly name: string
  readonly creds: Account
  readonly live: boolean
}

/** A's objects, one of every kind, and the values that name them. */
interface Seed {
  readonly customer: string
  readonly cardToken: string
  /** Manual capture, authorized 100.00 then captured 30.00 with final: false. */
  readonly authorized: { readonly order: string; readonly transaction: string; readonly capture: string; readonly reference: string }
  /** Captured at once; refunded and paid out in part. */
  readonly charged: { readonly order: string; readonly transaction: string; readonly reference: string }
  readonly refund: { readonly id: string; readonly transaction: string; readonly reference: string }
  readonly payout: { readonly id: string; readonly transaction: string; readonly reference: string }
  /** A card transfer awaiting its card (requires_action, collect_card), with its client secret. */
  readonly transfer: { readonly id: string; readonly order: string; readonly transaction: string; readonly reference: string; readonly secret: string }
  readonly session: { readonly id: string; readonly order: string; readonly reference: string }
  /** A payment awaiting the browser (collect_card), with its client secret. */
  readonly sdk: { readonly order: string; readonly transaction: string; readonly secret: string }
  /** A redirect payment (paypal) pending at the sandbox. */
  readonly redirect: { readonly order: string; readonly transaction: string }
  /** A card payment waiting on its 3-D Secure challenge. */
  readonly challenged: { readonly order: string; readonly transaction: string }
  /** An attempt of A's on A's own Stripe channel (in the challenged order), awaiting its 3-D Secure return. */
  readonly onChannel: { readonly channel: string; readonly secret: string; readonly transaction: string }
  /** References A uses that only `own` probes send (B making its own object with them), so no lookup probe finds B's object. */
  readonly spare: { readonly payment: string; readonly transfer: string; readonly session: string }
  readonly endpoint: string
  readonly delivery: string
  readonly event: string
  readonly profile: string
  readonly email: string
  /** A's own search cursors (each search's next page), which must not open A's pages to others. */
  readonly cursors: { readonly orders: string; readonly transactions: string; readonly sessions: string; readonly deliveries: string }
}

interface Context {
  readonly a: Seed
  readonly who: Prober
  /** The Stripe channel of P, and its webhook secret. */
  readonly channel: { readonly id: string; readonly secret: string }
}

/** One route's probe: the prober's requests naming A's objects, each checked against what the spec lets it answer. */
type Probe = (ctx: Context) => Promise<void>

export const isolationSuite = (storage: Pick<TenderConfig, "storage" | "dataDir">) => {
  let server: TestServer
  let receiver: Server
  let receiverUrl = ""
  let a: Account
  let probers: ReadonlyArray<Prober> = []
  let seed: Seed
  let channel: Context["channel"]
  let before: unknown
  let seq = 0
  /** Every webhook delivery the receiver got: A's endpoint at /hooks/<A's account id>, B's at its own. */
  const received: Array<{ readonly path: string; readonly body: string }> = []

  const ref = (label: string) => `iso-${label}-${Date.now()}-${++seq}`
  const api = (creds: Credentials, method: string, path: string, body?: unknown) =>
    send(server, creds, method, path, body === undefined ? {} : { body: JSON.stringify(body) })
  const asA = (method: string, path: string, body?: unknown) => api(a, method, path, body)

  const created = (reply: Reply, status = 200) => {
    expect(reply.status, reply.text).toBe(status)
    return reply.json
  }

  /** Every string of a seed, named by its path (`authorized.order`…): a new seed field is covered by itself. */
  const valuesOf = (value: unknown, name: string): ReadonlyArray<readonly [string, string]> =>
    typeof value === "string"
      ? [[name, value]]
      : typeof value === "object" && value !== null
      ? Object.entries(value).flatMap(([key, inner]) => valuesOf(inner, name === "" ? key : `${name}.${key}`))
      : []

  /** Everything that names one of A's objects or is one of A's secrets. */
  const secretsOf = (s: Seed) => [...valuesOf(s, ""), ["account id", a.account_id] as const]

  /** No value of A's in an answer, except what the request itself sent (an error may echo the id it could not find). */
  const expectNoLeak = (answer: string, sent: string) => {
    const leaked = secretsOf(seed).filter(([, value]) => answer.includes(value) && !sent.includes(value)).map(([name]) => name)
    expect(leaked, `the answer carries A's ${leaked.join(", ")}: ${answer.slice(0, 500)}`).toEqual([])
  }

  /**
   * B's request, with the answer the spec gives another account: 404 and the route's not-found
   * code. Test helpers are test mode's alone: a live key is refused first (403 forbidden, contract.md).
   */
  /**
   * For what the spec gives no not-found code (a card token, a client secret): B's answer with A's
   * value must be the answer to a value never issued, so that it tells B nothing of A's.
   */
  const likeUnknown = async (ctx: Context, method: string, path: string, body: (value: string) => unknown, value: string, unknown: string) => {
    const theirs = await api(ctx.who.creds, method, path, body(value))
    const none = await api(ctx.who.creds, method, path, body(unknown))
    const shape = (reply: Reply) => ({ status: reply.status, code: reply.json?.code, fields: reply.json?.errors?.map((e: { field: string }) => e.field) })
    expect(shape(theirs), `${ctx.who.name}: ${method} ${path} with A's ${value} → ${theirs.text}`).toEqual(shape(none))
    expect(theirs.status, theirs.text).toBeGreaterThanOrEqual(400)
    expectNoLeak(theirs.text, path + JSON.stringify(body(value)))
  }
  const UNKNOWN_TOKEN = "tok_" + "Z".repeat(24)
  const UNKNOWN_CHANNEL = "ch_" + "Z".repeat(24)
  const UNKNOWN_PROFILE = "iso-never-a-profile"
  const UNKNOWN_SECRET = "ord_" + "Z".repeat(24) + "_secret_" + "0".repeat(32)

  const refused = async (ctx: Context, method: string, path: string, body: unknown, code: string, status = 404) => {
    const reply = await api(ctx.who.creds, method, path, body)
    const expected = ctx.who.live && path.startsWith("/v1/test_helpers/") ? { status: 403, code: "forbidden" } : { status, code }
    expect({ status: reply.status, code: reply.json?.code }, `${ctx.who.name}: ${method} ${path} ${JSON.stringify(body) ?? ""} → ${reply.text}`).toEqual(expected)
    expectNoLeak(reply.text, path + JSON.stringify(body ?? null))
  }

  /** A page of results for B that holds nothing (A's objects are not B's to list). */
  const empty = async (ctx: Context, method: string, path: string, body?: unknown) => {
    const reply = await api(ctx.who.creds, method, path, body)
    expect({ status: reply.status, data: reply.json?.data }, `${ctx.who.name}: ${method} ${path} ${JSON.stringify(body) ?? ""} → ${reply.text}`)
      .toEqual({ status: 200, data: [] })
    expectNoLeak(reply.text, path + JSON.stringify(body ?? null))
  }

  /**
   * A request that makes or reads B's own object, naming a value A also uses (a reference is unique
   * per account, never across accounts): never 409 over A's object, never a 5xx, nothing of A's.
   * `status`: B's answer in test mode (L's writes go to its Stripe channel, which nothing answers here:
   * whatever L gets is its own business, so only the 409 and the 5xx are looked for).
   */
  const own = async (ctx: Context, method: string, path: string, body: unknown, status: number) => {
    const reply = await api(ctx.who.creds, method, path, body)
    const label = `${ctx.who.name}: ${method} ${path} ${JSON.stringify(body) ?? ""} → ${reply.text}`
    if (ctx.who.live) {
      expect(reply.status, label).not.toBe(409)
      expect(reply.status, label).toBeLessThan(500)
    } else {
      expect(reply.status, label).toBe(status)
    }
    expectNoLeak(reply.text, path + JSON.stringify(body ?? null))
    return reply
  }

  /** A lookup by a reference both accounts use: B's own object, never A's. */
  const findsOwn = async (ctx: Context, path: string, id: string) => {
    const reply = await api(ctx.who.creds, "GET", path)
    expect({ status: reply.status, id: reply.json?.id }, `${ctx.who.name}: GET ${path} → ${reply.text}`).toEqual({ status: 200, id })
    expectNoLeak(reply.text, path)
  }

  /** A public page or asset (no key): it names no account, so it must carry nothing of A's. */
  const page = async (method: string, path: string, init: RequestInit = {}) => {
    const response = await fetch(server.baseUrl + path, { method, redirect: "manual", ...init })
    const text = await response.text()
    expect(response.status, `${method} ${path} → ${text.slice(0, 300)}`).toBeLessThan(500)
    expectNoLeak(text + (response.headers.get("location") ?? ""), path + String(init.body ?? ""))
    return { status: response.status, text, location: response.headers.get("location") }
  }

  /** The browser SDK's route, with the prober's publishable key. */
  const browser = async (ctx: Context, path: string, body: unknown) => {
    const response = await fetch(server.baseUrl + path, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${ctx.who.creds.publishable_key}`,
        origin: path === "/v1/client/card_tokens" ? new URL(server.baseUrl).origin : "https://shop.example"
      },
      body: JSON.stringify(body)
    })
    const text = await response.text()
    expectNoLeak(text, path + JSON.stringify(body))
    return { status: response.status, error: text === "" ? undefined : JSON.parse(text).error, text }
  }

  const card = (number = "4242424242424242") => ({ number, exp_month: 12, exp_year: 2035, cvc: "123", holder_name: "Ada Isolation" })
  const tokenOf = async (creds: Credentials, number = "4242424242424242") =>
    created(await api(creds, "POST", "/v1/test_helpers/card_tokens", card(number)), 201).token as string

  /** B's own card payment (4242): authorized (manual) or completed (automatic). */
  const ownPayment = async (creds: Credentials, capture: "manual" | "automatic") =>
    created(await api(creds, "POST", "/v1/payments", {
      amount: "20.00", currency: "USD", country: "US", merchant_reference: ref("b-pay"), capture_method: capture,
      payment_method: { code: "card", details: { card_token: await tokenOf(creds), stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
    })) as { order_id: string; transaction_id: string }

  /** B's own payment awaiting the browser (collect_card): its client secret. */
  const sdkPayment = async (creds: Credentials) =>
    created(await api(creds, "POST", "/v1/payments", {
      amount: "12.00", currency: "USD", country: "US", merchant_reference: ref("b-sdk"), payment_method: { code: "card" },
      success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel"
    })).next_action.client_secret as string

  /** Every target field a capture, void, refund or payout takes, each naming one of A's objects. */
  const targets = (s: Seed, of: "authorized" | "charged") => [
    { order_id: s[of].order },
    { transaction_id: s[of].transaction },
    { merchant_reference: s[of].reference }
  ]

  const searches = (path: string, cursor: (s: Seed) => string): Probe => async (ctx) => {
    await empty(ctx, "POST", path, { merchant_reference: ctx.a.authorized.reference })
    await empty(ctx, "POST", path, { merchant_reference: ctx.a.session.reference })
    await empty(ctx, "POST", path, { processing_profile: ctx.a.profile })
    await cursorRefused(ctx, path, cursor(ctx.a))
    await listsOwn(ctx, "POST", path, { limit: 100 })
  }

  /** References A uses that B may use too (the own probes do): in B's objects they are B's, not A's. */
  const shared = (s: Seed) => [...Object.values(s.spare), s.refund.reference, s.payout.reference].join(" ")

  /** B's unfiltered list: B's own objects only. */
  const listsOwn = async (ctx: Context, method: string, path: string, body?: unknown) => {
    const reply = await api(ctx.who.creds, method, path, body)
    expect(reply.status, `${ctx.who.name}: ${method} ${path} → ${reply.text}`).toBe(200)
    expectNoLeak(reply.text, shared(ctx.a))
  }

  /** A's own cursor in B's hands: an empty page or 400 (a cursor is the account's), never A's next page. */
  const cursorRefused = async (ctx: Context, path: string, cursor: string) => {
    const reply = path.startsWith("/v1/webhook_deliveries")
      ? await api(ctx.who.creds, "GET", `${path}?limit=1&cursor=${encodeURIComponent(cursor)}`)
      : await api(ctx.who.creds, "POST", path, { limit: 1, cursor })
    const label = `${ctx.who.name}: A's cursor on ${path} → ${reply.text}`
    if (reply.status === 200) expect(reply.json.data, label).toEqual([])
    else expect({ status: reply.status, code: reply.json?.code }, label).toMatchObject({ status: 400 })
    expectNoLeak(reply.text, cursor)
  }

  /** Ids of A's that name no page or checkout session (the hosted routes' own id is a customer's capability). */
  const otherKinds = (s: Seed) => [s.authorized.order, s.customer, s.refund.id, s.sdk.secret, s.endpoint]

  /**
   * The probes, keyed by "METHOD path" as the route is declared. To add a route: add its entry
   * here, calling it with every id of A's it takes (path, body, query) and saying which answer the
   * spec gives another account (`refused` with the not-found code, `empty`, or `own`).
   */
  const PROBES: Record<string, Probe> = {
    // payments
    "POST /v1/payments": async (ctx) => {
      const base = { amount: "10.00", currency: "USD", country: "US", payment_method: { code: "card", details: { card_token: await tokenOf(probeCreds(ctx)), stored_credential: { initiator: "merchant", reason: "unscheduled" } } } }
      await refused(ctx, "POST", "/v1/payments", { ...base, merchant_reference: ref("b"), customer_id: ctx.a.customer }, "customer_not_found")
      await likeUnknown(ctx, "POST", "/v1/payments", (token) => ({ ...base, merchant_reference: ref("b"), payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } } }), ctx.a.cardToken, UNKNOWN_TOKEN)
      // A reference is unique per account: A's is free for B (not 409, which would tell B that A has it).
      const mine = await own(ctx, "POST", "/v1/payments", { ...base, merchant_reference: ctx.a.spare.payment }, 200)
      if (!ctx.who.live) await findsOwn(ctx, `/v1/orders/by-reference/${encodeURIComponent(ctx.a.spare.payment)}`, mine.json.order_id)
      await likeUnknown(ctx, "POST", "/v1/payments", (profile) => ({ ...base, merchant_reference: ref("b"), processing_profile: profile }), ctx.a.profile, UNKNOWN_PROFILE)
    },
    "POST /v1/payments/capture": async (ctx) => {
      for (const target of targets(ctx.a, "authorized")) await refused(ctx, "POST", "/v1/payments/capture", { ...target, amount: "1.00", final: false }, notFoundOf(target))
      await refused(ctx, "POST", "/v1/payments/capture", { transaction_id: ctx.a.authorized.capture }, "transaction_not_found")
      if (ctx.who.live) return
      // B's own authorization, captured "on" another account's channel.
      const mine = await ownPayment(ctx.who.creds, "manual")
      await likeUnknown(ctx, "POST", "/v1/payments/capture", (channel) => ({ order_id: mine.order_id, amount: "1.00", final: false, channel_id: channel }), ctx.channel.id, UNKNOWN_CHANNEL)
    },
    "POST /v1/payments/void": async (ctx) => {
      for (const target of targets(ctx.a, "authorized")) await refused(ctx, "POST", "/v1/payments/void", target, notFoundOf(target))
    },
    "POST /v1/payments/:id/3ds/complete": async (ctx) => {
      await refused(ctx, "POST", `/v1/payments/${ctx.a.challenged.order}/3ds/complete`, {}, "order_not_found")
    },
    "POST /v1/payments/:id/card_storage_consent": async (ctx) => {
      await refused(ctx, "POST", `/v1/payments/${ctx.a.authorized.order}/card_storage_consent`, { granted: false }, "order_not_found")
      await refused(ctx, "POST", `/v1/payments/${ctx.a.sdk.order}/card_storage_consent`, { granted: true, usage: "one_click" }, "order_not_found")
    },
    // checkout sessions
    "POST /v1/checkout/sessions": async (ctx) => {
      const mine = await own(ctx, "POST", "/v1/checkout/sessions", {
        amount: "30.00", currency: "USD", merchant_reference: ctx.a.spare.session, success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel"
      }, 201)
      if (!ctx.who.live) await findsOwn(ctx, `/v1/checkout/sessions/by-reference/${encodeURIComponent(ctx.a.spare.session)}`, mine.json.id)
    },
    "GET /v1/checkout/sessions/:id": (ctx) => refused(ctx, "GET", `/v1/checkout/sessions/${ctx.a.session.id}`, undefined, "checkout_session_not_found"),
    "GET /v1/checkout/sessions/by-reference/:merchant_reference": (ctx) =>
      refused(ctx, "GET", `/v1/checkout/sessions/by-reference/${encodeURIComponent(ctx.a.session.reference)}`, undefined, "checkout_session_not_found"),
    "POST /v1/checkout/sessions/search": searches("/v1/checkout/sessions/search", (s) => s.cursors.sessions),
    "POST /v1/checkout/sessions/:id/cancel": (ctx) => refused(ctx, "POST", `/v1/checkout/sessions/${ctx.a.session.id}/cancel`, undefined, "checkout_session_not_found"),
    "POST /v1/test_helpers/checkout/sessions/:id/attempt": async (ctx) => {
      await refused(ctx, "POST", `/v1/test_helpers/checkout/sessions/${ctx.a.session.id}/attempt`, { payment_method: { code: "card", details: { card: card() } } }, "checkout_session_not_found")
      if (ctx.who.live) return
      // B's own session paid with A's vaulted card.
      const session = created(await api(ctx.who.creds, "POST", "/v1/checkout/sessions", {
        amount: "30.00", currency: "USD", merchant_reference: ref("b-cs"), success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel"
      }), 201)
      await likeUnknown(ctx, "POST", `/v1/test_helpers/checkout/sessions/${session.id}/attempt`, (token) => ({ payment_method: { code: "card", details: { card_token: token } } }), ctx.a.cardToken, UNKNOWN_TOKEN)
    },
    // orders and transactions
    "GET /v1/orders/:id": async (ctx) => {
      for (const order of orderIds(ctx.a)) await refused(ctx, "GET", `/v1/orders/${order}`, undefined, "order_not_found")
    },
    "GET /v1/orders/by-reference/:merchant_reference": async (ctx) => {
      for (const reference of [ctx.a.authorized.reference, ctx.a.charged.reference, ctx.a.transfer.reference, ctx.a.session.reference]) {
        await refused(ctx, "GET", `/v1/orders/by-reference/${encodeURIComponent(reference)}`, undefined, "order_not_found")
      }
    },
    "POST /v1/orders/search": searches("/v1/orders/search", (s) => s.cursors.orders),
    "POST /v1/orders/:id/amount_mismatch_decision": (ctx) =>
      refused(ctx, "POST", `/v1/orders/${ctx.a.redirect.order}/amount_mismatch_decision`, { decision: "accept" }, "order_not_found"),
    "GET /v1/transactions/:id": async (ctx) => {
      for (const txn of transactionIds(ctx.a)) await refused(ctx, "GET", `/v1/transactions/${txn}`, undefined, "transaction_not_found")
    },
    "POST /v1/transactions/search": searches("/v1/transactions/search", (s) => s.cursors.transactions),
    // transfers
    "POST /v1/transfers": async (ctx) => {
      const body = (token: string, reference: string) => ({ amount: "30.00", currency: "USD", country: "US", merchant_reference: reference, payment_method: { code: "card", details: { card_token: token } } })
      await likeUnknown(ctx, "POST", "/v1/transfers", (token) => body(token, ref("b-tr")), ctx.a.cardToken, UNKNOWN_TOKEN)
      if (ctx.who.live) return
      const token = await tokenOf(ctx.who.creds)
      await likeUnknown(ctx, "POST", "/v1/transfers", (channel) => ({ ...body(token, ref("b-tr")), channel_id: channel }), ctx.channel.id, UNKNOWN_CHANNEL)
      await likeUnknown(ctx, "POST", "/v1/transfers", (profile) => ({ ...body(token, ref("b-tr")), processing_profile: profile }), ctx.a.profile, UNKNOWN_PROFILE)
      const mine = await own(ctx, "POST", "/v1/transfers", body(await tokenOf(ctx.who.creds), ctx.a.spare.transfer), 201)
      await findsOwn(ctx, `/v1/orders/by-reference/${encodeURIComponent(ctx.a.spare.transfer)}`, mine.json.order_id)
    },
    "GET /v1/transfers/:id": (ctx) => refused(ctx, "GET", `/v1/transfers/${ctx.a.transfer.id}`, undefined, "transfer_not_found"),
    "POST /v1/transfers/:order_id/execute": async (ctx) => {
      await refused(ctx, "POST", `/v1/transfers/${ctx.a.transfer.order}/execute`, {}, "transfer_not_found")
      await refused(ctx, "POST", `/v1/transfers/${ctx.a.transfer.order}/execute`, { card_token: ctx.a.cardToken }, "transfer_not_found")
      if (ctx.who.live) return
      // B's own card transfer executed with A's vaulted card.
      const mine = created(await api(ctx.who.creds, "POST", "/v1/transfers", {
        amount: "30.00", currency: "USD", country: "US", merchant_reference: ref("b-tr"), payment_method: { code: "card", details: { card_token: await tokenOf(ctx.who.creds) } }
      }), 201)
      await likeUnknown(ctx, "POST", `/v1/transfers/${mine.order_id}/execute`, (token) => ({ card_token: token }), ctx.a.cardToken, UNKNOWN_TOKEN)
    },
    // payment methods, test helpers, vault: nothing of an account's to name
    "GET /v1/payment-methods": async (ctx) => void await own(ctx, "GET", "/v1/payment-methods?country=US&currency=USD", undefined, 200),
    "POST /v1/test_helpers/card_tokens": async (ctx) => {
      if (ctx.who.live) await refused(ctx, "POST", "/v1/test_helpers/card_tokens", card(), "forbidden")
      else await own(ctx, "POST", "/v1/test_helpers/card_tokens", card(), 201)
    },
    "POST /v1/test_helpers/orders/:order_id/simulate": async (ctx) => {
      for (const order of [ctx.a.redirect.order, ctx.a.challenged.order, ctx.a.authorized.order]) {
        await refused(ctx, "POST", `/v1/test_helpers/orders/${order}/simulate`, { outcome: "fail" }, "order_not_found")
      }
    },
    "POST /v1/test_helpers/client_secrets/expire": async (ctx) => {
      for (const secret of [ctx.a.sdk.secret, ctx.a.transfer.secret]) {
        if (ctx.who.live) await refused(ctx, "POST", "/v1/test_helpers/client_secrets/expire", { client_secret: secret }, "forbidden")
        else await likeUnknown(ctx, "POST", "/v1/test_helpers/client_secrets/expire", (value) => ({ client_secret: value }), secret, UNKNOWN_SECRET)
      }
    },
    "POST /v1/vault/access_tokens": async (ctx) => {
      const reply = await api(ctx.who.creds, "POST", "/v1/vault/access_tokens", {})
      expect({ status: reply.status, code: reply.json?.code }).toEqual({ status: 403, code: "vault_not_enabled" })
      expectNoLeak(reply.text, "")
    },
    // webhooks
    "POST /v1/webhook_endpoints": async (ctx) => {
      // B's endpoint at the same receiver as A's (its own path): it must hear only of B's objects (last test).
      // (Not L: a live endpoint must be a public https host, and it names nothing of A's either.)
      if (!ctx.who.live) await own(ctx, "POST", "/v1/webhook_endpoints", { url: `${receiverUrl}/${ctx.who.creds.account_id}`, enabled_events: ["*"] }, 201)
    },
    "GET /v1/webhook_endpoints": (ctx) => listsOwn(ctx, "GET", "/v1/webhook_endpoints"),
    "GET /v1/webhook_endpoints/:id": (ctx) => refused(ctx, "GET", `/v1/webhook_endpoints/${ctx.a.endpoint}`, undefined, "webhook_not_found"),
    "POST /v1/webhook_endpoints/:id": (ctx) =>
      refused(ctx, "POST", `/v1/webhook_endpoints/${ctx.a.endpoint}`, { url: "https://attacker.example/hook", status: "disabled" }, "webhook_not_found"),
    "DELETE /v1/webhook_endpoints/:id": (ctx) => refused(ctx, "DELETE", `/v1/webhook_endpoints/${ctx.a.endpoint}`, undefined, "webhook_not_found"),
    "GET /v1/webhook_deliveries": async (ctx) => {
      await empty(ctx, "GET", `/v1/webhook_deliveries?endpoint_id=${ctx.a.endpoint}`)
      await empty(ctx, "GET", `/v1/webhook_deliveries?event_id=${ctx.a.event}`)
      await empty(ctx, "GET", `/v1/webhook_deliveries?endpoint_id=${ctx.a.endpoint}&event_id=${ctx.a.event}&status=succeeded`)
      await cursorRefused(ctx, "/v1/webhook_deliveries", ctx.a.cursors.deliveries)
      await listsOwn(ctx, "GET", "/v1/webhook_deliveries?limit=100")
    },
    "GET /v1/webhook_deliveries/:id": (ctx) => refused(ctx, "GET", `/v1/webhook_deliveries/${ctx.a.delivery}`, undefined, "webhook_delivery_not_found"),
    "POST /v1/webhook_deliveries/:id/retry": (ctx) =>
      refused(ctx, "POST", `/v1/webhook_deliveries/${ctx.a.delivery}/retry`, undefined, "webhook_delivery_not_found"),
    // events (the feed reads from a position, which is no account's: B from the very first reads B's events only)
    "GET /v1/events": async (ctx) => {
      await listsOwn(ctx, "GET", "/v1/events?after=0.0&limit=100")
      await listsOwn(ctx, "GET", `/v1/events?after=0.0&limit=100&types=payment.succeeded,payment.authorized`)
    },
    "GET /v1/events/:id": (ctx) => refused(ctx, "GET", `/v1/events/${ctx.a.event}`, undefined, "not_found"),
    // customers
    "POST /v1/customers": async (ctx) => void await own(ctx, "POST", "/v1/customers", { email: ctx.a.email }, 201),
    "GET /v1/customers/:id": (ctx) => refused(ctx, "GET", `/v1/customers/${ctx.a.customer}`, undefined, "customer_not_found"),
    // refunds and payouts
    "POST /v1/refunds": async (ctx) => {
      for (const target of targets(ctx.a, "charged")) await refused(ctx, "POST", "/v1/refunds", { ...target, amount: "1.00" }, "original_transaction_not_found")
      await refused(ctx, "POST", "/v1/refunds", { transaction_id: ctx.a.authorized.capture, amount: "1.00" }, "original_transaction_not_found")
      if (ctx.who.live) return
      // B's own payment: refunded "on" another account's channel, and with A's refund reference (per account: B's to use).
      const mine = await ownPayment(ctx.who.creds, "automatic")
      await likeUnknown(ctx, "POST", "/v1/refunds", (channel) => ({ order_id: mine.order_id, amount: "1.00", channel_id: channel }), ctx.channel.id, UNKNOWN_CHANNEL)
      await own(ctx, "POST", "/v1/refunds", { order_id: mine.order_id, amount: "1.00", refund_reference: ctx.a.refund.reference }, 201)
    },
    "GET /v1/refunds/:id": (ctx) => refused(ctx, "GET", `/v1/refunds/${ctx.a.refund.id}`, undefined, "not_found"),
    "POST /v1/payouts": async (ctx) => {
      for (const target of targets(ctx.a, "charged")) {
        await refused(ctx, "POST", "/v1/payouts", { ...target, amount: "1.00", payout_reference: ref("b-po") }, "original_transaction_not_found")
      }
      if (ctx.who.live) return
      const mine = await ownPayment(ctx.who.creds, "automatic")
      await own(ctx, "POST", "/v1/payouts", { order_id: mine.order_id, amount: "1.00", payout_reference: ctx.a.payout.reference }, 201)
    },
    "GET /v1/payouts/:id": (ctx) => refused(ctx, "GET", `/v1/payouts/${ctx.a.payout.id}`, undefined, "payout_not_found"),

    // Outside the HttpApi value. Public documents and assets: no account, nothing of A's.
    "GET /v1/openapi.json": async () => void await page("GET", "/v1/openapi.json"),
    "GET /docs": async () => void await page("GET", "/docs"),
    // Operations (Health.ts, Metrics.ts): no account; the metrics' labels are route templates, never A's ids.
    "GET /healthz": async () => void await page("GET", "/healthz"),
    "GET /readyz": async () => void await page("GET", "/readyz"),
    "GET /metrics": async () => void await page("GET", "/metrics"),
    "GET /sdk/v1/tender.js": async () => void await page("GET", "/sdk/v1/tender.js"),
    "GET /fields/v1/card.html": async () => void await page("GET", "/fields/v1/card.html"),
    "GET /fields/v1/card.js": async () => void await page("GET", "/fields/v1/card.js"),
    "GET /fields/v1/challenge.html": async () => void await page("GET", "/fields/v1/challenge.html"),
    "GET /fields/v1/challenge.js": async () => void await page("GET", "/fields/v1/challenge.js"),
    "GET /hosted/v1/checkout.js": async () => void await page("GET", "/hosted/v1/checkout.js"),
    "GET /hosted/v1/return.js": async () => void await page("GET", "/hosted/v1/return.js"),
    // Hosted checkout and sandbox pages: public, the id in the URL is the customer's capability (an
    // unguessable id of the one object the page serves). Any other id of A's names no page.
    "GET /checkout/:id": hostedRefuses("GET", (id) => `/checkout/${id}`),
    "POST /checkout/:id": hostedRefuses("POST", (id) => `/checkout/${id}`),
    "POST /checkout/:id/cancel": hostedRefuses("POST", (id) => `/checkout/${id}/cancel`),
    "POST /checkout/:id/card": hostedRefuses("POST", (id) => `/checkout/${id}/card`),
    "GET /checkout/:id/continue": hostedRefuses("GET", (id) => `/checkout/${id}/continue`),
    "GET /sandbox/redirect/:id": hostedRefuses("GET", (id) => `/sandbox/redirect/${id}`),
    "POST /sandbox/redirect/:id": hostedRefuses("POST", (id) => `/sandbox/redirect/${id}`),
    "GET /sandbox/3ds/:id": hostedRefuses("GET", (id) => `/sandbox/3ds/${id}`),
    "POST /sandbox/3ds/:id": hostedRefuses("POST", (id) => `/sandbox/3ds/${id}`),
    "GET /sandbox/voucher/:id": hostedRefuses("GET", (id) => `/sandbox/voucher/${id}`),
    "POST /sandbox/voucher/:id": hostedRefuses("POST", (id) => `/sandbox/voucher/${id}`),
    "GET /sandbox/qr/:id.svg": hostedRefuses("GET", (id) => `/sandbox/qr/${id}.svg`),
    // Provider routes name a channel: P's channel with A's transactions is not A's business.
    // The GET reads nothing (a page whose form posts the same URL back, contract.md: a GET never
    // authorizes); its POST is where the channel is checked.
    "GET /providers/:channel_id/return": async (ctx) => {
      for (const txn of [ctx.a.onChannel.transaction, ctx.a.challenged.transaction, ctx.a.authorized.transaction]) {
        const path = `/providers/${ctx.channel.id}/return?tender_reference=${txn}`
        expect((await page("GET", path)).status).toBe(200)
        expect((await page("POST", path, { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "" })).status).toBe(404)
      }
    },
    "POST /providers/:channel_id/return": async (ctx) => {
      const body = `tender_reference=${ctx.a.onChannel.transaction}&redirectResult=x`
      expect((await page("POST", `/providers/${ctx.channel.id}/return`, { headers: { "content-type": "application/x-www-form-urlencoded" }, body })).status).toBe(404)
    },
    "POST /providers/:channel_id/notifications": async (ctx) => {
      const notify = (channelId: string, secret: string, payload: string) =>
        page("POST", `/providers/${channelId}/notifications`, {
          headers: { "content-type": "application/json", "stripe-signature": signatureHeader(payload, secret, Math.floor(Date.now() / 1000)) },
          body: payload
        })
      const event = (type: string, object: object) => JSON.stringify({ id: `evt_iso_${++seq}`, object: "event", type, created: Math.floor(Date.now() / 1000), data: { object } })
      const onChannel = event("payment_intent.succeeded", {
        id: "pi_IsoStripeA", amount: 4000, amount_capturable: 0, amount_received: 4000, currency: "usd", metadata: { tender_reference: ctx.a.onChannel.transaction }
      })
      // On A's channel, signed with P's secret: refused like a channel that does not exist (401), nothing applied.
      const forged = await notify(ctx.a.onChannel.channel, ctx.channel.secret, onChannel)
      const nowhere = await notify(UNKNOWN_CHANNEL, ctx.channel.secret, onChannel)
      expect({ status: forged.status, text: forged.text.replace(/req_\w+/, "") }).toEqual({ status: 401, text: nowhere.text.replace(/req_\w+/, "") })
      // P's own Stripe channel, signed with P's own secret, claiming A's attempts succeeded or failed and
      // A's refund failed: acknowledged (Stripe must not retry) and applied to nothing of A's.
      for (const [type, object] of [
        ["payment_intent.succeeded", { id: "pi_IsoStripeA", amount: 4000, amount_capturable: 0, amount_received: 4000, currency: "usd", metadata: { tender_reference: ctx.a.onChannel.transaction } }],
        ["payment_intent.succeeded", { id: "pi_iso", amount: 10000, amount_capturable: 0, amount_received: 10000, currency: "usd", metadata: { tender_reference: ctx.a.authorized.transaction } }],
        ["payment_intent.payment_failed", { id: "pi_iso2", amount: 1200, amount_capturable: 0, amount_received: 0, currency: "usd", metadata: { tender_reference: ctx.a.sdk.transaction } }],
        ["refund.updated", { id: "re_iso", amount: 100, currency: "usd", payment_intent: "pi_iso", status: "failed", metadata: { tender_reference: ctx.a.refund.transaction } }]
      ] as const) {
        const answer = await notify(ctx.channel.id, ctx.channel.secret, event(type, object))
        expect(answer.status, answer.text).toBe(200)
      }
    },
    // The browser SDK's routes: the prober's publishable key with A's client secrets and token.
    "POST /v1/client/session": clientRefuses("/v1/client/session", () => ({})),
    "POST /v1/client/payment_status": clientRefuses("/v1/client/payment_status", () => ({})),
    "POST /v1/client/card_tokens": clientRefuses("/v1/client/card_tokens", () => card()),
    "POST /v1/client/pay": async (ctx) => {
      await clientRefuses("/v1/client/pay", (s) => ({ token: s.cardToken }))(ctx)
      if (ctx.who.live) return
      // B's own secret paying with A's vaulted card: the token is not this secret's.
      const secret = await sdkPayment(ctx.who.creds)
      const theirs = await browser(ctx, "/v1/client/pay", { client_secret: secret, token: ctx.a.cardToken })
      const none = await browser(ctx, "/v1/client/pay", { client_secret: secret, token: UNKNOWN_TOKEN })
      expect({ status: theirs.status, code: theirs.error?.code }, theirs.text).toEqual({ status: none.status, code: none.error?.code })
      expect(theirs.status, theirs.text).toBeGreaterThanOrEqual(400)
    },
    "OPTIONS /v1/client/session": preflight("/v1/client/session"),
    "OPTIONS /v1/client/card_tokens": preflight("/v1/client/card_tokens"),
    "OPTIONS /v1/client/pay": preflight("/v1/client/pay"),
    "OPTIONS /v1/client/payment_status": preflight("/v1/client/payment_status")
  }

  function probeCreds(ctx: Context) {
    // A live key cannot make a test card token; a well-formed token of B's own does not matter there.
    return ctx.who.live ? probers[0]!.creds : ctx.who.creds
  }

  function notFoundOf(target: object) {
    return "transaction_id" in target ? "transaction_not_found" : "order_not_found"
  }

  function orderIds(s: Seed) {
    return [s.authorized.order, s.charged.order, s.transfer.order, s.session.order, s.sdk.order, s.redirect.order, s.challenged.order]
  }

  function transactionIds(s: Seed) {
    return [s.authorized.transaction, s.authorized.capture, s.charged.transaction, s.refund.transaction, s.payout.transaction, s.transfer.transaction, s.sdk.transaction, s.redirect.transaction, s.challenged.transaction, s.onChannel.transaction]
  }

  function hostedRefuses(method: string, path: (id: string) => string): Probe {
    return async (ctx) => {
      // No key on these routes: who asks makes no difference, so one prober's pass is the whole probe.
      if (ctx.who.live) return
      for (const id of otherKinds(ctx.a)) {
        // A same-site post, as the page's own form sends it: the probe must reach the lookup of the id.
        const form = { headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }, body: "method=card" }
        const answer = await page(method, path(id), method === "POST" ? form : {})
        expect(answer.status, `${method} ${path(id)} → ${answer.text.slice(0, 300)}`).toBeOneOf([400, 404])
      }
    }
  }

  function clientRefuses(path: string, body: (s: Seed) => Record<string, unknown>): Probe {
    return async (ctx) => {
      for (const secret of [ctx.a.sdk.secret, ctx.a.transfer.secret]) {
        const answer = await browser(ctx, path, { ...body(ctx.a), client_secret: secret })
        expect({ status: answer.status, code: answer.error?.code }, answer.text).toEqual({ status: 401, code: "client_secret_invalid" })
      }
    }
  }

  function preflight(path: string): Probe {
    return async (ctx) => {
      const response = await fetch(server.baseUrl + path, {
        method: "OPTIONS",
        headers: { origin: "https://shop.example", "access-control-request-method": "POST", authorization: `Bearer ${ctx.who.creds.publishable_key}` }
      })
      const text = await response.text()
      expect(response.status).toBeLessThan(300)
      expectNoLeak(text, "")
    }
  }

  /** Every route the server serves, as "METHOD path": the HttpApi value's endpoints, then the rest. */
  const routes = (): ReadonlyArray<string> => [...endpointsOf(Api), ...ROUTES_OUTSIDE_API].map((route) => `${route.method} ${route.path}`)

  /** A's objects as A reads them (through A's own key), and A's client secrets as the browser reads them. */
  const snapshot = async (s: Seed) => {
    const reads: Record<string, unknown> = {}
    const paths = [
      ...orderIds(s).map((id) => `/v1/orders/${id}`),
      ...transactionIds(s).map((id) => `/v1/transactions/${id}`),
      `/v1/refunds/${s.refund.id}`,
      `/v1/payouts/${s.payout.id}`,
      `/v1/transfers/${s.transfer.id}`,
      `/v1/checkout/sessions/${s.session.id}`,
      `/v1/customers/${s.customer}`,
      "/v1/webhook_endpoints",
      "/v1/webhook_deliveries?limit=100",
      `/v1/webhook_deliveries/${s.delivery}`
    ]
    for (const path of paths) {
      const reply = await asA("GET", path)
      reads[path] = { status: reply.status, body: reply.json }
    }
    for (const search of ["/v1/orders/search", "/v1/transactions/search", "/v1/checkout/sessions/search"]) {
      const reply = await asA("POST", search, { limit: 100 })
      reads[search] = { status: reply.status, body: reply.json }
    }
    for (const secret of [s.sdk.secret, s.transfer.secret]) {
      const response = await fetch(`${server.baseUrl}/v1/client/session`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${a.publishable_key}`, origin: "https://shop.example" },
        body: JSON.stringify({ client_secret: secret })
      })
      reads[`client ${secret.slice(0, 12)}`] = { status: response.status, body: await response.json() }
    }
    for (const order of orderIds(s)) reads[`events ${order}`] = (await Effect.runPromise(server.events(order))).map((e) => e.type)
    return reads
  }

  /** Waits until A's objects stop changing (deliveries sent, the settlement worker done). */
  const settled = async (s: Seed) => {
    const deadline = Date.now() + 20_000
    let last = await snapshot(s)
    for (;;) {
      // Over a second apart: the same signed search in the same second would be a replayed write.
      await new Promise((r) => setTimeout(r, 1_100))
      const next = await snapshot(s)
      if (JSON.stringify(next) === JSON.stringify(last)) return next
      if (Date.now() > deadline) throw new Error("A's objects never settled")
      last = next
    }
  }

  const until = async <T>(read: () => Promise<T | undefined>): Promise<T> => {
    const deadline = Date.now() + 15_000
    for (;;) {
      const value = await read()
      if (value !== undefined) return value
      if (Date.now() > deadline) throw new Error("timed out")
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  /** A Stripe channel of the account, with a webhook secret of its own (never called: see beforeAll). */
  const stripe = async (owner: Account, mode: "test" | "live") => {
    const secret = `whsec_${owner.account_id.replace(/[^A-Za-z0-9]/g, "")}`
    const added = await server.run(Effect.gen(function*() {
      return yield* (yield* Channels).add(owner.account_id, {
        provider: "stripe", mode, methods: null, currencies: null, countries: null, priority: 0,
        credentials: { secret_key: `sk_${mode}_isolation`, webhook_secret: secret }
      })
    }))
    return { id: added.id, secret }
  }

  /**
   * A's attempt on A's own Stripe channel, waiting on its 3-D Secure return with its authorization in doubt: what no request makes
   * here (no Stripe), stored beside the challenged attempt of A's order. The channel comes after
   * every other seed, so A's other objects stay the sandbox's.
   */
  const seedOnChannel = async (challengedTransaction: string) => {
    const own = await stripe(a, "test")
    const id = `txn_IsoStripe${Date.now()}`
    await server.run(Effect.gen(function*() {
      const transactions = yield* TransactionRepo
      const template = Option.getOrThrow(yield* transactions.findAny(challengedTransaction))
      yield* transactions.insert({
        ...template,
        id: id as typeof template.id,
        provider: "stripe",
        channel_id: own.id,
        provider_transaction_id: "pi_IsoStripeA",
        status: "processing",
        three_ds: "required",
        next_action: null,
        expires_at: null,
        // Its authorization in doubt, so that a notice naming it would be applied if it reached it;
        // reconciliation is told to ask again only far in the future (it would call Stripe).
        pending_call: { key: `${id}:authorize`, operation: "authorize", at: new Date().toISOString(), retry_at: "2099-01-01T00:00:00.000Z" }
      })
    }))
    return { channel: own.id, secret: own.secret, transaction: id }
  }

  const seedA = async (): Promise<Seed> => {
    const profile = ref("profile")
    await Effect.runPromise(server.accounts.addProfile(a.account_id, profile, null))
    const email = `${ref("ada")}@example.com`
    const endpoint = created(await asA("POST", "/v1/webhook_endpoints", { url: `${receiverUrl}/${a.account_id}`, enabled_events: ["*"] }), 201).id as string
    const customer = created(await asA("POST", "/v1/customers", { email, name: "Ada Isolation" }), 201).id as string
    const cardToken = await tokenOf(a)
    const mit = (token: string) => ({ code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } })
    const base = { currency: "USD", country: "US", processing_profile: profile }

    const authReference = ref("auth")
    const auth = created(await asA("POST", "/v1/payments", {
      ...base, amount: "100.00", capture_method: "manual", merchant_reference: authReference, payment_method: mit(cardToken),
      customer_id: customer, card_storage_consent: { granted: true, usage: "one_click" }
    }))
    expect(auth.status).toBe("authorized")
    const capture = created(await asA("POST", "/v1/payments/capture", { order_id: auth.order_id, amount: "30.00", final: false }))

    const chargeReference = ref("charge")
    const charge = created(await asA("POST", "/v1/payments", { ...base, amount: "25.00", merchant_reference: chargeReference, payment_method: mit(await tokenOf(a)) }))
    expect(charge.status).toBe("completed")
    const refundReference = ref("re")
    const refund = created(await asA("POST", "/v1/refunds", { order_id: charge.order_id, amount: "5.00", refund_reference: refundReference }), 201)
    const payoutReference = ref("po")
    const payout = created(await asA("POST", "/v1/payouts", { order_id: charge.order_id, amount: "1.00", payout_reference: payoutReference }), 201)

    const transferReference = ref("tr")
    const transfer = created(await asA("POST", "/v1/transfers", {
      amount: "30.00", currency: "USD", country: "US", merchant_reference: transferReference, processing_profile: profile, payment_method: { code: "card", details: { card_token: await tokenOf(a) } }
    }), 201)
    expect(transfer.next_action?.client_secret).toEqual(expect.any(String))

    const sessionReference = ref("cs")
    const session = created(await asA("POST", "/v1/checkout/sessions", {
      amount: "30.00", currency: "USD", merchant_reference: sessionReference, processing_profile: profile, success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel"
    }), 201)
    // A second session, so that A's session search has a next page (a cursor of A's to probe with).
    const spareSession = ref("cs2")
    created(await asA("POST", "/v1/checkout/sessions", {
      amount: "31.00", currency: "USD", merchant_reference: spareSession, success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel"
    }), 201)
    const sessionOrder = (await asA("GET", `/v1/orders/by-reference/${encodeURIComponent(sessionReference)}`)).json.id as string

    const sdkReference = ref("sdk")
    const sdk = created(await asA("POST", "/v1/payments", {
      ...base, amount: "12.00", merchant_reference: sdkReference, payment_method: { code: "card" }, success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel"
    }))
    const redirectReference = ref("paypal")
    const redirect = created(await asA("POST", "/v1/payments", {
      ...base, amount: "10.00", merchant_reference: redirectReference, payment_method: { code: "paypal" }, success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel"
    }))
    const challenged = created(await asA("POST", "/v1/payments", {
      ...base, amount: "40.00", merchant_reference: ref("3ds"), collect_cvv: false, payment_method: { code: "card", details: { card_token: await tokenOf(a, "4000000000003220") } }
    }))
    expect(challenged.status).toBe("requires_action")

    const delivery = await until(async () => {
      const page = (await asA("GET", `/v1/webhook_deliveries?endpoint_id=${endpoint}&status=succeeded`)).json
      return page.data.length > 1 ? page.data[page.data.length - 1] as { id: string; event_id: string } : undefined
    })
    const cursorOf = async (method: string, path: string) => {
      const reply = method === "GET" ? await asA("GET", `${path}?limit=1`) : await asA("POST", path, { limit: 1 })
      expect(reply.json.next_cursor, `${path}: A's own cursor`).toEqual(expect.any(String))
      return reply.json.next_cursor as string
    }
    return {
      customer,
      cardToken,
      authorized: { order: auth.order_id, transaction: auth.transaction_id, capture: capture.transaction_id, reference: authReference },
      charged: { order: charge.order_id, transaction: charge.transaction_id, reference: chargeReference },
      refund: { id: refund.id, transaction: refund.transaction_id, reference: refundReference },
      payout: { id: payout.id, transaction: payout.transaction_id, reference: payoutReference },
      transfer: { id: transfer.id, order: transfer.order_id, transaction: transfer.transaction_id, reference: transferReference, secret: transfer.next_action.client_secret },
      session: { id: session.id, order: sessionOrder, reference: sessionReference },
      sdk: { order: sdk.order_id, transaction: sdk.transaction_id, secret: sdk.next_action.client_secret },
      redirect: { order: redirect.order_id, transaction: redirect.transaction_id },
      onChannel: await seedOnChannel(challenged.transaction_id),
      challenged: { order: challenged.order_id, transaction: challenged.transaction_id },
      spare: { payment: redirectReference, transfer: sdkReference, session: spareSession },
      endpoint,
      delivery: delivery.id,
      event: delivery.event_id,
      profile,
      email,
      cursors: {
        orders: await cursorOf("POST", "/v1/orders/search"),
        transactions: await cursorOf("POST", "/v1/transactions/search"),
        sessions: await cursorOf("POST", "/v1/checkout/sessions/search"),
        deliveries: await cursorOf("GET", "/v1/webhook_deliveries")
      }
    }
  }

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk) => chunks.push(chunk))
      request.on("end", () => {
        received.push({ path: request.url ?? "", body: Buffer.concat(chunks).toString("utf8") })
        response.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const address = receiver.address()
    receiverUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/hooks`
    // No Stripe anywhere: the channels below are never called (a call would be refused at once).
    // The probes send hundreds of requests from one IP, unauthenticated ones included: buckets wide open.
    const limits = { rateLimit: { perSecond: 10_000, burst: 10_000 }, ipLimits: { perIp: { perSecond: 10_000, burst: 10_000 } } }
    server = await startTestServer(limits, undefined, { ...storage, providerEndpoints: { stripe: { apiUrl: "http://127.0.0.1:1" } } })
    const account = (name: string, mode: "test" | "live") => Effect.runPromise(server.accounts.create({ name, mode }))
    a = await account("isolation A", "test")
    probers = [
      { name: "B (test mode)", creds: await account("isolation B", "test"), live: false },
      { name: "L (live mode)", creds: await account("isolation L", "live"), live: true }
    ]
    // L can route (so its requests reach the lookups of A's ids rather than stopping at payment_unroutable).
    await stripe(probers[1]!.creds, "live")
    channel = await stripe(await account("isolation P", "test"), "test")
    seed = await seedA()
    before = await settled(seed)
  }, 120_000)
  afterAll(async () => {
    await server?.close()
    await new Promise<void>((resolve) => receiver.close(() => resolve()))
  })

  describe("isolation matrix: another account names A's objects", () => {
    it("every route has a probe, and every probe a route", () => {
      const served = routes()
      const missing = served.filter((route) => !(route in PROBES))
      expect(missing, `Add a probe to PROBES in packages/http/test/IsolationSuite.ts for: ${missing.join(", ")}`).toEqual([])
      const stale = Object.keys(PROBES).filter((key) => !served.includes(key))
      expect(stale, `PROBES names routes the server no longer has: ${stale.join(", ")}`).toEqual([])
    })

    for (const route of routes()) {
      it(route, async () => {
        const probe = PROBES[route]
        if (probe === undefined) {
          throw new Error(`No isolation probe for ${route}: add one to PROBES in packages/http/test/IsolationSuite.ts (docs/decisions.md, "Isolation matrix")`)
        }
        for (const who of probers) await probe({ a: seed, who, channel })
      }, 60_000)
    }

    it("A's objects, read through A's key, are unchanged after every probe", async () => {
      expect(await settled(seed)).toEqual(before)
    }, 60_000)

    it("B's webhook endpoint and delivery log hear of B's objects only, never of A's", async () => {
      const b = probers[0]!.creds
      const theirs = () => received.filter((r) => r.path === `/hooks/${b.account_id}`)
      await until(async () => theirs().length > 0 ? true : undefined)
      // B's own objects carry references A also uses (B's to use, the own probes): those are not A's.
      const spare = shared(seed)
      for (const delivery of theirs()) expectNoLeak(delivery.body, spare)
      expectNoLeak((await api(b, "GET", "/v1/webhook_deliveries?limit=100")).text, spare)
      expect(received.filter((r) => !r.path.startsWith("/hooks/")), "deliveries outside the endpoints' paths").toEqual([])
    }, 60_000)
  })
}
