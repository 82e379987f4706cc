/**
 * 3-D Secure with real providers, over real HTTP: a test-mode account with a Stripe channel and one
 * with an Adyen channel, their SDKs pointed at the wire-level fakes. The customer follows the
 * provider's challenge page (the fake's), which sends them to Tender's return route
 * (`/providers/{channel_id}/return`); the return completes the authorization, the provider deciding,
 * and sends the customer on: success_url / cancel_url for a direct payment, the hosted page for a
 * checkout session. A reload changes nothing; foreign, unknown and forged returns change nothing.
 * Over memory storage and PostgreSQL (Adyen's journal, where the shopper's redirectResult waits, too).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TenderConfig } from "@tender/adapters/Config"
import * as http from "node:http"
import * as https from "node:https"
import { Payments, StateMachine, TransactionRepo } from "@tender/domain"
import { Effect, Option } from "effect"
import * as AdyenFake from "@tender/adapters/providers/adyen/AdyenFake"
import * as AdyenSignature from "@tender/adapters/providers/adyen/AdyenSignature"
import * as StripeFake from "@tender/adapters/providers/stripe/StripeFake"
import { signatureHeader } from "@tender/adapters/providers/stripe/StripeSignature"
import { type Credentials, send } from "@tender/client/Testing"
import { type ProviderFakes, startWithProviderFakes } from "../src/testing/ProviderFakes.ts"
import type { TestServer } from "../src/testing/TestServer.ts"

/** The whole suite, over the storage given (memory, or PostgreSQL in a temporary data dir). */
export const providerThreeDsSuite = (storage: Pick<TenderConfig, "storage" | "dataDir">) => {
  type Merchant = Credentials & { readonly account_id: string; readonly publishable_key: string }

  let server: TestServer
  let stripe: StripeFake.StripeFake
  let adyen: AdyenFake.AdyenFake
  let seq = 0
  const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
  const urls = { success_url: "https://merchant.example/ok", cancel_url: "https://merchant.example/cancel" }

  interface Visit { readonly status: number; readonly location: string | null; readonly body: string }

  /**
   * The customer's browser, one request, no redirect followed: Tender's pages and Stripe's fake over
   * HTTP, Adyen's fake over HTTPS with its certificate trusted (Node's fetch takes no CA).
   */
  const visit = (url: string, form?: Record<string, string>) =>
    new Promise<Visit>((resolve, reject) => {
      const target = new URL(url)
      const body = form === undefined ? undefined : new URLSearchParams(form).toString()
      const options = {
        method: body === undefined ? "GET" : "POST",
        headers: body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" },
        ...(target.protocol === "https:" ? { ca: adyen.caCertificate } : {})
      }
      const request = (target.protocol === "https:" ? https : http).request(target, options, (res) => {
        let text = ""
        res.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, location: res.headers.location ?? null, body: text }))
      })
      request.on("error", reject)
      request.end(body)
    })

  /**
   * The customer's browser on Tender's return route. contract.md: "Reading a page (GET) never
   * authorizes": the provider's redirect (a GET) gets a page that changes nothing, whose form posts
   * the same URL back (its script submits it; without scripts the customer presses Continue). The
   * POST's answer; a URL naming no payment is refused at the GET.
   */
  const returnTo = async (url: string) => {
    const shown = await visit(url)
    if (shown.status !== 200) return shown
    expect({ location: shown.location, form: /<form class="card" method="post" data-provider-return>/.test(shown.body) }).toEqual({ location: null, form: true })
    return visit(url, {})
  }

  interface Provider {
    readonly name: "stripe" | "adyen"
    /** The card the provider's test environment always challenges. */
    readonly challengeCard: string
    readonly credentials: () => Record<string, string>
    /** A capture's answer: Stripe settles it at once, Adyen's outcome comes by notification. */
    readonly captured: "completed" | "settling"
    /**
     * The provider's signed notification that `reference` was authorized, as it would POST it, once
     * the fake has emitted it (Stripe: when the challenge is approved; Adyen: after /payments/details).
     */
    readonly authorizedNotice: (reference: string) => { readonly body: string; readonly headers: Record<string, string> } | undefined
    /**
     * A challenge approved on the provider's page by a customer who never came back, once its window
     * closes: Stripe charged on its page (the payment succeeded); Adyen authorizes only on the
     * return's /payments/details (nothing happened: the payment expired).
     */
    readonly approvedButGone: { readonly order: string; readonly decline_code: string | null }
  }

  const WEBHOOK_SECRET = "whsec_h21channel"
  const HMAC_KEY = "00112233445566778899AABBCCDDEEFF"

  const PROVIDERS: ReadonlyArray<Provider> = [
    {
      name: "stripe",
      challengeCard: "4000000000003220",
      credentials: () => ({ secret_key: "sk_test_h21channel", webhook_secret: WEBHOOK_SECRET }),
      captured: "completed",
      approvedButGone: { order: "succeeded", decline_code: null },
      authorizedNotice: (reference) => {
        const event = stripe.events().find((e) => e.type === "payment_intent.succeeded" && JSON.parse(e.payload).data.object.metadata?.tender_reference === reference)
        return event === undefined
          ? undefined
          : { body: event.payload, headers: { "stripe-signature": signatureHeader(event.payload, WEBHOOK_SECRET, Math.floor(Date.now() / 1000)) } }
      }
    },
    {
      name: "adyen",
      // Tender's challenge card (test mode takes no other); the adapter asks Adyen with its own.
      challengeCard: "4000000000003220",
      credentials: () => ({ api_key: adyen.apiKey, merchant_account: adyen.merchantAccount, hmac_key: HMAC_KEY }),
      captured: "settling",
      approvedButGone: { order: "canceled", decline_code: "expired" },
      authorizedNotice: (reference) => {
        const item = adyen.notifications().find((n) => n.eventCode === "AUTHORISATION" && n.merchantReference === reference)
        if (item === undefined) return undefined
        const { additionalData: _unsigned, ...fields } = item
        const body = JSON.stringify({ live: "false", notificationItems: [{ NotificationRequestItem: { ...fields, additionalData: { hmacSignature: AdyenSignature.sign(fields, HMAC_KEY) } } }] })
        return { body, headers: {} }
      }
    }
  ]

  /** A test-mode account whose only channel is `provider`'s. */
  const merchantOn = async (provider: Provider) => {
    const merchant: Merchant = await Effect.runPromise(server.accounts.create({ name: `3ds-${provider.name}`, mode: "test" }))
    const channel = await Effect.runPromise(server.channels.add(merchant.account_id, {
      provider: provider.name,
      mode: "test",
      methods: null,
      currencies: null,
      countries: null,
      priority: null,
      credentials: provider.credentials()
    }))
    return { merchant, channel_id: channel.id as string }
  }

  let fakes: ProviderFakes | undefined

  beforeAll(async () => {
    fakes = await startWithProviderFakes(storage)
    ;({ server, stripe, adyen } = fakes)
  })

  afterAll(() => fakes?.close())

  describe.each(PROVIDERS)("3-D Secure on a $name channel", (provider) => {
    let merchant: Merchant
    let channelId: string
    const post = (path: string, body: unknown) => send(server, merchant, "POST", path, { body: JSON.stringify(body) })
    const get = (path: string) => send(server, merchant, "GET", path)

    beforeAll(async () => {
      const made = await merchantOn(provider)
      merchant = made.merchant
      channelId = made.channel_id
    })

    /** A direct card payment of the challenge card: requires_action at the provider's page. */
    const challenged = async (capture_method: "automatic" | "manual" = "automatic") => {
      const token = await post("/v1/test_helpers/card_tokens", { number: provider.challengeCard, exp_month: 12, exp_year: 2035, cvc: "737" })
      expect(token.status, token.text).toBe(201)
      const created = await post("/v1/payments", {
        amount: "40.00",
        currency: "USD",
        country: "US",
        capture_method,
        merchant_reference: ref(`3ds-${provider.name}`),
        collect_cvv: false,
        payment_method: { code: "card", details: { card_token: token.json.token } },
        ...urls
      })
      expect(created.json, created.text).toMatchObject({ status: "requires_action", next_action: { type: "redirect" } })
      const challengeUrl: string = created.json.next_action.redirect_url
      // The provider's own page, on its own origin: Tender shows none of its own.
      expect(new URL(challengeUrl).origin).toBe(new URL(provider.name === "stripe" ? stripe.url : adyen.endpoint).origin)
      return { orderId: created.json.order_id as string, transactionId: created.json.transaction_id as string, challengeUrl }
    }

    /** The customer on the provider's page: it loads, the answer sends them back to Tender's return route. */
    const answer = async (challengeUrl: string, choice: "approve" | "deny") => {
      expect((await visit(challengeUrl)).status).toBe(200)
      const answered = await visit(challengeUrl, { answer: choice })
      expect([302, 303]).toContain(answered.status)
      const back = new URL(answered.location!)
      expect(`${back.origin}${back.pathname}`).toBe(`${server.baseUrl}/providers/${channelId}/return`)
      return back
    }

    /** The attempt's challenge window, brought forward to its end; the test server's expiry worker looks every 500 ms. */
    const closeWindow = (transactionId: string) =>
      server.run(Effect.gen(function*() {
        const repo = yield* TransactionRepo
        const txn = Option.getOrThrow(yield* repo.findAny(transactionId))
        yield* repo.update(StateMachine.revise(txn, { expires_at: new Date(Date.now() - 1000).toISOString() }, new Date().toISOString()))
      }))

    /** The state once the order left requires_action (or after 20 s, as it stands then). */
    const decided = async (orderId: string, transactionId: string) => {
      let after = await state(orderId, transactionId)
      for (let waited = 0; after.order.status === "requires_action" && waited < 20_000; waited += 250) {
        await new Promise((resolve) => setTimeout(resolve, 250))
        after = await state(orderId, transactionId)
      }
      return after
    }

    const state = async (orderId: string, transactionId: string) => {
      const order = (await get(`/v1/orders/${orderId}`)).json
      const txn = (await get(`/v1/transactions/${transactionId}`)).json
      const events = (await Effect.runPromise(server.events(orderId))).map((e) => e.type)
      return { order: { status: order.status, updated_at: order.updated_at }, txn: { status: txn.status, decline_code: txn.decline_code, updated_at: txn.updated_at }, events }
    }

    it("approved: the return authorizes at the provider and sends the customer to success_url; a reload changes nothing", async () => {
      const { challengeUrl, orderId, transactionId } = await challenged()
      expect(new URL(challengeUrl).searchParams.get("tender_reference")).toBeNull()
      const back = await answer(challengeUrl, "approve")
      expect(back.searchParams.get("tender_reference")).toBe(transactionId)

      const returned = await returnTo(back.toString())
      expect({ status: returned.status, location: returned.location }).toEqual({ status: 303, location: urls.success_url })
      const after = await state(orderId, transactionId)
      expect(after.order.status).toBe("succeeded")
      expect(after.txn).toMatchObject({ status: "completed", decline_code: null })
      expect(after.events).toEqual(["payment.requires_action", "payment.succeeded"])

      // The reload, and the merchant's own 3ds/complete: the same outcome, no second authorization.
      const reloaded = await returnTo(back.toString())
      expect({ status: reloaded.status, location: reloaded.location }).toEqual({ status: 303, location: urls.success_url })
      expect((await post(`/v1/payments/${orderId}/3ds/complete`, {})).json.status).toBe("completed")
      expect(await state(orderId, transactionId)).toEqual(after)
    })

    it("contract.md, \"Reading a page (GET) never authorizes\": a plain GET of the return URL (a link scanner, a prefetch, a reload of it) completes nothing; the page's POST does", async () => {
      const { challengeUrl, orderId, transactionId } = await challenged()
      const back = await answer(challengeUrl, "approve")
      const before = await state(orderId, transactionId)
      expect(before.order.status).toBe("requires_action")
      for (let read = 0; read < 3; read++) {
        const shown = await visit(back.toString())
        expect({ status: shown.status, location: shown.location }).toEqual({ status: 200, location: null })
        expect(shown.body).toContain("<h1>Finishing verification</h1>")
      }
      expect(await state(orderId, transactionId)).toEqual(before)
      // Adyen authorizes only when Tender sends the shopper's redirectResult (/payments/details): never asked.
      if (provider.name === "adyen") expect(adyen.payments().find((p) => p.merchantReference === transactionId)?.status).not.toBe("Authorised")
      const returned = await visit(back.toString(), {})
      expect({ status: returned.status, location: returned.location }).toEqual({ status: 303, location: urls.success_url })
      expect((await state(orderId, transactionId)).order.status).toBe("succeeded")
    })

    it("the provider's notification of the authorization, before the return (Stripe's) or after it, adds nothing to what the return recorded", async () => {
      const { challengeUrl, orderId, transactionId } = await challenged()
      const back = await answer(challengeUrl, "approve")
      const notify = async () => {
        const notice = provider.authorizedNotice(transactionId)
        if (notice === undefined) return false
        const delivered = await fetch(`${server.baseUrl}/providers/${channelId}/notifications`, { method: "POST", headers: { "content-type": "application/json", ...notice.headers }, body: notice.body })
        expect(delivered.status).toBe(200)
        return true
      }
      const early = await notify()
      expect(early).toBe(provider.name === "stripe")
      // Left to the return: the attempt awaits its challenge's answer, not a call in doubt.
      expect((await state(orderId, transactionId)).order.status).toBe("requires_action")
      expect((await returnTo(back.toString())).location).toBe(urls.success_url)
      const after = await state(orderId, transactionId)
      expect(after.order.status).toBe("succeeded")
      expect(after.events).toEqual(["payment.requires_action", "payment.succeeded"])
      expect(await notify()).toBe(true)
      expect(await state(orderId, transactionId)).toEqual(after)
    })

    it("approved on the provider's page but the customer never came back: when the window closes, the provider is asked first", { timeout: 30_000 }, async () => {
      const { challengeUrl, orderId, transactionId } = await challenged()
      await answer(challengeUrl, "approve")
      await closeWindow(transactionId)
      const after = await decided(orderId, transactionId)
      expect({ order: after.order.status, decline_code: after.txn.decline_code }).toEqual(provider.approvedButGone)
    })

    it("never answered: when the window closes the attempt expires, and the provider's page can no longer charge it", { timeout: 30_000 }, async () => {
      const { challengeUrl, orderId, transactionId } = await challenged()
      await closeWindow(transactionId)
      const after = await decided(orderId, transactionId)
      expect({ order: after.order.status, decline_code: after.txn.decline_code }).toEqual({ order: "canceled", decline_code: "expired" })
      // The customer answers in an old tab: Stripe's PaymentIntent was canceled first, nothing is charged;
      // Adyen moves no money without Tender's /payments/details.
      const late = await visit(challengeUrl, { answer: "approve" })
      if (provider.name === "stripe") {
        expect([302, 303]).not.toContain(late.status)
        const intent = stripe.paymentIntents().find((p) => p.metadata?.["tender_reference"] === transactionId)
        expect(intent).toMatchObject({ status: "canceled", cancellation_reason: "abandoned" })
      } else {
        // Adyen's page sends the shopper back; Tender's return finds the attempt closed, authorizes
        // nothing and sends them where a canceled payment goes.
        expect((await returnTo(late.location!)).location).toBe(urls.cancel_url)
        expect(adyen.payments().find((p) => p.merchantReference === transactionId)?.status).not.toBe("Authorised")
      }
      expect(await state(orderId, transactionId)).toEqual(after)
    })

    it("the provider unreachable when the window closes: the attempt stays in flight, and is decided once the provider answers", { timeout: 45_000 }, async () => {
      const { challengeUrl, orderId, transactionId } = await challenged()
      await answer(challengeUrl, "approve")
      const fake = provider.name === "stripe" ? stripe : adyen
      await fake.refuse()
      try {
        await closeWindow(transactionId)
        // Two rounds of the expiry worker's work while the provider refuses connections, run here so
        // that two surely happen while it refuses; the worker decides it once it answers.
        for (let round = 0; round < 2; round++) await server.run(Effect.gen(function*() {
          return yield* (yield* Payments).expireWindows()
        }))
        const held = await state(orderId, transactionId)
        expect({ order: held.order.status, txn: held.txn.status }).toEqual({ order: "requires_action", txn: "processing" })
      } finally {
        await fake.accept()
      }
      const after = await decided(orderId, transactionId)
      expect({ order: after.order.status, decline_code: after.txn.decline_code }).toEqual(provider.approvedButGone)
    })

    it("denied: the provider declines authentication_failed, the customer goes to cancel_url; a reload changes nothing", async () => {
      const { challengeUrl, orderId, transactionId } = await challenged("manual")
      const back = await answer(challengeUrl, "deny")
      const returned = await returnTo(back.toString())
      expect({ status: returned.status, location: returned.location }).toEqual({ status: 303, location: urls.cancel_url })
      const after = await state(orderId, transactionId)
      expect(after.order.status).toBe("failed")
      expect(after.txn).toMatchObject({ status: "failed", decline_code: "authentication_failed" })
      expect(after.events).toEqual(["payment.requires_action", "payment.failed"])
      const reloaded = await returnTo(back.toString())
      expect(reloaded.location).toBe(urls.cancel_url)
      expect(await state(orderId, transactionId)).toEqual(after)
    })

    it("a manual-capture payment approved through the return is authorized, then captured", async () => {
      const { challengeUrl, orderId, transactionId } = await challenged("manual")
      const back = await answer(challengeUrl, "approve")
      expect((await returnTo(back.toString())).location).toBe(urls.success_url)
      expect((await state(orderId, transactionId)).order.status).toBe("authorized")
      expect((await post("/v1/payments/capture", { order_id: orderId })).json.status).toBe(provider.captured)
    })

    it("unknown, foreign and forged returns: a page saying so, never a 500, and nothing changes", async () => {
      const { challengeUrl, orderId, transactionId } = await challenged()
      const before = await state(orderId, transactionId)
      const returnRoute = `${server.baseUrl}/providers/${channelId}/return`
      const other = await merchantOn(provider)
      const refused = [
        // no reference, an unknown one, another channel's
        [returnRoute, 404],
        [`${returnRoute}?tender_reference=txn_nothing`, 404],
        [`${server.baseUrl}/providers/${other.channel_id}/return?tender_reference=${transactionId}`, 404],
        [`${server.baseUrl}/providers/nochannel/return?tender_reference=${transactionId}`, 404],
        // the customer has not answered: the provider's part is missing (Stripe: the PaymentIntent, Adyen: redirectResult)
        [`${returnRoute}?tender_reference=${transactionId}`, 409],
        [`${returnRoute}?tender_reference=${transactionId}&payment_intent=pi_forged`, 409]
      ] as const
      for (const [url, status] of refused) {
        const reply = await returnTo(url)
        expect({ url, status: reply.status, location: reply.location }).toEqual({ url, status, location: null })
        expect(reply.body).toMatch(/<h1>Payment not (found|verified)<\/h1>/)
      }
      expect(await state(orderId, transactionId)).toEqual(before)
      // The genuine return still completes it afterwards.
      const back = await answer(challengeUrl, "approve")
      expect((await returnTo(back.toString())).location).toBe(urls.success_url)
      // A payment never challenged: nothing to return from.
      const token = await post("/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
      const plain = await post("/v1/payments", { amount: "5.00", currency: "USD", country: "US", merchant_reference: ref("plain"), collect_cvv: false, payment_method: { code: "card", details: { card_token: token.json.token } }, ...urls })
      expect(plain.json.status).toBe("completed")
      expect((await returnTo(`${returnRoute}?tender_reference=${plain.json.transaction_id}`)).status).toBe(409)
    })

    it("a hosted checkout session: the card element pays, the provider's challenge approved, the return completes the session and shows its page", async () => {
      const session = await post("/v1/checkout/sessions", { amount: "12.00", currency: "USD", country: "US", merchant_reference: ref("cs-3ds"), payment_methods: ["card"], ...urls })
      expect(session.status, session.text).toBe(201)
      const page = session.json.url as string
      const origin = new URL(server.baseUrl).origin
      // The page's card glue starts the attempt; tender.js tokenizes in the fields frame and pays.
      const started = await fetch(`${page}/card`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", origin }, body: "email=ana%40example.com" })
      const secret = (await started.json()).client_secret as string
      const browser = async (path: string, body: unknown) => {
        const reply = await fetch(server.baseUrl + path, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${merchant.publishable_key}`, origin },
          body: JSON.stringify(body)
        })
        return reply.json()
      }
      const token = await browser("/v1/client/card_tokens", { client_secret: secret, number: provider.challengeCard, exp_month: 12, exp_year: 2035, cvc: "737" })
      const paid = await browser("/v1/client/pay", { client_secret: secret, token: token.token })
      expect(paid).toMatchObject({ status: "requires_action", display_mode: "inline" })

      const back = await answer(paid.challenge_url, "approve")
      const returned = await returnTo(back.toString())
      expect({ status: returned.status, location: returned.location }).toEqual({ status: 303, location: page })
      const shown = await visit(page)
      expect(shown.status).toBe(200)
      expect((await get(`/v1/checkout/sessions/${session.json.id}`)).json).toMatchObject({ status: "completed" })
      expect((await get(`/v1/orders/${session.json.order_id}`)).json.status).toBe("succeeded")
    })
  })

  describe("Stripe's returns", () => {
    it("a return naming the attempt's own PaymentIntent before the customer answered: still awaiting the challenge, which then completes", async () => {
      const { merchant, channel_id } = await merchantOn(PROVIDERS[0]!)
      const post = (path: string, body: unknown) => send(server, merchant, "POST", path, { body: JSON.stringify(body) })
      const token = await post("/v1/test_helpers/card_tokens", { number: "4000000000003220", exp_month: 12, exp_year: 2035, cvc: "123" })
      const created = await post("/v1/payments", { amount: "30.00", currency: "USD", country: "US", merchant_reference: ref("early"), collect_cvv: false, payment_method: { code: "card", details: { card_token: token.json.token } }, ...urls })
      const challengeUrl: string = created.json.next_action.redirect_url
      const intent = new URL(challengeUrl).pathname.split("/").pop()!
      const early = await returnTo(`${server.baseUrl}/providers/${channel_id}/return?tender_reference=${created.json.transaction_id}&payment_intent=${intent}`)
      expect(early.status).toBe(303)
      const order = (await send(server, merchant, "GET", `/v1/orders/${created.json.order_id}`)).json
      expect(order.status).toBe("requires_action")
      const answered = await visit(challengeUrl, { answer: "approve" })
      expect((await returnTo(answered.location!)).location).toBe(urls.success_url)
      expect((await send(server, merchant, "GET", `/v1/orders/${created.json.order_id}`)).json.status).toBe("succeeded")
      expect((await Effect.runPromise(server.events(created.json.order_id))).map((e) => e.type)).toEqual(["payment.requires_action", "payment.succeeded"])
    })
  })

  describe("Adyen's returns", () => {
    let merchant: Merchant
    let channelId: string
    const post = (path: string, body: unknown) => send(server, merchant, "POST", path, { body: JSON.stringify(body) })
    const orderStatus = async (orderId: string) => (await send(server, merchant, "GET", `/v1/orders/${orderId}`)).json.status

    beforeAll(async () => {
      const made = await merchantOn(PROVIDERS[1]!)
      merchant = made.merchant
      channelId = made.channel_id
    })

    /** A challenged Adyen payment of `amount` EUR; the shopper approves; where Adyen sends them back. */
    const approvedReturn = async (amount: string) => {
      const token = await post("/v1/test_helpers/card_tokens", { number: "4000000000003220", exp_month: 12, exp_year: 2035, cvc: "123" })
      const created = await post("/v1/payments", { amount, currency: "EUR", country: "NL", merchant_reference: ref("adyen"), collect_cvv: false, payment_method: { code: "card", details: { card_token: token.json.token } }, ...urls })
      const answered = await visit(created.json.next_action.redirect_url, { answer: "approve" })
      return { orderId: created.json.order_id as string, transactionId: created.json.transaction_id as string, back: new URL(answered.location!) }
    }

    it("another payment's redirectResult on this payment's return never pays it", async () => {
      const dear = await approvedReturn("900.00")
      const cheap = await approvedReturn("1.00")
      const pasted = new URL(dear.back)
      pasted.searchParams.set("redirectResult", cheap.back.searchParams.get("redirectResult")!)
      expect((await returnTo(pasted.toString())).location).toBe(urls.cancel_url)
      expect(await orderStatus(dear.orderId)).toBe("failed")
      expect((await send(server, merchant, "GET", `/v1/transactions/${dear.transactionId}`)).json).toMatchObject({ status: "failed", decline_code: "authentication_failed" })
      // The cheap payment's own return still pays it.
      expect((await returnTo(cheap.back.toString())).location).toBe(urls.success_url)
      expect(await orderStatus(cheap.orderId)).toBe("succeeded")
    })

    it("redirectResult in a form POST to the return route completes the payment like the GET", async () => {
      const { back, orderId } = await approvedReturn("9.00")
      const redirectResult = back.searchParams.get("redirectResult")!
      back.searchParams.delete("redirectResult")
      expect(`${back.origin}${back.pathname}`).toBe(`${server.baseUrl}/providers/${channelId}/return`)
      const returned = await visit(back.toString(), { redirectResult })
      expect({ status: returned.status, location: returned.location }).toEqual({ status: 303, location: urls.success_url })
      expect(await orderStatus(orderId)).toBe("succeeded")
    })
  })
}
