/**
 * tender.js and the card fields in a real browser: Debian's headless Chromium through
 * playwright-core (as packages/http/test/CheckoutBrowser.test.ts). The merchant page is served from
 * its own origin ("shop"); the SDK, the fields and `/v1/client/…` come from StubClientApi, which
 * stands in for the server routes being built on another branch and serves the real built scripts.
 *
 * Skipped only when /usr/bin/chromium is absent; .ci/run installs it.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium, type Frame, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { build } from "../src/build.ts"
import { type Stub, startStub, type StubPayment } from "./StubClientApi.ts"

const CHROMIUM = "/usr/bin/chromium"
const HAVE_CHROMIUM = existsSync(CHROMIUM)

interface Shop {
  readonly origin: string
  readonly close: () => Promise<void>
}

/** The merchant's site: `/` loads tender.js; `/strict` has a CSP whose frame-src omits the fields host. */
const startShop = (sdkOrigin: string) =>
  new Promise<Shop>((done) => {
    const server: Server = createServer((request, response) => {
      const headers: Record<string, string> = { "content-type": "text/html; charset=utf-8" }
      if (request.url?.startsWith("/strict")) {
        headers["content-security-policy"] = `default-src 'self'; script-src ${sdkOrigin}; connect-src ${sdkOrigin}; frame-src 'self'`
      }
      response.writeHead(200, headers)
      response.end(`<!doctype html><title>Shop</title><h1>Checkout</h1><div id="card"></div><script src="${sdkOrigin}/sdk/v1/tender.js"></script>`)
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      done({ origin: `http://127.0.0.1:${port}`, close: () => new Promise((closed) => server.close(() => closed())) })
    })
  })

const KEY = "pk_test_shop123"

/** Events the page saw, recorded by the merchant-side script the tests install. */
interface Seen {
  readonly name: string
  readonly payload: unknown
}

describe.skipIf(!HAVE_CHROMIUM)(
  HAVE_CHROMIUM ? "tender.js in headless Chromium" : `tender.js in headless Chromium: SKIPPED, ${CHROMIUM} is absent (.ci/run installs it)`,
  () => {
    let stub: Stub
    let shop: Shop
    let context: BrowserContext
    let profile: string

    beforeAll(async () => {
      await build()
      stub = await startStub()
      // Another port is another origin: the fields frame is cross-origin to the shop, as in production.
      shop = await startShop(stub.origin)
      profile = mkdtempSync(join(tmpdir(), "tender-sdk-chromium-"))
      context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"]
      })
    })

    afterAll(async () => {
      await context?.close()
      await shop?.close()
      await stub?.close()
      if (profile !== undefined) rmSync(profile, { recursive: true, force: true })
    })

    /** Opens the shop, creates and mounts a card element with `options`, recording its events. */
    const openCard = async (options: Record<string, unknown> = {}, path = "/") => {
      const page = await context.newPage()
      await page.goto(`${shop.origin}${path}`)
      await page.evaluate(({ key, options }) => {
        const w = window as unknown as Record<string, any>
        w.seen = []
        w.tender = w.Tender(key)
        w.card = w.tender.elements({ locale: "en" }).create("card", options)
        for (const name of ["ready", "change", "focus", "blur", "submitting", "loaderror"]) {
          w.card.on(name, (payload: unknown) => w.seen.push({ name, payload }))
        }
        w.card.mount("#card")
      }, { key: KEY, options })
      return page
    }

    const fields = async (page: Page): Promise<Frame> => {
      const handle = await page.waitForSelector("#card iframe")
      const frame = await handle.contentFrame()
      if (frame === null) throw new Error("no fields frame")
      await frame.waitForSelector("body:not(.hold)")
      return frame
    }

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

    const pay = (page: Page, payment: StubPayment, token: string) =>
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
      await page.close()
    })

    it("refuses an invalid card with validation_error before anything leaves the browser", async () => {
      const payment = stub.payment()
      const page = await openCard({ clientSecret: payment.secret })
      const frame = await fields(page)
      const before = stub.requests.filter((r) => r.path === "/v1/client/card_tokens").length
      await fillCard(frame, "4242424242424241")
      await expect.poll(async () => (await lastChange(page)).error).toMatchObject({ type: "validation_error", code: "invalid_number" })
      expect(await collect(page, payment.secret)).toMatchObject({ card: null, error: { type: "validation_error", code: "invalid_number" } })
      await fillCard(frame, "4242424242424242", "01 / 20")
      expect((await collect(page, payment.secret)).error).toMatchObject({ code: "invalid_expiry" })
      // An amex needs four digits.
      await fillCard(frame, "378282246310005", "12 / 34", "123")
      expect((await collect(page, payment.secret)).error).toMatchObject({ code: "invalid_cvc" })
      expect(stub.requests.filter((r) => r.path === "/v1/client/card_tokens").length).toBe(before)
      await page.close()
    })

    it("collectCard tokenizes from inside the frame; pay resolves 4242 succeeded and 0002 failed", async () => {
      for (const [number, expected] of [
        ["4242424242424242", { status: "succeeded" }],
        ["4000000000000002", { status: "failed", declineCode: "card_declined" }]
      ] as const) {
        const payment = stub.payment()
        const page = await openCard({ clientSecret: payment.secret })
        const frame = await fields(page)
        await fillCard(frame, number)
        const result = await collect(page, payment.secret)
        expect(result.error).toBeNull()
        expect(result.card).toMatchObject({ brand: "visa", last4: number.slice(-4), expMonth: 12, expYear: 2034 })
        expect(result.card!.token).toMatch(/^tok_/)
        expect((await seen(page)).some((e) => e.name === "submitting")).toBe(true)
        // The number went out once, from the fields origin, to card_tokens only.
        const carrying = stub.requests.filter((r) => JSON.stringify(r.body).includes(number))
        expect(carrying.map((r) => [r.path, r.origin])).toEqual([["/v1/client/card_tokens", stub.origin]])
        const paid = await pay(page, payment, result.card!.token)
        expect(paid).toEqual({ ...expected, paymentId: payment.paymentId })
        await page.close()
      }
    })

    it("pay runs an inline 3-D Secure challenge and resolves with the outcome", async () => {
      const payment = stub.payment({ displayMode: "inline" })
      const page = await openCard({ clientSecret: payment.secret })
      const frame = await fields(page)
      await fillCard(frame, "4000000000003220")
      const { card } = await collect(page, payment.secret)
      const paying = pay(page, payment, card!.token)
      const challenge = await (await page.waitForSelector("iframe[title='3-D Secure']")).contentFrame()
      await challenge!.click("#complete")
      expect(await paying).toEqual({ status: "succeeded", paymentId: payment.paymentId })
      expect(await page.locator("iframe[title='3-D Secure']").count()).toBe(0)
      await page.close()
    })

    it("pay runs a popup challenge in a window, and a redirect challenge by leaving the page", async () => {
      const popupPayment = stub.payment({ displayMode: "popup" })
      let page = await openCard({ clientSecret: popupPayment.secret })
      await fillCard(await fields(page), "4000000000003220")
      let token = (await collect(page, popupPayment.secret)).card!.token
      const opened = context.waitForEvent("page")
      const paying = pay(page, popupPayment, token)
      const popup = await opened
      await popup.waitForLoadState()
      expect(popup.url()).toBe(`${stub.origin}/challenge/${popupPayment.paymentId}`)
      await popup.click("#complete")
      expect(await paying).toEqual({ status: "succeeded", paymentId: popupPayment.paymentId })
      await expect.poll(() => popup.isClosed()).toBe(true)
      await page.close()

      const redirectPayment = stub.payment({ displayMode: "redirect" })
      page = await openCard({ clientSecret: redirectPayment.secret })
      await fillCard(await fields(page), "4000000000003220")
      token = (await collect(page, redirectPayment.secret)).card!.token
      const challenge = `${stub.origin}/challenge/${redirectPayment.paymentId}`
      const navigated = page.waitForURL(challenge)
      expect(await pay(page, redirectPayment, token)).toEqual({ status: "requires_action", paymentId: redirectPayment.paymentId })
      await navigated
      const paid = stub.requests.find((r) => r.path === "/v1/client/pay" && r.body.client_secret === redirectPayment.secret)
      expect(paid?.body.return_url).toBe(`${shop.origin}/`)
      await page.close()
    })

    it("relays an expired secret as authentication_error CLIENT_SECRET_EXPIRED", async () => {
      const payment = stub.payment()
      const page = await openCard()
      const frame = await fields(page)
      await fillCard(frame, "4242424242424242")
      payment.expired = true
      expect((await collect(page, payment.secret)).error).toMatchObject({ type: "authentication_error", code: "CLIENT_SECRET_EXPIRED" })
      await page.close()
    })

    it("card on file: a collect_cvv secret renders CVC-only with brand and last four", async () => {
      const payment = stub.payment({ collect: "cvv", savedCard: { brand: "amex", last4: "0005", token: "tok_saved_amex" } })
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
        token: "tok_saved_amex", brand: "amex", last4: "0005", bin: "42424242", expMonth: null, expYear: null
      })
      await page.close()
    })

    it("holds first paint at most 300 ms for a slow card-on-file secret, then switches to CVC-only", async () => {
      const payment = stub.payment({ collect: "cvv", savedCard: { brand: "visa", last4: "4242", token: "tok_saved" }, sessionDelayMs: 3000 })
      const page = await openCard({ clientSecret: payment.secret })
      const waited = await page.evaluate(async () => {
        const started = performance.now()
        await (window as unknown as { card: { ready: Promise<void> } }).card.ready
        return performance.now() - started
      })
      expect(waited).toBeLessThan(2500)
      const frame = await fields(page)
      expect(await frame.isVisible("#number")).toBe(true)
      await frame.waitForSelector("#number", { state: "hidden" })
      expect(await frame.textContent("#saved")).toContain("4242")
      await page.close()
    })

    it("emits loaderror IFRAME_BLOCKED when the page's CSP frame-src omits the fields host", async () => {
      const page = await openCard({}, "/strict")
      const started = Date.now()
      await page.waitForFunction(() => (window as unknown as { seen: Array<Seen> }).seen.some((e) => e.name === "loaderror"), undefined, { timeout: 10_000 })
      expect(Date.now() - started).toBeLessThan(6_000)
      const loaderror = (await seen(page)).find((e) => e.name === "loaderror")!.payload as { error: { type: string; code: string } }
      expect(loaderror.error).toMatchObject({ type: "integration_error", code: "IFRAME_BLOCKED" })
      const ready = await page.evaluate(() =>
        (window as unknown as { card: { ready: Promise<void> } }).card.ready.then(() => "ready", (e: { code: string }) => e.code)
      )
      expect(ready).toBe("IFRAME_BLOCKED")
      await page.close()
    })

    it("applies accepted appearance values, ignores rejected ones, and update replaces the whole appearance", async () => {
      const page = await openCard({
        appearance: { variables: { colorText: "rgb(10, 20, 30)", colorBackground: "url(https://evil.example/x.png)", borderRadius: "calc(1px + 2px)", fontSize: "20px" } }
      })
      const frame = await fields(page)
      const style = () =>
        frame.evaluate(() => {
          const s = getComputedStyle(document.getElementById("number")!)
          return { color: s.color, background: s.backgroundColor, radius: s.borderTopLeftRadius, size: s.fontSize }
        })
      expect(await style()).toEqual({ color: "rgb(10, 20, 30)", background: "rgb(255, 255, 255)", radius: "6px", size: "20px" })
      await page.evaluate(async () => {
        const card = (window as unknown as { card: any }).card
        card.update({ appearance: { variables: { borderRadius: "0" } } })
      })
      await frame.waitForFunction(() => getComputedStyle(document.getElementById("number")!).borderTopLeftRadius === "0px")
      // colorText and fontSize were not named again: back to stock.
      expect(await style()).toEqual({ color: "rgb(26, 26, 26)", background: "rgb(255, 255, 255)", radius: "0px", size: "16px" })
      await page.evaluate(() => (window as unknown as { card: any }).card.update({ locale: "es" }))
      await frame.waitForFunction(() => document.getElementById("number-label")!.textContent === "Número de tarjeta")
      await page.close()
    })
  }
)
