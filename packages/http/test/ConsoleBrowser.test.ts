/**
 * The operator console (issue 26) in a real browser: Debian's headless Chromium driven by
 * playwright-core against a real `tender serve --console` process, set up by the real CLI as an
 * operator would (`tender accounts create`, `tender operators add`, `tender audit list`), with
 * payments made through the public API (signed, as a merchant's server) and the browser SDK's
 * routes (the card typed into the fields, so the order has a client secret the page must never show),
 * and a local webhook receiver so that events have deliveries to tell.
 *
 * The flows run in order and share their state: alice (operator, granted account A) enrols through
 * her link with a TOTP code computed here, logs in, finds a payment by last four and by reference,
 * reads its story, captures part of it, refunds part, redelivers an event and reads the audit log
 * (in the console and from the CLI); the refusals (no CSRF token, a foreign Origin, account B's
 * payment, her cookie replayed after logout); then vera (viewer) sees no action and is refused one.
 * Every page passes axe-core's WCAG 2.1 A/AA rules, carries the strict CSP (and the browser refused
 * nothing under it) and asks no other host for anything. Screenshots go to test/screenshots/
 * (git-ignored); with TENDER_UPDATE_README_IMAGE=1 the story page's is copied to docs/images/console.png,
 * the README's picture.
 *
 * Skipped only when /usr/bin/chromium is absent; .ci/run installs it.
 */
import { copyFileSync, mkdirSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join, resolve } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fileDatabaseUrl, TEST_VAULT_KEY } from "@tender/adapters/test/PgTestDatabase"
import { makeHome, runTender, type Served, untilAnswered } from "@tender/cli/test/support/Tender"
import { send } from "@tender/client/Testing"
import { CHROMIUM, type Chromium, HAVE_CHROMIUM, launchChromium } from "../src/testing/Chromium.ts"
import { sdkCall } from "./support/Browser.ts"
import { base32Decode, expectAxeClean, expectConsoleHeaders, hotp, totp, watchCspRefusals } from "./support/Console.ts"

const SCREENSHOTS = resolve(import.meta.dirname, "screenshots")
const README_IMAGE = resolve(import.meta.dirname, "../../../docs/images/console.png")

const PAN = "4242424242424242"
const CVC = "314"
const PASSWORD = "correct horse battery staple"
/** The receiver's answers, which the story page must show as the receiver's answer. */
const BUSY = "busy, try again later"
const THANKS = "thanks from the shop"
const DOWN = "down for maintenance"

interface Account {
  readonly account_id: string
  readonly secret_key: string
  readonly publishable_key: string
  readonly signing_secret: string
}

interface Received {
  readonly eventId: string
  readonly type: string
  readonly orderId: string | undefined
}

// The authenticator the flows log in with: RFC 6238 Appendix B's SHA-1 vectors (the last six digits),
// its key given in base32 as the enrolment page shows a secret.
it("the tests' authenticator gives RFC 6238's codes", () => {
  const key = base32Decode("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
  expect(key.toString()).toBe("12345678901234567890")
  expect([59, 1111111109, 1234567890, 2000000000].map((t) => hotp(key, Math.floor(t / 30)))).toEqual(["287082", "081804", "005924", "279037"])
})

describe.skipIf(!HAVE_CHROMIUM)(
  HAVE_CHROMIUM ? "the operator console in headless Chromium" : `the operator console: SKIPPED, ${CHROMIUM} is absent (.ci/run installs it)`,
  () => {
    const home = makeHome("tender-console-")
    let env: Record<string, string>
    let served: Served
    let browser: Chromium
    let page: Page
    let receiver: Server
    let receiverUrl = ""
    /** The receiver's endpoint that answers (the other, /down, never does). */
    let hooksEndpoint = ""
    const received: Array<Received> = []
    const cspRefusals: Array<string> = []

    let shopA: Account
    let shopB: Account
    /** Account A: the payment alice works on (10.00 USD, manual capture), and one left authorized. */
    let p1: { orderId: string; clientSecret: string; reference: string }
    let p2: { orderId: string; clientSecret: string; reference: string }
    /** Account B's payment, which alice (granted A only) must never see. */
    let pB: { orderId: string; reference: string }
    let authorizedEvent: string
    let refundId: string
    const links: Record<"alice" | "vera", string> = { alice: "", vera: "" }
    const stamp = Date.now().toString(36)
    const p1Reference = `console-p1-${stamp}`

    const url = (path: string) => served.url + path
    /** The CLI against the server's database, as an operator on the server's machine runs it. */
    const cli = (...args: ReadonlyArray<string>) => runTender([...args, "--data-dir", home.dataDir], { env })
    const cliJson = async (...args: ReadonlyArray<string>) => {
      const result = await cli(...args, "--json")
      expect(result, result.stderr).toMatchObject({ code: 0 })
      return JSON.parse(result.stdout)
    }
    const api = (shop: Account, method: string, path: string, body?: unknown) =>
      send({ baseUrl: served.url }, shop, method, path, body === undefined ? {} : { body: JSON.stringify(body) })
    const order = async (shop: Account, orderId: string) => {
      const reply = await api(shop, "GET", `/v1/orders/${orderId}`)
      expect(reply.status, reply.text).toBe(200)
      return reply.json
    }

    /**
     * A manual-capture card payment as a customer present pays it: the merchant charges the saved
     * card's token, the browser gives its CVC to the SDK's card_tokens and pays (so the order has a
     * client secret, which no console page may show).
     */
    const browserPayment = async (shop: Account, reference: string, amount: string) => {
      const saved = await api(shop, "POST", "/v1/test_helpers/card_tokens", { number: PAN, exp_month: 12, exp_year: 2035, cvc: CVC, holder_name: "Ada Lovelace" })
      expect(saved.status, saved.text).toBe(201)
      const created = await api(shop, "POST", "/v1/payments", {
        amount,
        currency: "USD",
        country: "US",
        merchant_reference: reference,
        capture_method: "manual",
        payment_method: { code: "card", details: { card_token: saved.json.token } }
      })
      expect(created.json?.next_action?.type, created.text).toBe("collect_cvv")
      const clientSecret = created.json.next_action.client_secret as string
      const server = { baseUrl: served.url }
      const cvc = await sdkCall(server, shop.publishable_key, "/v1/client/card_tokens", { client_secret: clientSecret, cvc: CVC })
      expect(cvc.status, cvc.text).toBe(201)
      const paid = await sdkCall(server, shop.publishable_key, "/v1/client/pay", { client_secret: clientSecret, token: saved.json.token })
      expect(paid.status, paid.text).toBe(200)
      const orderId = created.json.order_id as string
      expect((await order(shop, orderId)).status).toBe("authorized")
      return { orderId, clientSecret, reference }
    }

    /** A GET of a console page: 200 (unless told) with the console's headers. */
    const visit = async (path: string, status = 200) => {
      const response = await page.goto(url(path))
      expect(response?.status(), `${path}: ${await page.content().then((c) => c.slice(0, 800))}`).toBe(status)
      expectConsoleHeaders(response, path)
      return response!
    }
    const h1 = () => page.locator("h1").innerText()
    const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `console-${name}.png`), fullPage: true })
    /** The form fields the console's pages carry, by their exact label. */
    const field = (label: string) => page.getByLabel(label, { exact: true })
    const button = (name: string) => page.getByRole("button", { name, exact: true })
    /** The text of the role="status" notice or role="alert" message on the page. */
    const notice = () => page.getByRole("status").innerText()
    const alert = () => page.getByRole("alert").innerText()

    /** Submits a form with `submit` and expects to land on `path`; anything else fails with what the page said. */
    const submitTo = async (submit: ReturnType<Page["getByRole"]>, path: string) => {
      await Promise.all([page.waitForNavigation(), submit.click()])
      const landed = new URL(page.url())
      if (landed.pathname + landed.search !== path) {
        expect.fail(`expected ${path}, on ${landed.pathname}${landed.search}: ${(await page.locator("body").innerText()).slice(0, 600)}`)
      }
    }
    /** The enrolment page of `who`'s link: the TOTP secret it shows. */
    const openEnrolment = async (who: "alice" | "vera") => {
      await visit(links[who])
      const secret = (await page.locator("#totp-secret").innerText()).trim()
      expect(secret).toMatch(/^[A-Z2-7 =-]{16,}$/i)
      return secret
    }
    const finishEnrolment = async (secret: string) => {
      await field("Password").fill(PASSWORD)
      await field("Repeat the password").fill(PASSWORD)
      // The previous step's code (inside the server's ±1 window) leaves the current step for the
      // login: a code is accepted once, and no test waits 30 s for the next one.
      await field("Authenticator code").fill(await totp(secret, -1))
      await submitTo(button("Finish enrolment"), "/console/login?enrolled=1")
    }
    const logIn = async (name: string, secret: string) => {
      await visit("/console/login")
      await field("Name").fill(name)
      await field("Password").fill(PASSWORD)
      await field("Authenticator code").fill(await totp(secret))
      await submitTo(button("Log in"), "/console/search")
    }
    /** The session's CSRF token, from the logout form every signed-in page carries. */
    const csrfOfPage = () => page.locator("input[name=csrf]").first().inputValue()
    /** A console POST as a browser's form sends it (the context's cookies), without following a redirect. */
    const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
      page.request.post(url(path), { form, headers, maxRedirects: 0 })

    const search = async (filters: Record<string, string>) => {
      await visit("/console/search")
      await field("Kind").selectOption("orders")
      for (const [label, value] of Object.entries(filters)) await field(label).fill(value)
      await button("Search").click()
      await page.waitForURL((u) => u.pathname === "/console/search" && u.search.length > 1)
    }
    /** The ids the results table links to (the first column's links). */
    const resultIds = async () => {
      if ((await page.locator("table").count()) === 0) return []
      return page.locator("table tbody tr").evaluateAll((rows) => rows.map((row) => row.querySelector("a")?.textContent?.trim() ?? ""))
    }

    beforeAll(async () => {
      mkdirSync(SCREENSHOTS, { recursive: true })
      receiver = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (c) => chunks.push(c))
        request.on("end", () => {
          const envelope = JSON.parse(Buffer.concat(chunks).toString("utf8"))
          // An endpoint that is down: its deliveries wait for their next retry.
          if (request.url === "/down") return void response.writeHead(500, { "content-type": "text/plain" }).end(DOWN)
          const eventId = request.headers["x-event-id"] as string
          const first = !received.some((r) => r.eventId === eventId)
          received.push({ eventId, type: envelope.type, orderId: envelope.data?.order_id })
          // P1's authorization is refused once, so its story shows a failed attempt and the retry that worked.
          if (first && envelope.type === "payment.authorized" && envelope.data?.merchant_reference === p1Reference) {
            response.writeHead(503, { "content-type": "text/plain" }).end(BUSY)
          } else {
            response.writeHead(200, { "content-type": "text/plain" }).end(THANKS)
          }
        })
      })
      await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done))
      receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`

      env = { DATABASE_URL: await fileDatabaseUrl(), TENDER_VAULT_KEY: TEST_VAULT_KEY }
      ;[served, browser] = await Promise.all([home.serve(env, undefined, ["--console"]), launchChromium({ viewport: { width: 1280, height: 900 } })])
      page = await browser.context.newPage()
      // A missing element fails in seconds, not in playwright's default 30.
      page.setDefaultTimeout(8_000)
      watchCspRefusals(page, cspRefusals)

      ;[shopA, shopB] = await Promise.all([
        cliJson("accounts", "create", "--name", "Shop A"),
        cliJson("accounts", "create", "--name", "Shop B")
      ])
      for (const path of ["/hooks", "/down"]) {
        const endpoint = await api(shopA, "POST", "/v1/webhook_endpoints", { url: receiverUrl + path })
        expect(endpoint.status, endpoint.text).toBe(201)
        if (path === "/hooks") hooksEndpoint = endpoint.json.id
      }

      // The operators, in parallel with the payments: each prints its one-time enrolment link.
      const invite = async (name: "alice" | "vera", role: string) => {
        const added = await cli("operators", "add", name, "--role", role, "--accounts", shopA.account_id)
        expect(added, added.stderr).toMatchObject({ code: 0 })
        const link = /\/console\/enrol\/([A-Za-z0-9_-]{20,})/.exec(added.stdout)
        expect(link, added.stdout).not.toBeNull()
        links[name] = link![0]
      }
      /** B's payment: the same card, charged merchant-initiated. */
      const paymentOfB = async () => {
        const token = (await api(shopB, "POST", "/v1/test_helpers/card_tokens", { number: PAN, exp_month: 12, exp_year: 2035, cvc: CVC })).json.token
        const reference = `console-b-${stamp}`
        const reply = await api(shopB, "POST", "/v1/payments", {
          amount: "12.00",
          currency: "USD",
          country: "US",
          merchant_reference: reference,
          payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
        })
        expect(reply.status, reply.text).toBe(200)
        return { orderId: reply.json.order_id as string, reference }
      }
      ;[p1, p2, pB] = await Promise.all([
        browserPayment(shopA, p1Reference, "10.00"),
        browserPayment(shopA, `console-p2-${stamp}`, "7.00"),
        paymentOfB(),
        invite("alice", "operator"),
        invite("vera", "viewer")
      ])
    }, 180_000)

    afterAll(async () => {
      await browser?.close()
      await served?.stop()
      await home.cleanup()
      await new Promise<void>((done) => (receiver ? receiver.close(() => done()) : done()))
    }, 120_000)

    let alice: { secret: string }
    let aliceCookie: string

    it("alice enrols through her one-time link (password twice, an authenticator code); the link is then spent", async () => {
      const secret = await openEnrolment("alice")
      await expectAxeClean(page, "enrol")
      await shot("enrol")
      await finishEnrolment(secret)
      alice = { secret }
      await visit(links.alice, 404)
      expect(await h1()).toBe("Not found")
      await expectAxeClean(page, "404")
    })

    it("alice logs in: a wrong code is refused with one message; the right one opens the console with a strict session cookie", async () => {
      // Without a session, the console is its login page.
      await page.goto(url("/console"))
      expect(new URL(page.url()).pathname).toBe("/console/login")
      await visit("/console/login?enrolled=1")
      await expectAxeClean(page, "login")
      await shot("login")
      await field("Name").fill("alice")
      await field("Password").fill(PASSWORD)
      const right = await totp(alice.secret)
      await field("Authenticator code").fill(String((Number(right) + 1) % 1_000_000).padStart(6, "0"))
      await button("Log in").click()
      expect(await alert()).toContain("Name, password or code is wrong.")
      expect(page.url()).not.toContain("/console/search")

      await logIn("alice", alice.secret)
      const cookie = (await browser.context.cookies(url("/console/search"))).find((c) => c.name === "tender_console")
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/console", secure: false })
      aliceCookie = cookie!.value
      await expect.poll(() => page.getByText("Signed in as alice (operator)").count()).toBeGreaterThan(0)
      // With a session, the console is its search page.
      await page.goto(url("/console"))
      expect(new URL(page.url()).pathname).toBe("/console/search")
      const nav = page.getByRole("navigation", { name: "Console" })
      for (const link of ["Search", "Accounts", "Audit log", "Watch"]) await expect.poll(() => nav.getByRole("link", { name: link, exact: true }).count()).toBe(1)
    })

    it("the search page is keyboard-navigable: the skip link first, then the form's fields in order", async () => {
      await visit("/console/search")
      const focused = () =>
        page.evaluate(() => {
          const el = document.activeElement as HTMLInputElement | null
          return { text: el?.textContent?.trim() ?? "", href: el?.getAttribute("href") ?? null, label: el?.labels?.[0]?.textContent?.trim() ?? null }
        })
      await page.keyboard.press("Tab")
      expect(await focused()).toMatchObject({ text: "Skip to content", href: "#main" })
      const order = ["Kind", "Id", "Reference", "Amount", "Currency", "Status", "Method", "Channel", "From", "To", "Last four"]
      for (let i = 0; i < 40 && (await focused()).label !== "Kind"; i++) await page.keyboard.press("Tab")
      // One Tab stop per field, in the order a person reads them.
      const seen: Array<string | null> = [(await focused()).label]
      for (let i = 1; i < order.length; i++) {
        await page.keyboard.press("Tab")
        seen.push((await focused()).label)
      }
      expect(seen).toEqual(order)
    })

    it("finds the payment by last four and by reference; account B's payment is never among the results", async () => {
      await search({ "Last four": "4242" })
      const byLast4 = await resultIds()
      expect(byLast4).toEqual(expect.arrayContaining([p1.orderId, p2.orderId]))
      expect(byLast4).not.toContain(pB.orderId)
      expect(await page.locator("table caption").count()).toBe(1)
      await expectAxeClean(page, "search results")
      await shot("search")

      await search({ Reference: p1.reference })
      expect(await resultIds()).toEqual([p1.orderId])
      await expect.poll(() => page.getByRole("link", { name: p1.orderId, exact: true }).getAttribute("href")).toBe(`/console/orders/${p1.orderId}`)

      // Account B's payment, by its reference and by its id: no row.
      for (const filters of [{ Reference: pB.reference }, { Id: pB.orderId }] as ReadonlyArray<Record<string, string>>) {
        await search(filters)
        expect(await resultIds()).toEqual([])
        expect(await page.locator("main").innerText()).toContain("No results.")
      }
      // An invalid filter names its field.
      await page.goto(url("/console/search?kind=orders&last4=42x"))
      expect(await alert()).toMatch(/last four|last4/i)
    })

    it("the story: timeline, card, events with every delivery attempt (the receiver's answers); no card number, CVC or secret on the page", async () => {
      // P1's authorization event was refused once by the receiver, then delivered on its retry.
      const authorized = () => received.filter((r) => r.type === "payment.authorized" && r.orderId === p1.orderId)
      await untilAnswered(async () => authorized().length, (n) => n >= 2, 30_000)
      authorizedEvent = authorized()[0]!.eventId
      await untilAnswered(
        async () => (await api(shopA, "GET", `/v1/webhook_deliveries?event_id=${authorizedEvent}&endpoint_id=${hooksEndpoint}`)).json?.data?.[0]?.status,
        (status) => status === "succeeded",
        30_000
      )

      await visit(`/console/orders/${p1.orderId}`)
      expect(await h1()).toBe(`Payment ${p1.orderId}`)
      const sections = await page.locator("h2").allInnerTexts()
      expect(sections.map((s) => s.trim())).toEqual(
        expect.arrayContaining(["Summary", "Card", "Timeline", "Refunds and payouts", "Events and webhook deliveries", "Actions"])
      )
      const text = await page.locator("main").innerText()
      expect(text).toContain(p1.reference)
      // The timeline is an ordered list of the transactions.
      const timeline = (await page.locator("main ol").allInnerTexts()).find((list) => /authori[sz]/i.test(list))
      expect(timeline, "an <ol> listing the authorization").toBeDefined()
      expect(timeline).toMatch(/sandbox/i)
      expect(text).toMatch(/visa/i)
      expect(text).toContain("4242")
      // Each attempt of the delivery: the refusal (503) and the success; the endpoint that is down, its next retry.
      expect(text).toContain("payment.authorized")
      expect(text).toContain("503")
      expect(text).toContain(`${receiverUrl}/down`)
      expect(text).toMatch(/next retry/i)

      const html = await page.content()
      for (const secret of [PAN, "4242 4242 4242 4242", p1.clientSecret, shopA.signing_secret, shopA.secret_key]) {
        expect(html.includes(secret), `the page holds ${secret.slice(0, 8)}…`).toBe(false)
      }
      expect(html).not.toMatch(new RegExp(`(cvc|cvv|security code)\\W{0,40}${CVC}`, "i"))
      // Nor any client secret, secret key or signing secret at all (their shapes).
      expect(html).not.toMatch(/_secret_[0-9a-f]+|sk_(test|live)_\w+|whsec_\w+/)

      await expectAxeClean(page, "story")
      await shot("story")
      // Only on request: the ids differ every run, so a copy each run would leave every tree dirty.
      if (process.env.TENDER_UPDATE_README_IMAGE === "1") {
        mkdirSync(resolve(README_IMAGE, ".."), { recursive: true })
        copyFileSync(join(SCREENSHOTS, "console-story.png"), README_IMAGE)
      }

      // Deep links by id: the order, and an event of it, lead to the story.
      await page.goto(url(`/console/find/${p1.orderId}`))
      expect(new URL(page.url()).pathname).toBe(`/console/orders/${p1.orderId}`)
      await page.goto(url(`/console/find/${authorizedEvent}`))
      expect(new URL(page.url()).pathname).toBe(`/console/orders/${p1.orderId}`)
    })

    it("the story shows the receiver's answer to each attempt", async () => {
      await visit(`/console/orders/${p1.orderId}`)
      const text = await page.locator("main").innerText()
      for (const answer of [BUSY, THANKS, DOWN]) expect(text).toContain(answer)
    })

    it("captures part (5.00 of 10.00) through a confirmation page that shows the amounts", async () => {
      await visit(`/console/orders/${p1.orderId}`)
      const form = page.locator(`form[action="/console/orders/${p1.orderId}/capture"]`)
      await form.locator("input[name=amount]").fill("5.00")
      await form.locator("input[name=final]").check()
      await form.getByRole("button").click()
      await page.waitForURL(url(`/console/orders/${p1.orderId}/capture`))
      expect(await h1()).toBe("Confirm capture")
      const confirmation = await page.locator("main").innerText()
      expect(confirmation).toContain("Amount: 5.00 USD")
      expect(confirmation).toContain("10.00 USD")
      await expectAxeClean(page, "confirm capture")
      await shot("confirm")
      // Nothing happened yet.
      expect((await order(shopA, p1.orderId)).status).toBe("authorized")

      await button("Confirm").click()
      await page.waitForURL((u) => u.pathname === `/console/orders/${p1.orderId}`)
      expect(await notice()).toContain("Captured 5.00 USD.")
      const captured = await order(shopA, p1.orderId)
      expect(captured.captured_amount).toBe(5)
      expect(captured.status).not.toBe("authorized")
    })

    it("refunds part (2.00) through its confirmation", async () => {
      const form = page.locator(`form[action="/console/orders/${p1.orderId}/refund"]`)
      await form.locator("input[name=amount]").fill("2.00")
      await form.getByRole("button").click()
      expect(await h1()).toBe("Confirm refund")
      expect(await page.locator("main").innerText()).toContain("Amount: 2.00 USD")
      await expectAxeClean(page, "confirm refund")
      await button("Confirm").click()
      await page.waitForURL((u) => u.pathname === `/console/orders/${p1.orderId}`)
      const said = await notice()
      expect(said).toMatch(/Refund re_\w+ created\./)
      refundId = /re_\w+/.exec(said)![0]
      expect((await order(shopA, p1.orderId)).refunded_amount).toBe(2)
      expect((await api(shopA, "GET", `/v1/refunds/${refundId}`)).json).toMatchObject({ amount: 2, status: "succeeded", order_id: p1.orderId })
      // The refund is in the story, and its id is a deep link to it.
      expect(await page.locator("main").innerText()).toContain(refundId)
      await page.goto(url(`/console/find/${refundId}`))
      expect(new URL(page.url()).pathname).toBe(`/console/orders/${p1.orderId}`)
    })

    it("redelivers an event: the receiver gets it again", async () => {
      const before = received.filter((r) => r.eventId === authorizedEvent).length
      await visit(`/console/orders/${p1.orderId}`)
      const form = page.locator(`form[action="/console/events/${authorizedEvent}/redeliver"]`)
      await form.getByRole("button", { name: "Redeliver" }).click()
      expect(await h1()).toBe("Confirm redelivery")
      await expectAxeClean(page, "confirm redelivery")
      await button("Confirm").click()
      await page.waitForURL((u) => u.pathname === `/console/orders/${p1.orderId}`)
      expect(await notice()).toContain("Event redelivered.")
      await untilAnswered(async () => received.filter((r) => r.eventId === authorizedEvent).length, (n) => n > before, 15_000)
    })

    it("the audit log shows the three actions by alice, in the console and from `tender audit list`", async () => {
      await visit("/console/audit")
      const headers = (await page.locator("table th").allInnerTexts()).map((h) => h.trim())
      expect(headers).toEqual(expect.arrayContaining(["Time", "Operator", "Action", "Target", "Account", "Outcome", "Detail"]))
      const rows = await page.locator("table tbody tr").allInnerTexts()
      const row = (action: RegExp, target: string) => rows.find((r) => action.test(r) && r.includes(target) && r.includes("alice"))
      for (const [action, target] of [[/capture/i, p1.orderId], [/refund/i, p1.orderId], [/redeliver/i, authorizedEvent]] as const) {
        expect(row(action, target), `${action} of ${target} in\n${rows.join("\n")}`).toMatch(/succeeded/i)
      }
      await expectAxeClean(page, "audit")
      await shot("audit")

      const printed = await cliJson("audit", "list")
      const entries: Array<{ operator_name: string; action: string; target: string; outcome: string; account_id: string | null }> =
        Array.isArray(printed) ? printed : printed.data
      const alices = entries.filter((e) => e.operator_name === "alice")
      expect(alices.map((e) => [e.action, e.target, e.outcome, e.account_id]).sort()).toEqual(
        [
          ["capture", p1.orderId, "succeeded", shopA.account_id],
          ["redeliver_event", authorizedEvent, "succeeded", shopA.account_id],
          ["refund", p1.orderId, "succeeded", shopA.account_id]
        ].sort()
      )
    })

    it("accounts, an account, and the watch page: only the granted account, no admin buttons for an operator, accessible charts", async () => {
      await visit("/console/accounts")
      const accounts = await page.locator("main").innerText()
      expect(accounts).toContain(shopA.account_id)
      expect(accounts).not.toContain(shopB.account_id)
      expect(await button("Suspend").count()).toBe(0)
      await expectAxeClean(page, "accounts")

      await visit(`/console/accounts/${shopA.account_id}`)
      expect(await page.locator("main").innerText()).toContain("/hooks")
      expect(await button("Disable").count()).toBe(0)
      await expectAxeClean(page, "account")
      await visit(`/console/accounts/${shopB.account_id}`, 404)

      await visit("/console/watch")
      const figures = page.locator("figure")
      expect(await figures.count()).toBeGreaterThanOrEqual(4)
      for (const figure of await figures.all()) {
        expect((await figure.locator("figcaption").innerText()).trim()).not.toBe("")
        const svg = figure.locator("svg[role=img]")
        expect(await svg.count()).toBe(1)
        const labelledBy = await svg.getAttribute("aria-labelledby")
        expect(labelledBy).toBeTruthy()
        for (const id of labelledBy!.split(/\s+/)) expect(await page.locator(`[id="${id}"]`).count()).toBe(1)
        expect(await svg.locator("title").count()).toBe(1)
        expect(await figure.locator("details summary").innerText()).toBe("Data")
        expect(await figure.locator("details table").count()).toBe(1)
      }
      await expectAxeClean(page, "watch")
      await shot("watch")
    })

    it("refusals: a POST without the CSRF token, or from another origin, changes nothing; account B's payment is not found", async () => {
      await visit(`/console/orders/${p2.orderId}`)
      expect(await page.locator(`form[action="/console/orders/${p2.orderId}/capture"]`).count()).toBe(1)
      const csrf = await csrfOfPage()
      const capture = { amount: "1.00", final: "true", confirm: "yes" }
      const noToken = await post(`/console/orders/${p2.orderId}/capture`, capture)
      expect(noToken.status()).toBe(403)
      expect(await noToken.text()).toContain("This form has expired or did not come from the console")
      const wrongToken = await post(`/console/orders/${p2.orderId}/capture`, { ...capture, csrf: `${csrf}x` })
      expect(wrongToken.status()).toBe(403)
      const foreign = await post(`/console/orders/${p2.orderId}/capture`, { ...capture, csrf }, { origin: "https://evil.example" })
      expect(foreign.status()).toBe(403)
      expect(await order(shopA, p2.orderId)).toMatchObject({ status: "authorized" })
      expect((await order(shopA, p2.orderId)).captured_amount ?? 0).toBe(0)

      await visit(`/console/orders/${pB.orderId}`, 404)
      expect(await h1()).toBe("Not found")
      await visit(`/console/find/${pB.orderId}`, 404)
      // An action on B's payment: not found either, and B's order is as it was.
      const onB = await post(`/console/orders/${pB.orderId}/refund`, { csrf, amount: "1.00", confirm: "yes" })
      expect(onB.status()).toBe(404)
      expect((await order(shopB, pB.orderId)).refunded_amount ?? 0).toBe(0)
    })

    it("after logout, alice's cookie replayed is refused: back to the login page, no data (nor with the merchant's API key)", async () => {
      await visit("/console/search")
      await button("Log out").click()
      await page.waitForURL(url("/console/login"))
      // The cookie as it was before logout, put back by hand (a copy an attacker kept).
      await browser.context.addCookies([{ name: "tender_console", value: aliceCookie, url: url("/console") }])
      await page.goto(url(`/console/orders/${p1.orderId}`))
      expect(new URL(page.url()).pathname).toBe("/console/login")
      expect(await page.content()).not.toContain(p1.reference)
      const direct = await page.request.get(url(`/console/orders/${p1.orderId}`), { maxRedirects: 0 })
      expect(direct.status()).toBe(303)
      expect(direct.headers()["location"]).toMatch(/\/console\/login(\?next=[^&]*)?$/)
      expect(await direct.text()).not.toContain(p1.reference)
      await browser.context.clearCookies()
      // Nor does a merchant's API key open the console: it is not a console credential.
      const withKey = await page.request.get(url(`/console/orders/${p1.orderId}`), { maxRedirects: 0, headers: { authorization: `Bearer ${shopA.secret_key}` } })
      expect(withKey.status()).toBe(303)
      expect(withKey.headers()["location"]).toMatch(/\/console\/login(\?next=[^&]*)?$/)
    })

    it("vera (viewer) reads the story with no Actions section; her capture POST (with her own cookie and token) is refused and changes nothing", async () => {
      const secret = await openEnrolment("vera")
      await finishEnrolment(secret)
      await logIn("vera", secret)
      await visit(`/console/orders/${p2.orderId}`)
      expect(await h1()).toBe(`Payment ${p2.orderId}`)
      expect((await page.locator("h2").allInnerTexts()).map((s) => s.trim())).not.toContain("Actions")
      for (const name of ["Capture", "Void", "Refund", "Redeliver"]) expect(await button(name).count(), name).toBe(0)
      expect(await page.locator("form[action*='/capture'], form[action*='/void'], form[action*='/refund'], form[action*='/redeliver']").count()).toBe(0)
      await expectAxeClean(page, "story (viewer)")

      const csrf = await csrfOfPage()
      // Asking for the confirmation page, and confirming: both refused.
      for (const form of [{ csrf, amount: "1.00", final: "true" }, { csrf, amount: "1.00", final: "true", confirm: "yes" }] as ReadonlyArray<Record<string, string>>) {
        const refused = await post(`/console/orders/${p2.orderId}/capture`, form)
        expect(refused.status()).toBe(403)
      }
      expect(await order(shopA, p2.orderId)).toMatchObject({ status: "authorized" })
      const entries = await cliJson("audit", "list")
      const list: Array<{ operator_name: string; outcome: string }> = Array.isArray(entries) ? entries : entries.data
      expect(list.filter((e) => e.operator_name === "vera" && e.outcome === "succeeded")).toEqual([])
    })

    it("no page asked another host for anything, and the browser refused nothing under the CSP", () => {
      const origin = new URL(served.url).origin
      const elsewhere = browser.requests.map((r) => r.url).filter((u) => !u.startsWith("data:") && new URL(u).origin !== origin)
      expect(elsewhere).toEqual([])
      expect(cspRefusals).toEqual([])
    })
  }
)
