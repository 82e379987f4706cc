/**
 * contract.md, Browser SDK: "in the browser flows (the SDK's `pay()` in every display mode, the hosted
 * checkout page) the customer's answer to a 3-D Secure challenge completes the payment with no call
 * from the merchant's server, on the sandbox as on every channel: `pay()` resolves `succeeded` or
 * `failed`."
 *
 * A merchant's page (its own origin, served here) runs tender.js in headless Chromium: the card
 * element's challenge card, `pay()`, and the customer's answer in each display mode (inline: the
 * modal frame; popup: a window; redirect: the whole page, back to `returnUrl?tender_payment_id=`),
 * on the built-in sandbox (its challenge page on Tender's host) and on a Stripe channel (the
 * wire-level fake's page on its own origin, back through Tender's return route). The merchant's
 * server never calls `3ds/complete` here: it only reads the order, as a merchant's return page would.
 *
 * Skipped only when /usr/bin/chromium is absent; .ci/run installs it.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Frame, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { build } from "@tender/browser-sdk/build"
import { type Credentials, send } from "@tender/client/Testing"
import { CHROMIUM, type Chromium, HAVE_CHROMIUM, inlineChallenge, launchChromium } from "../src/testing/Chromium.ts"
import { merchantIn, type ProviderFakes, startWithProviderFakes } from "../src/testing/ProviderFakes.ts"
import type { TestServer } from "../src/testing/TestServer.ts"

type Mode = "inline" | "popup" | "redirect"
type Provider = "sandbox" | "stripe"
type Answer = "approve" | "deny"
type Merchant = Credentials & { readonly account_id: string; readonly publishable_key: string }

/** The merchant's site: one page with a card element mount point and tender.js from Tender. */
const startShop = (tenderUrl: string) =>
  new Promise<{ readonly origin: string; readonly close: () => Promise<void> }>((done) => {
    const server: Server = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      response.end(`<!doctype html><title>Shop</title><h1>Shop</h1><div id="card"></div><script src="${tenderUrl}/sdk/v1/tender.js"></script>`)
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      done({ origin: `http://127.0.0.1:${port}`, close: () => new Promise((closed) => server.close(() => closed())) })
    })
  })

/** How each provider's challenge page takes the customer's answer. */
const ANSWER_BUTTON: Record<Provider, Record<Answer, string>> = {
  sandbox: { approve: "button[value=approve]", deny: "button[value=deny]" },
  stripe: { approve: "text=Complete authentication", deny: "text=Fail authentication" }
}

const EXPECTED: Record<Answer, { readonly pay: Record<string, unknown>; readonly order: string }> = {
  approve: { pay: { status: "succeeded" }, order: "succeeded" },
  deny: { pay: { status: "failed", declineCode: "authentication_failed" }, order: "failed" }
}

const CASES: ReadonlyArray<readonly [Provider, Mode, Answer]> = [
  ["sandbox", "inline", "approve"],
  ["sandbox", "inline", "deny"],
  ["sandbox", "popup", "approve"],
  ["sandbox", "redirect", "approve"],
  ["stripe", "inline", "approve"],
  ["stripe", "inline", "deny"],
  ["stripe", "popup", "approve"],
  ["stripe", "redirect", "approve"]
]

describe.skipIf(!HAVE_CHROMIUM)(
  HAVE_CHROMIUM ? "3-D Secure in the SDK's pay(), in headless Chromium" : `3-D Secure in the SDK's pay(): SKIPPED, ${CHROMIUM} is absent`,
  () => {
    let fakes: ProviderFakes
    let server: TestServer
    let browser: Chromium
    let shop: Awaited<ReturnType<typeof startShop>>
    let seq = 0

    beforeAll(async () => {
      await build()
      fakes = await startWithProviderFakes({ storage: "memory", dataDir: ".tender-test" })
      server = fakes.server
      shop = await startShop(server.baseUrl)
      browser = await launchChromium()
    }, 120_000)

    afterAll(async () => {
      await browser?.close()
      await shop?.close()
      await fakes?.close()
    })

    const orderStatus = async (merchant: Merchant, orderId: string) => {
      const reply = await send(server, merchant, "GET", `/v1/orders/${orderId}`)
      expect(reply.status, reply.text).toBe(200)
      return reply.json.status as string
    }

    /** The merchant's page with the card element of a collect_card payment, the challenge card typed in and collected. */
    const payable = async (merchant: Merchant) => {
      const created = await send(server, merchant, "POST", "/v1/payments", {
        body: JSON.stringify({
          amount: "18.00",
          currency: "USD",
          country: "US",
          merchant_reference: `3ds-flow-${Date.now()}-${++seq}`,
          payment_method: { code: "card" },
          success_url: `${shop.origin}/paid`,
          cancel_url: `${shop.origin}/cart`
        })
      })
      expect(created.json.next_action?.type, created.text).toBe("collect_card")
      const orderId = created.json.order_id as string
      const secret = created.json.next_action.client_secret as string
      const page = await browser.context.newPage()
      await page.goto(`${shop.origin}/checkout`)
      await page.evaluate(({ key, secret }) => {
        const w = window as unknown as Record<string, any>
        w.tender = w.Tender(key)
        w.tender.elements({ locale: "en" }).create("card", { clientSecret: secret }).mount("#card")
      }, { key: merchant.publishable_key, secret })
      const fields = (await (await page.waitForSelector("#card iframe")).contentFrame())!
      await fields.waitForSelector("body:not(.hold)")
      await fields.fill("#number", "4000 0000 0000 3220")
      await fields.fill("#expiry", "12 / 34")
      await fields.fill("#cvc", "123")
      const collected = await page.evaluate((secret) => (window as unknown as { tender: any }).tender.collectCard(secret), secret)
      expect(collected.error).toBeNull()
      return { page, orderId, secret, token: collected.card.token as string }
    }

    const pay = (page: Page, secret: string, token: string, options: { returnUrl?: string } = {}) =>
      page.evaluate(({ secret, token, options }) => (window as unknown as { tender: any }).tender.pay(secret, token, options), { secret, token, options }) as Promise<
        { status: string; paymentId?: string; declineCode?: string; error?: unknown }
      >

    const onProvider = (provider: Provider, frame: Frame | Page) =>
      expect(new URL(frame.url()).origin).toBe(provider === "stripe" ? new URL(fakes.stripe.url).origin : new URL(server.baseUrl).origin)

    it.each(CASES)("%s, %s: the customer's answer (%s) completes the payment; pay() resolves with no merchant call", { timeout: 60_000 }, async (provider, mode, answer) => {
      const merchant: Merchant = await merchantIn(server, mode, { name: `3ds ${provider} ${mode}`, stripe: provider === "stripe" })
      const { page, orderId, secret, token } = await payable(merchant)
      const button = ANSWER_BUTTON[provider][answer]
      const expected = EXPECTED[answer]
      switch (mode) {
        case "inline": {
          const paying = pay(page, secret, token)
          const challenge = await inlineChallenge(page)
          await challenge.waitForSelector(button)
          onProvider(provider, challenge)
          expect(await orderStatus(merchant, orderId)).toBe("requires_action")
          await challenge.click(button)
          expect(await paying).toEqual({ ...expected.pay, paymentId: orderId })
          expect(await page.locator("iframe[title='3-D Secure']").count()).toBe(0)
          break
        }
        case "popup": {
          const opened = browser.context.waitForEvent("page")
          const paying = pay(page, secret, token)
          const popup = await opened
          await popup.waitForSelector(button)
          onProvider(provider, popup)
          expect(await orderStatus(merchant, orderId)).toBe("requires_action")
          await popup.click(button)
          expect(await paying).toEqual({ ...expected.pay, paymentId: orderId })
          await expect.poll(() => popup.isClosed()).toBe(true)
          break
        }
        case "redirect": {
          // pay() resolves requires_action as the page leaves; the customer comes back to returnUrl.
          const returnUrl = `${shop.origin}/order/done`
          const left = page.waitForURL((url) => url.origin !== shop.origin)
          expect(await pay(page, secret, token, { returnUrl })).toEqual({ status: "requires_action", paymentId: orderId })
          await left
          await page.waitForSelector(button)
          onProvider(provider, page)
          expect(await orderStatus(merchant, orderId)).toBe("requires_action")
          await Promise.all([page.waitForURL(`${returnUrl}?tender_payment_id=${orderId}`, { timeout: 20_000 }), page.click(button)])
          break
        }
      }
      // The merchant's server only reads: the order already is where the answer took it.
      expect(await orderStatus(merchant, orderId)).toBe(expected.order)
      await page.close()
    })
  }
)
