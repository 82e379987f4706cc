/**
 * The hosted checkout page in a real browser: Debian's headless Chromium, driven by playwright-core,
 * against the in-process server. Sessions are created through the signed API; their success_url and
 * cancel_url point at a loopback "merchant" page served here, so the final redirect is observed
 * where a merchant would see it.
 *
 * Cards go through the browser SDK's card element (tender.js and the fields frame, built by the
 * SDK's build() as the SDK's own browser tests do): every request the browser makes is recorded with
 * the frame that made it, and the card number may appear only in the fields frame's
 * /v1/client/card_tokens, never in the checkout page's own requests or DOM.
 *
 * Screenshots of the page (English and Spanish, desktop and a 390×844 phone; the Pix QR step in
 * Portuguese) are written to test-results/ (git-ignored) for a person to look at.
 *
 * Skipped only when /usr/bin/chromium is absent; .ci/run installs it.
 */
import { mkdirSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import type { BrowserContext, Frame, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { build } from "@tender/browser-sdk/build"
import { CHROMIUM, type Chromium, HAVE_CHROMIUM, inlineChallenge, launchChromium, type SeenRequest } from "../src/testing/Chromium.ts"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, send } from "@tender/client/Testing"

const SCREENSHOTS = resolve(import.meta.dirname, "../../../test-results/checkout")
const PHONE = { width: 390, height: 844 }
const DESKTOP = { width: 1280, height: 900 }
/** The sandbox cards the tests type (contract.md, Sandbox): approved, declined, 3-D Secure, no funds. */
const PANS = ["4242424242424242", "4000000000000002", "4000000000003220", "4000000000009995"]

/** The merchant's site: records every page the browser is sent to. */
interface Shop {
  readonly origin: string
  readonly visits: Array<string>
  readonly close: () => Promise<void>
}

const startShop = () =>
  new Promise<Shop>((done) => {
    const visits: Array<string> = []
    const server: Server = createServer((request, response) => {
      visits.push(request.url ?? "")
      const heading = request.url?.startsWith("/thanks") ? "Thanks for your order" : "Your cart"
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      response.end(`<!doctype html><title>${heading}</title><h1>${heading}</h1>`)
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      done({ origin: `http://127.0.0.1:${port}`, visits, close: () => new Promise((closed) => server.close(() => closed())) })
    })
  })

describe.skipIf(!HAVE_CHROMIUM)(
  HAVE_CHROMIUM ? "hosted checkout in headless Chromium" : `hosted checkout in headless Chromium: SKIPPED, ${CHROMIUM} is absent (.ci/run installs it)`,
  () => {
    let server: TestServer
    let merchant: Credentials
    /** An account whose 3-D Secure display mode is `redirect` (the default is `inline`). */
    let redirecting: Credentials
    /** An account whose 3-D Secure display mode is `popup`. */
    let popping: Credentials
    let shop: Shop
    let context: BrowserContext
    let seq = 0
    /** Console errors of every page, CSP violations included: the page must load without any. */
    const consoleErrors: Array<string> = []
    let browser: Chromium
    /** Every request the browser made (any page, any frame), with the frame that made it. */
    let requests: Array<SeenRequest>

    beforeAll(async () => {
      mkdirSync(SCREENSHOTS, { recursive: true })
      await build()
      server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } })
      merchant = await Effect.runPromise(server.accounts.create({ name: "Acme Coffee", mode: "test" }))
      const created = await Effect.runPromise(server.accounts.create({ name: "Acme Coffee", mode: "test" }))
      await Effect.runPromise(server.accounts.setThreeDsDisplayMode(created.account_id, "redirect"))
      redirecting = created
      const popupAccount = await Effect.runPromise(server.accounts.create({ name: "Acme Coffee", mode: "test" }))
      await Effect.runPromise(server.accounts.setThreeDsDisplayMode(popupAccount.account_id, "popup"))
      popping = popupAccount
      shop = await startShop()
      browser = await launchChromium({ viewport: PHONE })
      context = browser.context
      requests = browser.requests
    }, 120_000)

    afterAll(async () => {
      await browser?.close()
      await shop?.close()
      await server?.close()
    })

    const createSession = async (extra: Record<string, unknown> = {}, creds: Credentials = merchant) => {
      const reply = await send(server, creds, "POST", "/v1/checkout/sessions", {
        body: JSON.stringify({
          amount: "16.50",
          currency: "USD",
          merchant_reference: `browser-${Date.now()}-${++seq}`,
          success_url: `${shop.origin}/thanks`,
          cancel_url: `${shop.origin}/cart`,
          line_items: [{ name: "Flat white", quantity: 2, unit_amount: "4.50" }, { name: "Croissant", quantity: 3, unit_amount: "2.50" }],
          ...extra
        })
      })
      expect(reply.status, reply.text).toBe(201)
      const session = reply.json as { id: string; url: string }
      // The page is opened at the url the API hands out, as a merchant would redirect to it.
      expect(session.url).toBe(`${server.baseUrl}/checkout/${session.id}`)
      return session
    }

    const sessionStatus = async (id: string, creds: Credentials = merchant) =>
      (await send(server, creds, "GET", `/v1/checkout/sessions/${id}`)).json.status

    const openPage = async (options: { viewport?: { width: number; height: number }; acceptLanguage?: string } = {}): Promise<Page> => {
      const page = await context.newPage()
      await page.setViewportSize(options.viewport ?? PHONE)
      await page.setExtraHTTPHeaders({ "accept-language": options.acceptLanguage ?? "en-US,en;q=0.9" })
      page.on("console", (message) => {
        if (message.type() === "error") consoleErrors.push(`${page.url()}: ${message.text()}`)
      })
      return page
    }

    /** The page's text with Intl's non-breaking spaces (in `R$ 87,90`) made plain. */
    const mainText = async (page: Page) => (await page.locator("main").innerText()).replace(/[\u00a0\u202f]/g, " ")

    /** The card element's frame on the page, once it is interactive. */
    const cardFrame = async (page: Page): Promise<Frame> => {
      const handle = await page.waitForSelector("[data-card-element] iframe")
      const frame = await handle.contentFrame()
      if (frame === null) throw new Error("no card fields frame")
      await frame.waitForSelector("body:not(.hold)")
      return frame
    }

    /** Types the card into the element's frame, the field labels in the page's language. */
    const fillCard = async (page: Page, labels: { number: string; expiry: string; cvc: string }, number: string) => {
      const frame = await cardFrame(page)
      await frame.getByLabel(labels.number).fill(number)
      await frame.getByLabel(labels.expiry).fill("12 / 34")
      await frame.getByLabel(labels.cvc).fill("123")
    }

    const isFieldsFrame = (frameUrl: string) => frameUrl.startsWith(`${server.baseUrl}/fields/`)

    /**
     * The checkout page never holds the card number: not in its DOM, not in any request its own
     * frame made; the only request carrying it is the fields frame's card_tokens.
     */
    const expectNoPanOnPage = async (page: Page) => {
      const content = await page.content()
      for (const pan of PANS) expect(content).not.toContain(pan)
      const own = requests.filter((r) => r.page === page && !isFieldsFrame(r.frameUrl))
      expect(own.length).toBeGreaterThan(0)
      for (const r of own) for (const pan of PANS) expect(r.url + r.body, r.url).not.toContain(pan)
      for (const r of requests.filter((r) => r.page === page && PANS.some((pan) => (r.url + r.body).includes(pan)))) {
        expect([new URL(r.url).pathname, isFieldsFrame(r.frameUrl)]).toEqual(["/v1/client/card_tokens", true])
      }
    }

    /** The client secrets the page's tender.js paid with, in order. */
    const paidSecrets = (page: Page) =>
      requests.filter((r) => r.page === page && new URL(r.url).pathname === "/v1/client/pay").map((r) => JSON.parse(r.body).client_secret as string)

    const EN = { number: "Card number", expiry: "Expiry (MM / YY)", cvc: "Security code" }
    const ES = { number: "Número de tarjeta", expiry: "Vencimiento (MM / AA)", cvc: "Código de seguridad" }
    const DE = { number: "Kartennummer", expiry: "Gültig bis (MM / JJ)", cvc: "Prüfnummer" }

    it("pays with the approved sandbox card and lands on success_url (English, phone and desktop)", { timeout: 60_000 }, async () => {
      const session = await createSession({ payment_methods: ["card"], locale: "en" })
      const desktop = await openPage({ viewport: DESKTOP })
      await desktop.goto(session.url)
      await desktop.screenshot({ path: join(SCREENSHOTS, "en-desktop-card.png"), fullPage: true })
      await desktop.close()

      const page = await openPage()
      const response = await page.goto(session.url)
      expect(response?.status()).toBe(200)
      await expect(page.title()).resolves.toBe("Checkout · Acme Coffee")
      expect(await page.locator("html").getAttribute("lang")).toBe("en")
      expect(await page.getByRole("note").innerText()).toBe("Test mode · no real money moves")
      const text = await mainText(page)
      for (const shown of ["Acme Coffee", "$16.50", "Flat white", "2 × $4.50", "Croissant", "Pay with Card", "Test card: 4242 4242 4242 4242"]) {
        expect(text).toContain(shown)
      }
      // Mobile-friendly: nothing wider than the phone.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width)
      await page.screenshot({ path: join(SCREENSHOTS, "en-phone-card.png"), fullPage: true })

      // The page has no card input of its own: the card is typed into the element's frame.
      expect(await page.locator("main input[autocomplete^='cc-']").count()).toBe(0)
      await fillCard(page, EN, "4242 4242 4242 4242")
      expect(await (await cardFrame(page)).inputValue("#number")).toBe("4242 4242 4242 4242")
      await page.screenshot({ path: join(SCREENSHOTS, "en-phone-card-filled.png"), fullPage: true })
      await expectNoPanOnPage(page)
      await Promise.all([page.waitForURL(`${shop.origin}/thanks`), page.getByRole("button", { name: "Pay $16.50" }).click()])
      expect(await page.locator("h1").innerText()).toBe("Thanks for your order")
      expect(shop.visits).toContain("/thanks")
      expect(await sessionStatus(session.id)).toBe("completed")
      expect(paidSecrets(page)).toHaveLength(1)
      // The card went out once, from the fields frame, to card_tokens only.
      const carrying = requests.filter((r) => (r.url + r.body).includes("4242424242424242"))
      expect(carrying.map((r) => [new URL(r.url).pathname, isFieldsFrame(r.frameUrl)])).toEqual([["/v1/client/card_tokens", true]])

      // Back on the session's url: the final state, with the way to success_url.
      await page.goto(session.url)
      expect(await page.locator("h1").innerText()).toBe("Payment complete")
      expect(await page.getByRole("link", { name: "Return to Acme Coffee" }).getAttribute("href")).toBe(`${shop.origin}/thanks`)
      await page.close()
    })

    it("shows a decline in the customer's language, then takes the retry (Spanish, method chooser)", { timeout: 60_000 }, async () => {
      const session = await createSession({ payment_methods: ["card", "paypal"], locale: "es" })
      const page = await openPage()
      await page.goto(session.url)
      expect(await page.locator("html").getAttribute("lang")).toBe("es")
      expect(await page.locator("h1").innerText()).toBe("Elige cómo pagar")
      await page.screenshot({ path: join(SCREENSHOTS, "es-phone-chooser.png"), fullPage: true })

      await page.getByText("Tarjeta de crédito o débito").click()
      await fillCard(page, ES, "4000 0000 0000 0002")
      await Promise.all([page.waitForURL(`${session.url}?method=card`), page.getByRole("button", { name: /^Pagar/ }).click()])
      const alert = page.locator(".alert")
      expect(await alert.innerText()).toContain("Tu tarjeta fue rechazada.")
      expect(await alert.innerText()).toContain("Te quedan 2 intentos.")
      // The card form is open again, for the retry, with a new element; the declined number is nowhere.
      expect(await (await cardFrame(page)).inputValue("#number")).toBe("")
      await expectNoPanOnPage(page)
      await page.screenshot({ path: join(SCREENSHOTS, "es-phone-declined.png"), fullPage: true })
      expect(await sessionStatus(session.id)).toBe("open")

      await fillCard(page, ES, "4242424242424242")
      await Promise.all([page.waitForURL(`${shop.origin}/thanks`), page.getByRole("button", { name: /^Pagar/ }).click()])
      expect(await sessionStatus(session.id)).toBe("completed")
      // The retry is another attempt, paid with a fresh secret.
      const secrets = paidSecrets(page)
      expect(secrets).toHaveLength(2)
      expect(new Set(secrets).size).toBe(2)
      const reply = await send(server, merchant, "GET", `/v1/checkout/sessions/${session.id}`)
      expect(reply.json.attempts).toBe(2)

      const desktop = await openPage({ viewport: DESKTOP })
      await desktop.goto(session.url)
      expect(await desktop.locator("h1").innerText()).toBe("Pago completado")
      await desktop.screenshot({ path: join(SCREENSHOTS, "es-desktop-completed.png"), fullPage: true })
      await desktop.close()
      await page.close()
    })

    it("ends in the failed state once attempts run out, with the way back to cancel_url", { timeout: 60_000 }, async () => {
      const session = await createSession({ payment_methods: ["card"], max_payment_attempts: 1, locale: "de" })
      const page = await openPage()
      await page.goto(session.url)
      await fillCard(page, DE, "4000000000009995")
      // The page is at the session's url already: wait for the outcome it shows once the card
      // element's pay is done and the page read the session again (waitForURL would return at once).
      await page.getByRole("button", { name: /bezahlen$/ }).click()
      await page.locator("h1", { hasText: "Zahlung fehlgeschlagen" }).waitFor()
      expect(await page.getByRole("alert").innerText()).toContain("Ihre Karte ist nicht ausreichend gedeckt.")
      await expectNoPanOnPage(page)
      expect(await page.locator("form").count()).toBe(0)
      expect(await sessionStatus(session.id)).toBe("failed")
      await Promise.all([page.waitForURL(`${shop.origin}/cart`), page.getByRole("link", { name: "Zurück zu Acme Coffee" }).click()])
      await page.close()
    })

    it("cancels on the customer's word and sends them to cancel_url", { timeout: 60_000 }, async () => {
      const session = await createSession({ locale: "nl" })
      const page = await openPage()
      await page.goto(session.url)
      await Promise.all([page.waitForURL(`${shop.origin}/cart`), page.getByRole("button", { name: "Betaling annuleren" }).click()])
      expect(await sessionStatus(session.id)).toBe("canceled")
      await page.goto(session.url)
      expect(await page.locator("h1").innerText()).toBe("Betaling geannuleerd")
      await page.close()
    })

    it("Pix in Portuguese from Accept-Language: the QR code as an image, then paid on the sandbox page", { timeout: 60_000 }, async () => {
      const session = await createSession({ amount: "87.90", currency: "BRL", country: "BR", payment_methods: ["pix", "card"], line_items: undefined })
      const page = await openPage({ acceptLanguage: "pt-BR,pt;q=0.9,en;q=0.5" })
      await page.goto(session.url)
      expect(await page.locator("html").getAttribute("lang")).toBe("pt-BR")
      await page.getByText("Escaneie um QR code com seu app").click()
      await page.getByLabel("CPF").fill("529.982.247-25")
      await page.getByRole("button", { name: "Gerar QR code" }).click()
      await page.locator("h1", { hasText: "Escaneie para pagar" }).waitFor()
      const qr = page.getByRole("img", { name: "QR code do pagamento" })
      // Drawn and decoded: an image with real pixels, not a broken icon.
      expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true)
      expect(await mainText(page)).toContain("R$ 87,90")
      expect(await sessionStatus(session.id)).toBe("pending_action")
      await page.screenshot({ path: join(SCREENSHOTS, "pt-phone-pix-qr.png"), fullPage: true })

      // The customer pays on the provider's page (the sandbox's), which sends them back to the
      // session's page: paid, and from there on to the merchant by itself.
      await page.getByRole("link", { name: "Abrir a página de pagamento" }).click()
      await Promise.all([page.waitForURL(session.url), page.getByRole("button", { name: "Succeed" }).click()])
      expect(await sessionStatus(session.id)).toBe("completed")
      expect(await page.locator("h1").innerText()).toBe("Pagamento concluído")
      expect(await page.getByRole("link", { name: "Voltar para Acme Coffee" }).getAttribute("href")).toBe(`${shop.origin}/thanks`)
      await page.waitForURL(`${shop.origin}/thanks`, { timeout: 15_000 })
      await page.close()
    })

    /**
     * From now on the challenge page's answer (its form POST) reaches Tender, but the browser does not
     * follow its 303 to the checkout page (the order's return URL): it shows a blank page instead.
     * contract.md, Browser SDK: "the customer's answer to a 3-D Secure challenge completes the payment
     * […] Reading a page (GET) never authorizes." Returns where each answer would have sent the browser.
     */
    const answerWithoutReturn = async (target: Page) => {
      const sentTo: Array<string | undefined> = []
      await target.route(`${server.baseUrl}/sandbox/3ds/*`, async (route) => {
        if (route.request().method() !== "POST") return route.continue()
        const answered = await route.fetch({ maxRedirects: 0 })
        sentTo.push(answered.headers()["location"])
        return route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><title>Answered</title>" })
      })
      return sentTo
    }

    it("3-D Secure, inline (the account's default): the challenge over the page, completed by the answer (no read of the page needed), then on to success_url", { timeout: 60_000 }, async () => {
      const session = await createSession({ payment_methods: ["card"], locale: "en" })
      const page = await openPage()
      await page.goto(session.url)
      await fillCard(page, EN, "4000 0000 0000 3220")
      await page.getByRole("button", { name: "Pay $16.50" }).click()
      const challenge = await inlineChallenge(page)
      expect(await sessionStatus(session.id)).toBe("pending_action")
      await expectNoPanOnPage(page)
      const sentTo = await answerWithoutReturn(page)
      await Promise.all([page.waitForURL(`${shop.origin}/thanks`), challenge!.click("button[value=approve]")])
      // The answer would have sent the frame to the checkout page; it never read it: the answer did it.
      expect(sentTo).toEqual([session.url])
      expect(await sessionStatus(session.id)).toBe("completed")
      await page.close()
    })

    it("3-D Secure, popup mode: the challenge in a window, completed by the answer, then on to success_url", { timeout: 60_000 }, async () => {
      const session = await createSession({ payment_methods: ["card"], locale: "en" }, popping)
      const page = await openPage()
      await page.goto(session.url)
      await fillCard(page, EN, "4000 0000 0000 3220")
      const [popup] = await Promise.all([context.waitForEvent("page"), page.getByRole("button", { name: "Pay $16.50" }).click()])
      await popup.waitForSelector("button[value=approve]")
      expect(new URL(popup.url()).pathname).toMatch(/^\/sandbox\/3ds\//)
      expect(await sessionStatus(session.id, popping)).toBe("pending_action")
      const sentTo = await answerWithoutReturn(popup)
      await Promise.all([page.waitForURL(`${shop.origin}/thanks`), popup.click("button[value=approve]")])
      expect(sentTo).toEqual([session.url])
      expect(await sessionStatus(session.id, popping)).toBe("completed")
      await expect.poll(() => popup.isClosed()).toBe(true)
      await page.close()
    })

    it("3-D Secure, redirect mode: the issuer's page, completed by the answer, back to the checkout with the outcome, then on to success_url", { timeout: 60_000 }, async () => {
      const session = await createSession({ payment_methods: ["card"], locale: "en" }, redirecting)
      const page = await openPage()
      await page.goto(session.url)
      await fillCard(page, EN, "4000 0000 0000 3220")
      await expectNoPanOnPage(page)
      await Promise.all([page.waitForURL(/\/sandbox\/3ds\//), page.getByRole("button", { name: "Pay $16.50" }).click()])
      expect(await sessionStatus(session.id, redirecting)).toBe("pending_action")
      expect(JSON.parse(requests.find((r) => r.page === page && new URL(r.url).pathname === "/v1/client/pay")!.body).return_url).toBe(session.url)
      // The answer completes the session before the browser reads the checkout page again.
      const sentTo = await answerWithoutReturn(page)
      await Promise.all([page.waitForURL((url) => url.pathname.startsWith("/sandbox/3ds/")), page.getByRole("button", { name: "Approve" }).click()])
      await expect.poll(() => sentTo.length).toBe(1)
      expect(await sessionStatus(session.id, redirecting)).toBe("completed")
      // Back on the page the SDK's pay named, with the payment's id appended (contract.md, Browser SDK).
      expect(sentTo[0]).toMatch(new RegExp(`^${session.url}\\?tender_payment_id=ord_`))
      await page.goto(sentTo[0]!)
      expect(await page.locator("h1").innerText()).toBe("Payment complete")
      expect(await sessionStatus(session.id, redirecting)).toBe("completed")
      await page.waitForURL(`${shop.origin}/thanks`, { timeout: 15_000 })
      await page.close()
    })

    it("loaded every page without a console error or a blocked resource", () => {
      expect(consoleErrors).toEqual([])
    })
  }
)
