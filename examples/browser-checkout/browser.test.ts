/**
 * tender.js and the card fields in a real browser: Debian's headless Chromium through
 * playwright-core (as packages/http/test/CheckoutBrowser.test.ts), against the real server
 * (startTestServer, memory storage): it serves the built SDK, the fields page and `/v1/client/…`.
 * The merchant is this directory's example (server.ts): its pages, on their own origin under its
 * strict CSP, and its `POST /payments` (the typed client). The tests still call the signed merchant
 * API themselves where the example has no counterpart: other 3-D Secure display modes' accounts,
 * saved cards, manual capture and GET /v1/orders/{id}. None calls 3ds/complete: the customer's answer to a
 * challenge completes the payment in the browser flows (contract.md, Browser SDK).
 *
 * Skipped only when /usr/bin/chromium is absent; .ci/run installs it.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import type { BrowserContext, Frame, Page, Route } from "playwright-core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { build } from "@tender/browser-sdk/build"
import { CHROMIUM, type Chromium, HAVE_CHROMIUM, inlineChallenge, launchChromium, type SeenRequest } from "@tender/http/testing/Chromium"
import type { TestServer } from "@tender/http/testing/TestServer"
import { type ProviderFakes, startWithProviderFakes } from "@tender/http/testing/ProviderFakes"
import { type Credentials, send } from "@tender/client/Testing"
import { type CreatedPayment, type MerchantServer, startMerchantServer } from "./server.ts"
import { Channels } from "@tender/domain"


/** Where the run saves its screenshots (gitignored). */
const SCREENSHOTS = join(import.meta.dirname, "..", "..", "test-results", "screenshots")

type Merchant = Credentials & { readonly account_id: string; readonly publishable_key: string }
type DisplayMode = "inline" | "popup" | "redirect"

/** A payment awaiting the browser: its order and the client secret of its collect_card / collect_cvv action. */
interface ShopPayment {
  readonly merchant: Merchant
  readonly orderId: string
  readonly secret: string
}

/** Events the page saw, recorded by the merchant-side script the tests install. */
interface Seen {
  readonly name: string
  readonly payload: unknown
}

const PANS = ["4242424242424242", "4000000000000002", "4000000000003220", "378282246310005"]

describe.skipIf(!HAVE_CHROMIUM)(
  HAVE_CHROMIUM ? "tender.js in headless Chromium" : `tender.js in headless Chromium: SKIPPED, ${CHROMIUM} is absent (.ci/run installs it)`,
  () => {
    let server: TestServer
    /** The wire-level fakes every channel of this server reaches (TENDER_STRIPE_API_URL, …). */
    let fakes: ProviderFakes
    /** The example merchant, on the inline-mode account. */
    let shop: MerchantServer
    let context: BrowserContext
    /** One account per 3-D Secure display mode (the mode is the account's). */
    const merchants = new Map<DisplayMode, Merchant>()
    let browser: Chromium
    /** Every request the browser made (any page, any frame), with the frame that made it. */
    let requests: Array<SeenRequest>
    let seq = 0

    const merchant = async (mode: DisplayMode = "inline"): Promise<Merchant> => {
      const known = merchants.get(mode)
      if (known !== undefined) return known
      const created = await Effect.runPromise(server.accounts.create({ name: `sdk-${mode}`, mode: "test" }))
      await Effect.runPromise(server.accounts.setThreeDsDisplayMode(created.account_id, mode))
      merchants.set(mode, created)
      return created
    }

    const post = (creds: Credentials, path: string, body: unknown) => send(server, creds, "POST", path, { body: JSON.stringify(body) })

    /** The example's own endpoint: a collect_card payment on the shop's (inline) account. */
    const shopPayment = async (): Promise<ShopPayment> => {
      const reply = await fetch(`${shop.origin}/payments`, { method: "POST" })
      expect(reply.status).toBe(200)
      const created = (await reply.json()) as CreatedPayment
      return { merchant: await merchant("inline"), orderId: created.orderId, secret: created.clientSecret }
    }

    /**
     * The merchant's server creates a card payment: no token → collect_card; a saved card's token →
     * collect_cvv. The example's endpoint when it can (its account, a new card); otherwise signed here.
     */
    const createPayment = async (options: { mode?: DisplayMode; cardToken?: string; captureMethod?: "manual" } = {}): Promise<ShopPayment> => {
      if ((options.mode ?? "inline") === "inline" && options.cardToken === undefined && options.captureMethod === undefined) return shopPayment()
      const m = await merchant(options.mode)
      const reply = await post(m, "/v1/payments", {
        amount: "25.00",
        currency: "USD",
        country: "US",
        merchant_reference: `sdk-browser-${Date.now()}-${++seq}`,
        payment_method: options.cardToken === undefined ? { code: "card" } : { code: "card", details: { card_token: options.cardToken } },
        // The shop's return page; these payments are not the shop's own (no reference of its), so it names no order.
        success_url: `${shop.origin}/return`,
        cancel_url: `${shop.origin}/return`,
        ...(options.captureMethod !== undefined ? { capture_method: options.captureMethod } : {})
      })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.json.next_action.type).toBe(options.cardToken === undefined ? "collect_card" : "collect_cvv")
      return { merchant: m, orderId: reply.json.order_id, secret: reply.json.next_action.client_secret }
    }

    const orderStatus = async (payment: ShopPayment) => {
      const reply = await send(server, payment.merchant, "GET", `/v1/orders/${payment.orderId}`)
      expect(reply.status, reply.text).toBe(200)
      return reply.json.status as string
    }

    beforeAll(async () => {
      await build()
      fakes = await startWithProviderFakes({ storage: "memory", dataDir: ".tender-test" })
      server = fakes.server
      // Another port is another origin: the fields frame is cross-origin to the shop, as in production.
      const inline = await merchant("inline")
      shop = await startMerchantServer({
        tenderUrl: server.baseUrl,
        secretKey: inline.secret_key,
        signingSecret: inline.signing_secret,
        publishableKey: inline.publishable_key,
        log: () => {}
      })
      browser = await launchChromium()
      context = browser.context
      requests = browser.requests
    }, 120_000)

    afterAll(async () => {
      await browser?.close()
      await shop?.close()
      await fakes?.close()
    })

    const isFieldsFrame = (frameUrl: string) => frameUrl.startsWith(`${server.baseUrl}/fields/`)

    /** The merchant's page never holds the card number: not in its DOM, not in a request its own frames made. */
    const expectNoPanOnShop = async (page: Page) => {
      const content = await page.content()
      for (const pan of PANS) expect(content).not.toContain(pan)
      const own = requests.filter((r) => r.page === page && !isFieldsFrame(r.frameUrl))
      expect(own.length).toBeGreaterThan(0)
      for (const r of own) for (const pan of PANS) expect(r.url + r.body).not.toContain(pan)
    }

    /**
     * Opens the shop's front page (its CSP, without the checkout script), creates and mounts a
     * card element with `options` for the mode's account, recording its events.
     */
    const openCard = async (
      options: Record<string, unknown> = {},
      path = "/",
      mode: DisplayMode = "inline",
      prepare?: (page: Page) => Promise<void>,
      publishableKey?: string
    ) => {
      const page = await context.newPage()
      await prepare?.(page)
      await page.goto(`${shop.origin}${path}`)
      await page.evaluate(({ key, options }) => {
        const w = window as unknown as Record<string, any>
        w.seen = []
        /** When (performance.now()) the element was mounted, and each event first came. */
        w.firstAt = {}
        w.tender = w.Tender(key)
        w.card = w.tender.elements({ locale: "en" }).create("card", options)
        for (const name of ["ready", "change", "focus", "blur", "submitting", "loaderror"]) {
          w.card.on(name, (payload: unknown) => {
            w.seen.push({ name, payload })
            w.firstAt[name] ??= performance.now()
          })
        }
        w.mountAt = performance.now()
        w.card.mount("#card")
      }, { key: publishableKey ?? (await merchant(mode)).publishable_key, options })
      return page
    }

    const fields = async (page: Page): Promise<Frame> => {
      const handle = await page.waitForSelector("#card iframe")
      const frame = await handle.contentFrame()
      if (frame === null) throw new Error("no fields frame")
      await frame.waitForSelector("body:not(.hold)")
      return frame
    }

    /** The checkout page's outcome line: its text and the facts it shows as data-* attributes. */
    const outcome = (page: Page) =>
      page.evaluate(() => {
        const line = document.getElementById("outcome")!
        return { text: line.textContent, ...line.dataset } as { text: string; state?: string; status?: string; paymentId?: string; declineCode?: string; code?: string }
      })

    const seen = (page: Page) => page.evaluate(() => (window as unknown as { seen: Array<Seen> }).seen)

    const lastChange = async (page: Page) => [...(await seen(page))].reverse().find((e) => e.name === "change")?.payload as {
      complete: boolean
      error: { type: string; code: string } | null
      fields: Record<string, { complete: boolean; empty: boolean; brand?: string }>
    }

    const fillCard = async (frame: Frame, number: string, expiry = "12 / 34", cvc = "123") => {
      await frame.fill("#number", number)
      await frame.fill("#expiry", expiry)
      await frame.fill("#cvc", cvc)
    }

    const collect = (page: Page, secret: string) =>
      page.evaluate((secret) => (window as unknown as { tender: any }).tender.collectCard(secret), secret) as Promise<{
        card: { token: string; brand: string | null; last4: string; bin: string; expMonth: number | null; expYear: number | null } | null
        error: { type: string; code: string; message: string } | null
      }>

    const pay = (page: Page, payment: ShopPayment, token: string) =>
      page.evaluate(({ secret, token }) => (window as unknown as { tender: any }).tender.pay(secret, token), { secret: payment.secret, token }) as Promise<{
        status: string
        paymentId?: string
        declineCode?: string
        error?: unknown
      }>

    it("Tender() throws an integration_error for a secret key or none; mount throws on a missing target", async () => {
      const page = await context.newPage()
      await page.goto(shop.origin)
      const thrown = await page.evaluate(() => {
        const T = (window as unknown as { Tender: (k?: unknown) => any }).Tender
        const attempt = (f: () => unknown) => {
          try {
            f()
            return null
          } catch (e) {
            return { type: (e as any).type, code: (e as any).code }
          }
        }
        return {
          secret: attempt(() => T("sk_test_abc")),
          missing: attempt(() => T()),
          target: attempt(() => T("pk_test_x").elements().create("card").mount("#nowhere")),
          publishable: attempt(() => T("pk_test_x"))
        }
      })
      expect(thrown.secret).toEqual({ type: "integration_error", code: "secret_key_not_allowed" })
      expect(thrown.missing).toEqual({ type: "integration_error", code: "publishable_key_required" })
      expect(thrown.target).toEqual({ type: "integration_error", code: "mount_target_missing" })
      expect(thrown.publishable).toBeNull()
      await page.close()
    })

    it("mounts, resolves ready, and reports change/focus/blur without the card number", async () => {
      const page = await openCard()
      await page.evaluate(() => (window as unknown as { card: { ready: Promise<void> } }).card.ready)
      const frame = await fields(page)
      expect(await frame.getAttribute("#number", "autocomplete")).toBe("cc-number")
      expect(await frame.getAttribute("#expiry", "autocomplete")).toBe("cc-exp")
      expect(await frame.getAttribute("#cvc", "autocomplete")).toBe("cc-csc")
      await frame.click("#number")
      await frame.locator("#number").pressSequentially("4242424242424242")
      expect(await frame.inputValue("#number")).toBe("4242 4242 4242 4242")
      // Events cross a postMessage: poll until the last one has arrived.
      await expect.poll(() => lastChange(page)).toMatchObject({ complete: false, fields: { number: { complete: true, brand: "visa" } } })
      await frame.locator("#expiry").pressSequentially("1234")
      await frame.locator("#cvc").pressSequentially("123")
      await expect.poll(() => lastChange(page)).toMatchObject({ complete: true, error: null })
      const events = await seen(page)
      expect(events[0]?.name).toBe("ready")
      expect(events.some((e) => e.name === "focus" && (e.payload as { field: string }).field === "number")).toBe(true)
      expect(events.some((e) => e.name === "blur" && (e.payload as { field: string }).field === "number")).toBe(true)
      expect(JSON.stringify(events)).not.toContain("4242424242424242")
      expect(JSON.stringify(events)).not.toContain("4242 4242")
      // Unmount and mount again: a new frame, ready again.
      await page.evaluate(async () => {
        const card = (window as unknown as { card: any }).card
        card.unmount()
        card.mount("#card")
        await card.ready
      })
      expect(await page.locator("#card iframe").count()).toBe(1)
      await expectNoPanOnShop(page)
      await page.close()
    })

    /** The card tokens requests the fields frame sent (the one place the number may go). */
    const cardTokenRequests = () => requests.filter((r) => new URL(r.url).pathname === "/v1/client/card_tokens")

    it("refuses an invalid card with validation_error before anything leaves the browser", async () => {
      const payment = await createPayment()
      const page = await openCard({ clientSecret: payment.secret })
      const frame = await fields(page)
      const before = cardTokenRequests().length
      await fillCard(frame, "4242424242424241")
      await expect.poll(async () => (await lastChange(page)).error).toMatchObject({ type: "validation_error", code: "invalid_number" })
      expect(await collect(page, payment.secret)).toMatchObject({ card: null, error: { type: "validation_error", code: "invalid_number" } })
      await fillCard(frame, "4242424242424242", "01 / 20")
      expect((await collect(page, payment.secret)).error).toMatchObject({ code: "invalid_expiry" })
      // An amex needs four digits.
      await fillCard(frame, "378282246310005", "12 / 34", "123")
      expect((await collect(page, payment.secret)).error).toMatchObject({ code: "invalid_cvc" })
      expect(cardTokenRequests().length).toBe(before)
      await expectNoPanOnShop(page)
      await page.close()
    })

    it("collectCard tokenizes from inside the frame; pay resolves 4242 succeeded and 0002 failed, as the merchant API shows; update({clientSecret}) retries", async () => {
      let retry: Page | undefined
      for (const [number, expected, order] of [
        ["4242424242424242", { status: "succeeded" }, "succeeded"],
        ["4000000000000002", { status: "failed", declineCode: "card_declined" }, "failed"]
      ] as const) {
        const payment = await createPayment()
        const page = await openCard({ clientSecret: payment.secret })
        const frame = await fields(page)
        await fillCard(frame, number)
        const result = await collect(page, payment.secret)
        expect(result.error).toBeNull()
        expect(result.card).toMatchObject({ brand: "visa", last4: number.slice(-4), expMonth: 12, expYear: 2034 })
        expect(result.card!.token).toMatch(/^tok_/)
        expect((await seen(page)).some((e) => e.name === "submitting")).toBe(true)
        // The number went out once, from the fields frame, to card_tokens only.
        const carrying = requests.filter((r) => (r.url + r.body).includes(number))
        expect(carrying.map((r) => [new URL(r.url).pathname, isFieldsFrame(r.frameUrl)])).toEqual([["/v1/client/card_tokens", true]])
        const paid = await pay(page, payment, result.card!.token)
        expect(paid).toEqual({ ...expected, paymentId: payment.orderId })
        expect(await orderStatus(payment)).toBe(order)
        await expectNoPanOnShop(page)
        if (expected.status === "failed") retry = page
        else await page.close()
      }
      // The customer retries on the same page: the merchant's server creates a new payment and the
      // element takes its secret.
      const again = await createPayment()
      await retry!.evaluate((secret) => (window as unknown as { card: any }).card.update({ clientSecret: secret }), again.secret)
      const frame = await fields(retry!)
      await fillCard(frame, "4242424242424242")
      const { card } = await collect(retry!, again.secret)
      expect(await pay(retry!, again, card!.token)).toEqual({ status: "succeeded", paymentId: again.orderId })
      expect(await orderStatus(again)).toBe("succeeded")
      await retry!.close()
    })

    /** Fills 3220 on the shop's `path`, collects: the challenge will be the account's display mode. */
    const payChallenged = async (mode: DisplayMode, path = "/") => {
      const payment = await createPayment({ mode })
      const page = await openCard({ clientSecret: payment.secret }, path, mode)
      await fillCard(await fields(page), "4000000000003220")
      const { card } = await collect(page, payment.secret)
      return { payment, page, token: card!.token }
    }

    /** The two answers to a challenge, what `pay` then resolves with, and the order the merchant API shows. */
    const ANSWERS = [
      ["approve", { status: "succeeded" }, "succeeded"],
      ["deny", { status: "failed", declineCode: "authentication_failed" }, "failed"]
    ] as const

    /** pay with `options` (tender.js's `{returnUrl}`), as the merchant's page calls it. */
    const payWithOptions = (page: Page, payment: ShopPayment, token: string, options: { returnUrl?: string }) =>
      page.evaluate(({ secret, token, options }) => (window as unknown as { tender: any }).tender.pay(secret, token, options), {
        secret: payment.secret,
        token,
        options
      }) as Promise<{ status: string; paymentId?: string }>

    it("the inline challenge's frame on the fields host frames only the challenge its payment names", async () => {
      // Its own address never names what it frames: a forged fragment (no valid secret) frames nothing.
      // (That it frames a real payment's challenge: the inline tests below answer inside it.)
      const forged = await context.newPage()
      const refused = forged.waitForResponse((r) => new URL(r.url()).pathname === "/v1/client/payment_status")
      await forged.goto(`${server.baseUrl}/fields/v1/challenge.html#${new URLSearchParams({ key: (await merchant("inline")).publishable_key, secret: "forged" })}`)
      expect((await refused).status()).toBe(401)
      expect(await forged.locator("iframe").count()).toBe(0)
      // The secret is read from the fragment and dropped from the frame's address.
      expect(forged.url()).toBe(`${server.baseUrl}/fields/v1/challenge.html`)
      await forged.close()
    })

    it("pay runs an inline 3-D Secure challenge and resolves with the outcome (approved → succeeded, denied → failed)", async () => {
      for (const [answer, expected, order] of ANSWERS) {
        const { payment, page, token } = await payChallenged("inline")
        const paying = pay(page, payment, token)
        const challenge = await inlineChallenge(page)
        // The answer alone completes it: pay resolves with no call from the merchant's server.
        await challenge!.click(`button[value=${answer}]`)
        expect(await paying).toEqual({ ...expected, paymentId: payment.orderId })
        expect(await page.locator("iframe[title='3-D Secure']").count()).toBe(0)
        expect(await orderStatus(payment)).toBe(order)
        await expectNoPanOnShop(page)
        await page.close()
      }
    })

    it("pay runs a popup challenge in a window, and a redirect challenge by leaving the page and coming back to returnUrl?tender_payment_id= (approved and denied)", async () => {
      for (const [answer, expected, order] of ANSWERS) {
        const { payment, page, token } = await payChallenged("popup")
        const opened = context.waitForEvent("page")
        const paying = pay(page, payment, token)
        const popup = await opened
        await popup.waitForLoadState()
        expect(popup.url()).toContain("/sandbox/3ds")
        await popup.click(`button[value=${answer}]`)
        expect(await paying).toEqual({ ...expected, paymentId: payment.orderId })
        await expect.poll(() => popup.isClosed()).toBe(true)
        expect(await orderStatus(payment)).toBe(order)
        await expectNoPanOnShop(page)
        await page.close()
      }

      // Redirect: the whole page goes to the challenge and comes back to the return URL with the
      // payment's id appended; once with an explicit, relative returnUrl without a query (`?`), once with the
      // default, the current page, whose own query is kept (`&`).
      const redirects = [
        { answer: "approve", order: "succeeded", path: "/", returnUrl: "/order/done" },
        { answer: "deny", order: "failed", path: "/?cart=8&step=pay", returnUrl: undefined }
      ] as const
      for (const { answer, order, path, returnUrl } of redirects) {
        const { payment, page, token } = await payChallenged("redirect", path)
        if (returnUrl !== undefined) {
          // A return URL that is not an absolute http(s) address is refused before anything is paid.
          expect(await payWithOptions(page, payment, token, { returnUrl: "javascript:alert(1)" }))
            .toMatchObject({ status: "failed", error: { type: "validation_error", code: "invalid_return_url" } })
          expect(page.url()).toBe(`${shop.origin}${path}`)
          expect(await orderStatus(payment)).toBe("requires_action")
        }
        const navigated = page.waitForURL(/\/sandbox\/3ds/)
        expect(await payWithOptions(page, payment, token, returnUrl === undefined ? {} : { returnUrl }))
          .toEqual({ status: "requires_action", paymentId: payment.orderId })
        await navigated
        const sent = requests.findLast((r) => new URL(r.url).pathname === "/v1/client/pay" && r.body.includes(payment.secret))
        // tender.js resolves a relative returnUrl against the page.
        const expectedReturn = new URL(returnUrl ?? path, shop.origin).href
        expect(JSON.parse(sent!.body).return_url).toBe(expectedReturn)
        await page.click(`button[value=${answer}]`)
        const landing = `${expectedReturn}${expectedReturn.includes("?") ? "&" : "?"}tender_payment_id=${payment.orderId}`
        await page.waitForURL((url) => url.href === landing)
        expect(page.url()).toBe(landing)
        // Back on the shop, the merchant's server reads the outcome the answer already brought.
        expect(await orderStatus(payment)).toBe(order)
        await expectNoPanOnShop(page)
        await page.close()
      }
    })

    it("on a Stripe channel: the card element's card is charged through the channel at Stripe (the fake holds one PaymentIntent)", async () => {
      // A test account with a Stripe test channel routes exactly as a live one (contract.md, Providers).
      const created = await Effect.runPromise(server.accounts.create({ name: "sdk-stripe", mode: "test" }))
      const channel = await server.run(Effect.gen(function*() {
        return yield* (yield* Channels).add(created.account_id, {
          provider: "stripe",
          mode: "test",
          methods: null,
          currencies: null,
          countries: null,
          priority: 0,
          credentials: { secret_key: "sk_test_51BrowserSdk", webhook_secret: "whsec_BrowserSdk" }
        })
      }))
      const reply = await post(created, "/v1/payments", {
        amount: "31.00",
        currency: "USD",
        country: "US",
        merchant_reference: `sdk-stripe-${Date.now()}`,
        payment_method: { code: "card" },
        success_url: `${shop.origin}/return`,
        cancel_url: `${shop.origin}/return`
      })
      expect(reply.status, reply.text).toBe(200)
      const payment: ShopPayment = { merchant: created, orderId: reply.json.order_id, secret: reply.json.next_action.client_secret }
      const page = await openCard({}, "/", "inline", undefined, created.publishable_key)
      await fillCard(await fields(page), "4242424242424242")
      const { card } = await collect(page, payment.secret)
      expect(await pay(page, payment, card!.token)).toEqual({ status: "succeeded", paymentId: payment.orderId })
      expect(await orderStatus(payment)).toBe("succeeded")
      const order = await send(server, created, "GET", `/v1/orders/${payment.orderId}`)
      const txn = await send(server, created, "GET", `/v1/transactions/${order.json.transactions[0] as string}`)
      expect(txn.json).toMatchObject({ provider: "stripe", status: "completed" })
      const intents = fakes.stripe.paymentIntents().filter((p) => JSON.stringify(p).includes(txn.json.id as string))
      expect(intents).toHaveLength(1)
      expect(intents[0]).toMatchObject({ amount: 3100, status: "succeeded" })
      expect(channel.id).toMatch(/^ch_/)
      await page.close()
    })

    it("relays an expired secret as authentication_error CLIENT_SECRET_EXPIRED", async () => {
      const payment = await createPayment()
      const page = await openCard()
      const frame = await fields(page)
      await fillCard(frame, "4242424242424242")
      const expired = await post(payment.merchant, "/v1/test_helpers/client_secrets/expire", { client_secret: payment.secret })
      expect(expired.status, expired.text).toBe(200)
      expect((await collect(page, payment.secret)).error).toMatchObject({ type: "authentication_error", code: "CLIENT_SECRET_EXPIRED" })
      await page.close()
    })

    /** The merchant's server vaults a card earlier (a returning customer's card on file). */
    const savedCard = async (number: string, cvc: string) => {
      const reply = await post(await merchant(), "/v1/test_helpers/card_tokens", { number, exp_month: 12, exp_year: 2035, cvc })
      expect(reply.status, reply.text).toBe(201)
      return reply.json.token as string
    }

    it("card on file: a collect_cvv secret renders CVC-only with brand and last four, and pays", async () => {
      const saved = await savedCard("378282246310005", "1234")
      const payment = await createPayment({ cardToken: saved })
      const page = await openCard({ clientSecret: payment.secret })
      const frame = await fields(page)
      expect(await frame.isVisible("#number")).toBe(false)
      expect(await frame.isVisible("#expiry")).toBe(false)
      expect(await frame.textContent("#saved")).toContain("0005")
      await frame.locator("#cvc").pressSequentially("123")
      // One change per digit typed: three arrive, none complete (an amex needs four).
      const changes = async () => (await seen(page)).filter((e) => e.name === "change").map((e) => (e.payload as { complete: boolean }).complete)
      await expect.poll(async () => (await changes()).length).toBe(3)
      expect(await changes()).toEqual([false, false, false])
      await frame.locator("#cvc").pressSequentially("4")
      await expect.poll(async () => (await lastChange(page)).complete).toBe(true)
      expect((await collect(page, payment.secret)).card).toEqual({
        token: saved, brand: "amex", last4: "0005", bin: "378282", expMonth: null, expYear: null
      })
      expect(await pay(page, payment, saved)).toEqual({ status: "succeeded", paymentId: payment.orderId })
      expect(await orderStatus(payment)).toBe("succeeded")
      await page.close()
    })

    it("manual capture (a saved card, CVC collected): pay resolves succeeded while the merchant API shows the payment authorized", async () => {
      const saved = await savedCard("4242424242424242", "123")
      const payment = await createPayment({ cardToken: saved, captureMethod: "manual" })
      const page = await openCard({ clientSecret: payment.secret })
      await (await fields(page)).locator("#cvc").pressSequentially("123")
      expect((await collect(page, payment.secret)).card?.token).toBe(saved)
      expect(await pay(page, payment, saved)).toEqual({ status: "succeeded", paymentId: payment.orderId })
      expect(await orderStatus(payment)).toBe("authorized")
      await page.close()
    })

    /**
     * Records, inside the page, when the fields frame's handshake (`hello`) and first paint (`ready`)
     * messages reach it: the time between is what the frame held its first paint.
     */
    const recordFrameMessages = (page: Page) =>
      page.addInitScript(() => {
        const w = window as unknown as { frameAt: Record<string, number> }
        w.frameAt = {}
        window.addEventListener("message", (event) => {
          const kind = (event.data as { kind?: unknown } | null)?.kind
          if (typeof kind === "string") w.frameAt[kind] ??= performance.now()
        })
      }).then(() => undefined)

    const paintHold = async (page: Page) => {
      await page.evaluate(() => (window as unknown as { card: { ready: Promise<void> } }).card.ready)
      return page.evaluate(() => {
        const w = window as unknown as { frameAt: Record<string, number>; firstAt: Record<string, number>; mountAt: number }
        return { hold: w.frameAt.ready! - w.frameAt.hello!, mountToPaint: w.firstAt.ready! - w.mountAt }
      })
    }

    it("holds first paint at most 300 ms for a slow card-on-file secret, then switches to CVC-only", async () => {
      // The reference: a secret-less mount paints as soon as the handshake is done.
      const plain = await openCard({}, "/", "inline", recordFrameMessages)
      const unheld = await paintHold(plain)
      await plain.close()
      const payment = await createPayment({ cardToken: await savedCard("4242424242424242", "123") })
      // A slow network for the fields frame's session read only.
      const page = await openCard({ clientSecret: payment.secret }, "/", "inline", async (page) => {
        await recordFrameMessages(page)
        await page.route(`${server.baseUrl}/v1/client/session`, async (route) => {
          await new Promise((resume) => setTimeout(resume, 3000))
          await route.continue()
        })
      })
      const held = await paintHold(page)
      // The frame held its paint for the secret's session, ~300 ms, and not for the 3 s the answer took.
      expect(held.hold - unheld.hold).toBeGreaterThanOrEqual(250)
      expect(held.hold - unheld.hold).toBeLessThanOrEqual(350)
      expect(held.mountToPaint).toBeLessThan(3000)
      const frame = await fields(page)
      // Painted before the session answered: the full form first...
      expect(await frame.isVisible("#number")).toBe(true)
      // ...then CVC-only once it did.
      await frame.waitForSelector("#number", { state: "hidden" })
      expect(await frame.textContent("#saved")).toContain("4242")
      await page.close()
    })

    it("a session answer after first paint keeps what the customer typed when the form keeps its shape (the hosted glue's update({clientSecret}) before collectCard)", async () => {
      const payment = await createPayment()
      const page = await openCard({}, "/", "inline", (page) =>
        page.route(`${server.baseUrl}/v1/client/session`, async (route) => {
          await new Promise((resume) => setTimeout(resume, 1500))
          await route.continue()
        }).then(() => undefined))
      const frame = await fields(page)
      await fillCard(frame, "4242424242424242")
      const answered = page.waitForResponse((r) => new URL(r.url()).pathname === "/v1/client/session")
      await page.evaluate((secret) => (window as unknown as { card: any }).card.update({ clientSecret: secret }), payment.secret)
      await answered
      // A moment for the frame to apply the answer (before the fix, it emptied the fields here).
      await new Promise((resume) => setTimeout(resume, 300))
      expect(await frame.inputValue("#number")).toBe("4242 4242 4242 4242")
      expect(await frame.inputValue("#expiry")).toBe("12 / 34")
      expect(await frame.inputValue("#cvc")).toBe("123")
      const { card } = await collect(page, payment.secret)
      expect(card?.last4).toBe("4242")
      expect(await pay(page, payment, card!.token)).toEqual({ status: "succeeded", paymentId: payment.orderId })
      await page.close()
    })

    it("emits loaderror IFRAME_BLOCKED when the page's CSP frame-src omits the fields host", async () => {
      // The example's checkout page under that policy shows the code to the customer (its loaderror handler).
      const checkout = await context.newPage()
      const response = await checkout.goto(`${shop.origin}/checkout?csp=without-fields-host`)
      expect(response!.headers()["content-security-policy"]!.split("; ")).toContain("frame-src 'none'")
      const page = await openCard({}, "/?csp=without-fields-host")
      await page.waitForFunction(() => (window as unknown as { seen: Array<Seen> }).seen.some((e) => e.name === "loaderror"), undefined, { timeout: 10_000 })
      // contract.md: after 3 seconds without the handshake, measured in the page from mount().
      const after = await page.evaluate(() => {
        const w = window as unknown as { firstAt: Record<string, number>; mountAt: number }
        return w.firstAt.loaderror! - w.mountAt
      })
      expect(after).toBeGreaterThanOrEqual(2900)
      expect(after).toBeLessThanOrEqual(4500)
      const loaderror = (await seen(page)).find((e) => e.name === "loaderror")!.payload as { error: { type: string; code: string } }
      expect(loaderror.error).toMatchObject({ type: "integration_error", code: "IFRAME_BLOCKED" })
      const ready = await page.evaluate(() =>
        (window as unknown as { card: { ready: Promise<void> } }).card.ready.then(() => "ready", (e: { code: string }) => e.code)
      )
      expect(ready).toBe("IFRAME_BLOCKED")
      // collectCard resolves with the error (it does not throw): the merchant's page shows it.
      expect(await collect(page, "cs_x")).toMatchObject({ card: null, error: { type: "integration_error", code: "IFRAME_BLOCKED" } })
      await expect.poll(async () => (await outcome(checkout)).code).toBe("IFRAME_BLOCKED")
      expect((await outcome(checkout)).text).toBe("The card form did not load (IFRAME_BLOCKED).")
      expect(await checkout.isDisabled("#pay")).toBe(true)
      await checkout.close()
      await page.close()
    })

    it("applies accepted appearance values, ignores rejected ones, and update replaces the whole appearance", async () => {
      const page = await openCard({
        appearance: {
          variables: {
            colorText: "rgb(10, 20, 30)", colorBackground: "url(https://evil.example/x.png)", borderRadius: "calc(1px + 2px)", fontSize: "20px",
            colorBorder: "#d9480f"
          }
        }
      })
      const frame = await fields(page)
      mkdirSync(SCREENSHOTS, { recursive: true })
      const shots = [join(SCREENSHOTS, "appearance-custom.png"), join(SCREENSHOTS, "appearance-square-stock.png")] as const
      for (const shot of shots) rmSync(shot, { force: true })
      const style = () =>
        frame.evaluate(() => {
          const s = getComputedStyle(document.getElementById("number")!)
          return { color: s.color, background: s.backgroundColor, radius: s.borderTopLeftRadius, size: s.fontSize }
        })
      expect(await style()).toEqual({ color: "rgb(10, 20, 30)", background: "rgb(255, 255, 255)", radius: "6px", size: "20px" })
      await page.locator("#card iframe").screenshot({ path: shots[0] })
      await page.evaluate(async () => {
        const card = (window as unknown as { card: any }).card
        card.update({ appearance: { variables: { borderRadius: "0" } } })
      })
      await frame.waitForFunction(() => getComputedStyle(document.getElementById("number")!).borderTopLeftRadius === "0px")
      // colorText and fontSize were not named again: back to stock.
      expect(await style()).toEqual({ color: "rgb(26, 26, 26)", background: "rgb(255, 255, 255)", radius: "0px", size: "16px" })
      await page.locator("#card iframe").screenshot({ path: shots[1] })
      console.log(`appearance screenshots: ${shots.join(", ")}`)
      const [custom, stock] = shots.map((shot) => readFileSync(shot))
      expect(custom!.length).toBeGreaterThan(0)
      expect(stock!.length).toBeGreaterThan(0)
      expect(custom!.equals(stock!)).toBe(false)
      await page.evaluate(() => (window as unknown as { card: any }).card.update({ locale: "es" }))
      await frame.waitForFunction(() => document.getElementById("number-label")!.textContent === "Número de tarjeta")
      await page.close()
    })

    it("the example's checkout page pays under its strict CSP: 0002 declined, then 4242 on a new payment from its server", async () => {
      const page = await context.newPage()
      // Anything the page's policy blocks would show here: the three hosts must be enough.
      await page.addInitScript(() => {
        const w = window as unknown as { violations: Array<string> }
        w.violations = []
        document.addEventListener("securitypolicyviolation", (e) => w.violations.push(`${e.violatedDirective} ${e.blockedURI}`))
      })
      const response = await page.goto(`${shop.origin}/checkout`)
      const csp = response!.headers()["content-security-policy"]!.split("; ")
      expect(csp).toContain(`script-src 'self' ${server.baseUrl}`)
      // The fields host alone (the spec's three hosts): an inline challenge is framed inside it.
      expect(csp).toContain(`frame-src ${server.baseUrl}`)
      expect(csp).toContain(`connect-src 'self' ${server.baseUrl}`)
      expect(csp).toContain("default-src 'self'")
      const frame = await fields(page)
      const inline = await merchant("inline")
      const order = (orderId: string) => orderStatus({ merchant: inline, orderId, secret: "" })

      await fillCard(frame, "4000000000000002")
      await page.click("#pay")
      await expect.poll(async () => (await outcome(page)).state).toBe("failed")
      const declined = await outcome(page)
      expect(declined).toMatchObject({ status: "failed", declineCode: "card_declined" })
      expect(declined.paymentId).toMatch(/^ord_/)
      expect(await order(declined.paymentId!)).toBe("failed")

      // The page asked its server for a new payment and gave the element its secret: the fields reset.
      await expect.poll(() => frame.inputValue("#number")).toBe("")
      expect(await page.isDisabled("#pay")).toBe(true)
      await fillCard(frame, "4242424242424242")
      await page.click("#pay")
      await expect.poll(async () => (await outcome(page)).state).toBe("succeeded")
      const paid = await outcome(page)
      expect(paid).toMatchObject({ status: "succeeded", text: "Thank you! Your payment went through." })
      expect(paid.paymentId).not.toBe(declined.paymentId)
      expect(await order(paid.paymentId!)).toBe("succeeded")
      expect(await page.isDisabled("#pay")).toBe(true)

      const asked = requests.filter((r) => r.page === page && r.url === `${shop.origin}/payments`)
      expect(asked.length).toBe(2)
      expect(await page.evaluate(() => (window as unknown as { violations: Array<string> }).violations)).toEqual([])
      await expectNoPanOnShop(page)

      // The return page reads the order from Tender, as after a redirect-mode challenge.
      await page.goto(`${shop.origin}/return?tender_payment_id=${paid.paymentId}`)
      expect(await page.textContent("#outcome")).toBe(`Order ${paid.paymentId}: succeeded`)
      await page.close()
    })

    it("the element's methods: off() removes a handler, clear() empties the fields, focus()/blur() move focus, update({locale}) keeps the contents, destroy() is final", async () => {
      const page = await openCard()
      const frame = await fields(page)
      const card = <T>(f: (card: any, w: any) => T) => page.evaluate(`(${f.toString()})(window.card, window)`) as Promise<Awaited<T>>
      const since = async (mark: number) => (await seen(page)).slice(mark)

      await fillCard(frame, "4242424242424242")
      await expect.poll(() => lastChange(page)).toMatchObject({ complete: true })

      // update({locale}) replaces the wording only: what the customer typed stays.
      await card((c) => c.update({ locale: "de" }))
      await frame.waitForFunction(() => document.getElementById("number-label")!.textContent === "Kartennummer")
      expect(await frame.inputValue("#number")).toBe("4242 4242 4242 4242")

      // off(): the handler removed is not called by the next change; the one still on is.
      await card((c, w) => {
        w.offCalls = 0
        w.offHandler = () => w.offCalls++
        c.on("change", w.offHandler)
        c.off("change", w.offHandler)
      })
      const mark = (await seen(page)).length
      await card((c) => c.clear())
      await expect.poll(async () => (await since(mark)).filter((e) => e.name === "change").length).toBe(1)
      expect(await lastChange(page)).toEqual({
        complete: false,
        error: null,
        fields: {
          number: expect.objectContaining({ empty: true, complete: false }),
          expiry: expect.objectContaining({ empty: true, complete: false }),
          cvc: expect.objectContaining({ empty: true, complete: false })
        }
      })
      for (const field of ["#number", "#expiry", "#cvc"]) expect(await frame.inputValue(field)).toBe("")
      expect(await card((_, w) => w.offCalls)).toBe(0)

      // focus() puts the caret in the number field; blur() takes it out. Each reports its field.
      const focusMark = (await seen(page)).length
      await card((c) => c.focus())
      await expect.poll(() => since(focusMark)).toContainEqual({ name: "focus", payload: { field: "number" } })
      expect(await frame.evaluate(() => document.activeElement?.id)).toBe("number")
      await card((c) => c.blur())
      await expect.poll(() => since(focusMark)).toContainEqual({ name: "blur", payload: { field: "number" } })
      expect(await frame.evaluate(() => document.activeElement?.id)).not.toBe("number")

      // destroy(): the iframe goes, and the element cannot come back (a new one must be created).
      await card((c) => c.destroy())
      expect(await page.locator("#card iframe").count()).toBe(0)
      const again = await card((c) => {
        try {
          c.mount("#card")
          return null
        } catch (e) {
          return { type: (e as { type: string }).type, code: (e as { code: string }).code }
        }
      })
      expect(again).toEqual({ type: "integration_error", code: "element_destroyed" })
      expect(await page.locator("#card iframe").count()).toBe(0)
      const collected = await page.evaluate(() =>
        (window as unknown as { tender: any }).tender.collectCard("cs_x").then(() => null, (e: { code: string }) => e.code)
      )
      expect(collected).toBe("card_element_not_mounted")
      await page.close()
    })

    it("the merchant page's own script cannot read the card number: the frame's document is cross-origin, and no message to the page carries it", async () => {
      const payment = await createPayment()
      const page = await openCard({ clientSecret: payment.secret }, "/", "inline", (page) =>
        page.addInitScript(() => {
          // Installed before tender.js: every message any frame posts to the merchant's window.
          const w = window as unknown as { messages: Array<{ origin: string; data: string }> }
          w.messages = []
          window.addEventListener("message", (event) => w.messages.push({ origin: event.origin, data: JSON.stringify(event.data) }))
        }).then(() => undefined))
      const frame = await fields(page)
      await fillCard(frame, "4242424242424242")
      const { card } = await collect(page, payment.secret)
      expect(card!.token).toMatch(/^tok_/)

      const reads = await page.evaluate(() => {
        const iframe = document.querySelector("#card iframe") as HTMLIFrameElement
        const attempt = (read: () => unknown) => {
          try {
            return { read: String(read()) }
          } catch (error) {
            return { threw: (error as Error).name }
          }
        }
        return {
          contentDocument: attempt(() => iframe.contentDocument),
          document: attempt(() => iframe.contentWindow!.document.body.innerHTML),
          input: attempt(() => (iframe.contentWindow as unknown as { document: Document }).document.querySelector("input")!.value),
          frames: attempt(() => (window.frames[0] as Window).document.documentElement.outerHTML)
        }
      })
      expect(reads).toEqual({
        contentDocument: { read: "null" },
        document: { threw: "SecurityError" },
        input: { threw: "SecurityError" },
        frames: { threw: "SecurityError" }
      })

      const messages = await page.evaluate(() => (window as unknown as { messages: Array<{ origin: string; data: string }> }).messages)
      // The listener saw the frame's traffic, the token's answer included...
      expect(messages.some((m) => m.origin === server.baseUrl && m.data.includes(card!.token))).toBe(true)
      // ...and none of it holds the number, raw or as displayed.
      for (const m of messages) for (const pan of [...PANS, "4242 4242 4242 4242", "424242424242"]) expect(m.data).not.toContain(pan)
      await expectNoPanOnShop(page)
      await page.close()
    })

    /** Runs `body` in the page; a promise that never settles comes back as "hung" after `ms`. */
    const settlesWithin = <T>(page: Page, ms: number, body: string) =>
      page.evaluate(`Promise.race([(${body})(window), new Promise((r) => setTimeout(() => r("hung"), ${ms}))])`) as Promise<T | "hung">

    it("collectCard settles with card_element_not_mounted when its element is unmounted or destroyed before ready; a hello after the 3 s timeout does not make the element ready", async () => {
      for (const teardown of ["unmount", "destroy"] as const) {
        const page = await openCard()
        const result = await settlesWithin(page, 5000, `async (w) => {
          const collecting = w.tender.collectCard("cs_x")
          w.card.${teardown}()
          return collecting
        }`)
        expect(result).toMatchObject({ card: null, error: { type: "integration_error", code: "card_element_not_mounted" } })
        await page.close()
      }

      // A fields page that answers late (3.5 s): the element already reported IFRAME_BLOCKED.
      const page = await openCard({}, "/", "inline", async (page) => {
        await recordFrameMessages(page)
        await page.route(`${server.baseUrl}/fields/v1/card.html*`, async (route) => {
          await new Promise((resume) => setTimeout(resume, 3500))
          await route.continue()
        })
      })
      await page.waitForFunction(() => (window as unknown as { seen: Array<Seen> }).seen.some((e) => e.name === "loaderror"), undefined, { timeout: 10_000 })
      // The frame loads and says hello after the timeout; the element ignores it.
      await page.waitForFunction(() => (window as unknown as { frameAt: Record<string, number> }).frameAt.hello !== undefined, undefined, { timeout: 10_000 })
      await new Promise((resume) => setTimeout(resume, 1000))
      expect((await seen(page)).map((e) => e.name)).toEqual(["loaderror"])
      expect(await collect(page, "cs_x")).toMatchObject({ card: null, error: { code: "IFRAME_BLOCKED" } })
      await page.close()
    })

    it("collectCard uses the element mounted most recently, not the one created last", async () => {
      const payment = await createPayment()
      const page = await openCard({ clientSecret: payment.secret })
      // A second element, created later, mounted into its own container.
      await page.evaluate(async () => {
        const w = window as unknown as Record<string, any>
        const box = document.createElement("div")
        box.id = "second"
        document.body.appendChild(box)
        w.second = w.tender.elements({ locale: "en" }).create("card")
        w.second.mount("#second")
        await w.second.ready
        // The first element, mounted again: now the most recent.
        w.card.unmount()
        w.card.mount("#card")
        await w.card.ready
      })
      await fillCard(await fields(page), "4242424242424242")
      const { card, error } = await collect(page, payment.secret)
      expect(error).toBeNull()
      expect(card?.last4).toBe("4242")
      await page.close()
    })

    it("pay: a 5xx, a 409 or a lost answer after the authorization went through resolves the payment's status (not failed), with the error attached", async () => {
      const failures = [
        ["502", async (route: Route) => route.fulfill({ response: await route.fetch(), status: 502, body: "Bad gateway" }), { type: "api_error", code: "http_502" }],
        ["409", async (route: Route) =>
          route.fulfill({
            response: await route.fetch(),
            status: 409,
            body: JSON.stringify({ error: { type: "api_error", code: "card_payment_in_progress", message: "A card payment is in progress." } })
          }), { type: "api_error", code: "card_payment_in_progress" }],
        ["network", async (route: Route) => {
          await route.fetch()
          await route.abort("connectionreset")
        }, { type: "network_error", code: "network_error" }]
      ] as const
      for (const [, answer, error] of failures) {
        const payment = await createPayment()
        const page = await openCard({ clientSecret: payment.secret }, "/", "inline", (page) =>
          page.route(`${server.baseUrl}/v1/client/pay`, async (route) => {
            if (route.request().method() !== "POST") return route.continue()
            await answer(route)
          }).then(() => undefined))
        await fillCard(await fields(page), "4242424242424242")
        const { card } = await collect(page, payment.secret)
        const paid = await pay(page, payment, card!.token)
        expect(paid).toMatchObject({ status: "succeeded", paymentId: payment.orderId, error })
        expect(await orderStatus(payment)).toBe("succeeded")
        await page.close()
      }
    })

    it("pay keeps waiting for a 3-D Secure challenge through failed status reads (network, 503, 429 with Retry-After)", async () => {
      const { payment, page, token } = await payChallenged("inline")
      let reads = 0
      await page.route(`${server.baseUrl}/v1/client/payment_status`, async (route) => {
        if (route.request().method() !== "POST") return route.continue()
        reads++
        if (reads === 1) return route.abort("connectionreset")
        const response = await route.fetch()
        if (reads === 2) return route.fulfill({ response, status: 503, body: "" })
        if (reads === 3) return route.fulfill({ response, status: 429, headers: { ...response.headers(), "retry-after": "1" }, body: "" })
        return route.fulfill({ response })
      })
      const paying = pay(page, payment, token)
      const challenge = await inlineChallenge(page)
      await expect.poll(() => reads, { timeout: 15_000 }).toBeGreaterThanOrEqual(4)
      // The challenge is still open after the failed reads.
      expect(await page.locator("iframe[title='3-D Secure']").count()).toBe(1)
      await challenge!.click("button[value=approve]")
      expect(await paying).toEqual({ status: "succeeded", paymentId: payment.orderId })
      expect(await page.locator("iframe[title='3-D Secure']").count()).toBe(0)
      await page.close()
    })
  }
)
