/**
 * The browser SDK's three 3-D Secure display modes when the challenge is a provider's page on its
 * own origin (a Stripe channel on the wire-level fake, not the sandbox's page on Tender's host): the
 * hosted checkout in headless Chromium pays the challenge card, the customer completes
 * authentication on the fake's page (framed inside the fields host's challenge frame, in a popup, or
 * with the whole window), the fake sends them to Tender's return route, and the page goes on to
 * success_url with the session completed.
 *
 * Skipped only when /usr/bin/chromium is absent; .ci/run installs it.
 */
import type { Frame, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { build } from "@tender/browser-sdk/build"
import { send } from "@tender/client/Testing"
import { CHROMIUM, type Chromium, HAVE_CHROMIUM, inlineChallenge, launchChromium } from "../src/testing/Chromium.ts"
import { merchantIn, type ProviderFakes, startWithProviderFakes } from "../src/testing/ProviderFakes.ts"
import type { TestServer } from "../src/testing/TestServer.ts"

describe.skipIf(!HAVE_CHROMIUM)(
  HAVE_CHROMIUM ? "3-D Secure on a provider's page, in headless Chromium" : `3-D Secure on a provider's page: SKIPPED, ${CHROMIUM} is absent`,
  () => {
    let server: TestServer
    let fakes: ProviderFakes
    let stripe: ProviderFakes["stripe"]
    let browser: Chromium
    let seq = 0

    beforeAll(async () => {
      await build()
      fakes = await startWithProviderFakes({ storage: "memory", dataDir: ".tender-test" })
      ;({ server, stripe } = fakes)
      browser = await launchChromium({ viewport: { width: 1280, height: 900 } })
    }, 120_000)

    afterAll(async () => {
      await browser?.close()
      await fakes?.close()
    })

    /** The card element's frame, once interactive, with the challenge card typed in. */
    const typeChallengeCard = async (page: Page) => {
      const frame = await (await page.waitForSelector("[data-card-element] iframe")).contentFrame()
      await frame!.waitForSelector("body:not(.hold)")
      await frame!.getByLabel("Card number").fill("4000 0000 0000 3220")
      await frame!.getByLabel("Expiry (MM / YY)").fill("12 / 34")
      await frame!.getByLabel("Security code").fill("123")
    }

    const onFake = (frame: Frame | Page) => expect(new URL(frame.url()).origin).toBe(new URL(stripe.url).origin)

    it.each(["inline", "popup", "redirect"] as const)("%s: the fake's challenge approved, back through the return route, on to success_url", { timeout: 60_000 }, async (mode) => {
      const merchant = await merchantIn(server, mode, { name: `Stripe shop ${mode}`, stripe: true })
      const success = `${server.baseUrl}/shop/thanks`
      const created = await send(server, merchant, "POST", "/v1/checkout/sessions", {
        body: JSON.stringify({ amount: "16.50", currency: "USD", merchant_reference: `browser-3ds-${Date.now()}-${++seq}`, payment_methods: ["card"], locale: "en", success_url: success, cancel_url: `${server.baseUrl}/shop/cart` })
      })
      expect(created.status, created.text).toBe(201)
      const sessionStatus = async () => (await send(server, merchant, "GET", `/v1/checkout/sessions/${created.json.id}`)).json.status

      const page = await browser.context.newPage()
      await page.goto(created.json.url)
      await typeChallengeCard(page)
      const pay = page.getByRole("button", { name: "Pay $16.50" })
      let approve: () => Promise<unknown>
      switch (mode) {
        case "inline": {
          await pay.click()
          const challenge = await inlineChallenge(page)
          await challenge.waitForSelector("text=Complete authentication")
          onFake(challenge)
          approve = () => challenge.click("text=Complete authentication")
          break
        }
        case "popup": {
          const [popup] = await Promise.all([browser.context.waitForEvent("page"), pay.click()])
          await popup.waitForSelector("text=Complete authentication")
          onFake(popup)
          approve = () => popup.click("text=Complete authentication")
          break
        }
        case "redirect": {
          await Promise.all([page.waitForURL((url) => url.origin === new URL(stripe.url).origin), pay.click()])
          approve = () => page.click("text=Complete authentication")
          break
        }
      }
      expect(await sessionStatus()).toBe("pending_action")
      await Promise.all([page.waitForURL(success, { timeout: 20_000 }), approve()])
      expect(await sessionStatus()).toBe("completed")
      await page.close()
    })
  }
)
