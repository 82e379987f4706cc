/**
 * A real server over every provider's wire-level fake (Fakes.ts: its config points every
 * channel there), with what an operator does to it: accounts, and channels added through the
 * Channels use case (what `tender accounts channels add` runs), with credentials the fakes accept.
 * Used by ProviderContract.test.ts; nothing here asserts.
 */
import * as Fakes from "@tender/adapters/providers/fake/Fakes"
import { listenLocal, readBody } from "@tender/adapters/providers/fake/FakeServer"
import { createServer } from "node:http"
import type { ProviderName } from "@tender/adapters/providers/Providers"
import { type Channel, Channels, TransactionRepo } from "@tender/domain"
import { Effect } from "effect"
import { type Credentials, send } from "@tender/client/Testing"
import { startTestServer, type TestServer } from "../../src/testing/TestServer.ts"
import { fileStorage } from "@tender/adapters/test/PgTestDatabase"

export type Merchant = Credentials & { readonly account_id: string; readonly publishable_key: string }

/**
 * Where the fakes send their webhooks and notifications (signed with the channels' secrets), before
 * the server exists: a local relay that forwards each delivery to one channel's notification route
 * once a test names it (`to`), and drops it otherwise, so that a test that resolves a lost answer by
 * reconciliation is not raced by a notification. It answers the fake only once the route has, so a
 * fake's `delivered()` means Tender has applied the delivery.
 */
const startRelay = async () => {
  let target: string | undefined
  const server = createServer((req, res) => {
    // Every header but the connection's own: a provider's signature may be in any of them.
    const headers = Object.fromEntries(Object.entries(req.headers).flatMap(([name, value]) =>
      typeof value === "string" && !["host", "content-length", "connection", "transfer-encoding"].includes(name) ? [[name, value]] : []))
    void readBody(req)
      .then((body) =>
        target === undefined ? undefined : fetch(target, { method: "POST", headers, body }).then((answer) => answer.arrayBuffer())
      )
      // A failed forward is the test's to see (nothing applied); the fake is answered either way.
      .catch(() => undefined)
      .finally(() => res.end())
  })
  const listener = await listenLocal(server)
  return {
    url: `http://127.0.0.1:${listener.port}`,
    to: (url: string | undefined) => void (target = url),
    close: listener.close
  }
}

/** A browser's JSON POST with the account's publishable key (tender.js's calls; card_tokens from the fields frame). */
export const browserPost = async (baseUrl: string, publishableKey: string, path: string, body: unknown) => {
  const response = await fetch(baseUrl + path, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${publishableKey}`,
      // The fields host defaults to the public URL: the test server's own origin.
      origin: path === "/v1/client/card_tokens" ? new URL(baseUrl).origin : "https://shop.example"
    },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, text, json: text === "" ? undefined : JSON.parse(text) }
}

/**
 * What tender.js does with a collect_card secret: the card element's token for the secret's
 * payment, then `pay`. Returns pay's answer.
 */
export const payInBrowser = async (baseUrl: string, publishableKey: string, clientSecret: string, number: string) => {
  const token = await browserPost(baseUrl, publishableKey, "/v1/client/card_tokens", {
    client_secret: clientSecret, number, exp_month: 12, exp_year: 2035, cvc: "123", holder_name: "Ada Lovelace"
  })
  if (token.status !== 201) throw new Error(`card_tokens answered ${token.status}: ${token.text}`)
  return browserPost(baseUrl, publishableKey, "/v1/client/pay", { client_secret: clientSecret, token: token.json.token })
}

export interface Rig {
  readonly server: TestServer
  readonly fakes: Fakes.Fakes
  readonly merchant: (mode: "test" | "live") => Promise<Merchant>
  /** Adds a channel as the operator's CLI does; its credentials are the ones the rig's fakes accept. */
  readonly addChannel: (
    account: Merchant,
    provider: ProviderName,
    mode: "test" | "live",
    priority?: number
  ) => Promise<Channel.Channel>
  /** The credentials file of a channel on the rig's fake of `provider` (what `addChannel` gives). */
  readonly credentials: (provider: ProviderName, mode: "test" | "live") => Readonly<Record<string, string>>
  readonly disableChannel: (account: Merchant, channelId: string) => Promise<Channel.Channel>
  /**
   * Runs `steps` with the fakes' webhooks and notifications delivered to the channel's notification
   * route, then waits until every delivery they caused was applied.
   */
  readonly notifying: <A>(channelId: string, steps: () => Promise<A>) => Promise<A>
  /** Waits until the deliveries the fakes started so far were answered (under `notifying`: applied). */
  readonly delivered: () => Promise<void>
  /** A signed JSON POST to the server as the merchant `as` (the answer verified, as `send` does). */
  readonly post: (as: Credentials, path: string, body: unknown) => ReturnType<typeof send>
  /** The order's transactions as stored (what the API does not show: the channel each went to). */
  readonly transactionsOf: (orderId: string) => Promise<ReadonlyArray<{ readonly id: string; readonly kind: string; readonly channel_id: string | null; readonly provider: string; readonly status: string; readonly decline_code: string | null; readonly pending_call: unknown }>>
  readonly close: () => Promise<void>
}

/**
 * Starts every provider's fake and a server pointed at them, over memory storage unless `postgres` is set (the
 * test file's own database, PgTestDatabase.ts). A Stripe fake takes one mode's keys: `stripeKey` set
 * (`sk_live_…` for live channels) is the only key it accepts, unset any `sk_test_…`.
 */
export const startRig = async (options: { readonly stripeKey?: string; readonly postgres?: boolean } = {}): Promise<Rig> => {
  const relay = await startRelay()
  const fakes = await Fakes.start({ notifyUrl: relay.url, stripe: { apiKey: options.stripeKey, webhookSecret: "whsec_contract" } })
  const server = await startTestServer(
    { rateLimit: { perSecond: 10_000, burst: 10_000 } },
    undefined,
    {
      ...(options.postgres === true ? await fileStorage() : { storage: "memory", dataDir: ".tender-test" }),
      ...fakes.config,
      // A call the fake never answers is given up after 5 s rather than production's 20 s: the
      // lost-answer cases wait out the whole timeout, and 5 s is still far above any fake's answer.
      providerTimeoutMs: 5_000
    }
  ).catch(async (error: unknown) => {
    await Promise.all([fakes.close(), relay.close()])
    throw error
  })
  let seq = 0
  const delivered = fakes.delivered
  const credentials = (provider: ProviderName, mode: "test" | "live") => fakes[provider].credentials(mode)
  return {
    server,
    fakes,
    credentials,
    merchant: (mode) => Effect.runPromise(server.accounts.create({ name: `contract-${mode}-${++seq}`, mode })),
    addChannel: (account, provider, mode, priority = 0) =>
      server.run(Effect.gen(function*() {
        return yield* (yield* Channels).add(account.account_id, {
          provider,
          mode,
          methods: null,
          currencies: null,
          countries: null,
          priority,
          credentials: credentials(provider, mode)
        })
      }).pipe(Effect.orDie)),
    disableChannel: (account, channelId) =>
      server.run(Effect.gen(function*() {
        return yield* (yield* Channels).disable(account.account_id, channelId)
      }).pipe(Effect.orDie)),
    notifying: async (channelId, steps) => {
      relay.to(`${server.baseUrl}/providers/${encodeURIComponent(channelId)}/notifications`)
      try {
        return await steps()
      } finally {
        await delivered()
        relay.to(undefined)
      }
    },
    delivered,
    post: (as, path, body) => send(server, as, "POST", path, { body: JSON.stringify(body) }),
    transactionsOf: (orderId) =>
      server.run(Effect.gen(function*() {
        return yield* (yield* TransactionRepo).listByOrder(orderId)
      })),
    close: async () => {
      await server.close()
      await Promise.all([fakes.close(), relay.close()])
    }
  }
}

/** `startRig` over the test file's own PostgreSQL database (a copy of the migrated template). */
export const startRigOnFreshPostgres = (options: { readonly stripeKey?: string } = {}): Promise<Rig> => startRig({ ...options, postgres: true })
