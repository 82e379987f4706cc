/**
 * The operator console over real HTTP (issue 26), in-process on memory storage: off unless enabled;
 * enrolment and login with codes this test computes itself (RFC 6238); the cookie's flags; the
 * strict CSP on every answer; CSRF (a missing token, a foreign Origin); a viewer refused an action;
 * an operator's two-step capture and refund, with their audit entries; logout ending the session
 * for good; another account's payment neither found nor shown; and no 500 for garbage input.
 * The same flows in Chromium: the browser-test helper's files.
 */
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { send } from "@tender/client/Testing"
import { Operators } from "@tender/domain/operators/Operators"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { CSP } from "../src/console/Layout.ts"
import { niceCeiling } from "../src/console/Charts.ts"
import { addPoint, EMPTY_WINDOW, type MinutePoint, POINTS } from "../src/console/Sampler.ts"
import { quantile } from "../src/console/WatchPage.ts"
import { Agent, csrfOf, type Enrolled, freshCode, garbageRounds, helpersFor, type Merchant, PASSWORD } from "./ConsoleTesting.ts"

let server: TestServer
let off: TestServer
let accountA: Merchant
let accountB: Merchant
const { authorize, enrolled, login, orderOf } = helpersFor(() => server)

let orderA: string
let orderB: string
let operator: Enrolled
let viewer: Enrolled
/** Signed in once each: a TOTP code is good once, and a window holds three steps. */
let asOperator: Agent
let asViewer: Agent

beforeAll(async () => {
  const limits = { rateLimit: { perSecond: 10_000, burst: 10_000 }, ipLimits: { perIp: { perSecond: 10_000, burst: 10_000 }, trustedProxies: 1 } }
  // One trusted proxy: its X-Forwarded-Proto says whether the browser came over https (Secure cookies).
  ;[server, off] = await Promise.all([startTestServer({ ...limits, console: true }), startTestServer(limits)])
  accountA = await Effect.runPromise(server.accounts.create({ name: "console-a", mode: "test" }))
  accountB = await Effect.runPromise(server.accounts.create({ name: "console-b", mode: "test" }))
  orderA = await authorize(accountA, "console-a-1")
  orderB = await authorize(accountB, "console-b-1")
  operator = await enrolled("operator", [accountA.account_id])
  viewer = await enrolled("viewer", [accountA.account_id])
  ;[asOperator, asViewer] = await Promise.all([login(operator), login(viewer)])
}, 60_000)

afterAll(async () => {
  await Promise.all([server?.close(), off?.close()])
})

describe("the console is off unless enabled", () => {
  it("every /console path is the gateway's 404 when off", async () => {
    for (const path of ["/console", "/console/login", "/console/search", "/console/assets/console.css"]) {
      const response = await fetch(off.baseUrl + path, { redirect: "manual" })
      expect(response.status, path).toBe(404)
      expect(response.headers.get("content-type")).toContain("application/json")
    }
  })

  it("on, it never takes a merchant key: /console with a secret key is still the login redirect", async () => {
    const response = await fetch(server.baseUrl + "/console/search", {
      headers: { authorization: `Bearer ${accountA.secret_key}` },
      redirect: "manual"
    })
    expect(response.status).toBe(303)
    expect(response.headers.get("location")).toBe("/console/login")
  })
})

describe("enrolment and login", () => {
  it("the enrolment page shows the secret and QR; the form sets the password once a code confirms it", async () => {
    const invitation = await server.run(Effect.flatMap(Operators, (o) => o.add({ name: `enrol${Date.now().toString(36)}`, role: "admin", accounts: "all" })))
    const agent = new Agent(server.baseUrl)
    const page = await agent.get(`/console/enrol/${invitation.enrolment_token}`)
    expect(page.status).toBe(200)
    const secret = /id="totp-secret"[^>]*>([A-Z2-7]+)</.exec(page.text)?.[1]
    expect(secret).toBeDefined()
    expect(page.text).toContain("data:image/svg+xml;base64,")
    const path = `/console/enrol/${invitation.enrolment_token}`
    const mismatch = await agent.post(path, { csrf: csrfOf(page.text), password: PASSWORD, password_confirm: `${PASSWORD}!`, code: "000000" })
    expect(mismatch.status).toBe(200)
    expect(mismatch.text).toContain("role=\"alert\"")
    // No double-submit cookie (another site's form): refused, nothing spent.
    const forged = await fetch(server.baseUrl + path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf: csrfOf(page.text), password: PASSWORD, password_confirm: PASSWORD, code: freshCode(secret!) }).toString(),
      redirect: "manual"
    })
    expect(forged.status).toBe(403)
    const done = await agent.post(path, { csrf: csrfOf(page.text), password: PASSWORD, password_confirm: PASSWORD, code: freshCode(secret!) })
    expect(done.status, done.text).toBe(303)
    expect(done.headers.get("location")).toBe("/console/login?enrolled=1")
    // The link is spent.
    expect((await agent.get(path)).status).toBe(404)
    await login({ name: invitation.operator.name, secret: secret!, password: PASSWORD })
  })

  it("two submissions of one link at once: one enrols, the other is told the link was used, never a repository's wording", async () => {
    const invitation = await server.run(Effect.flatMap(Operators, (o) => o.add({ name: `race${Date.now().toString(36)}`, role: "viewer", accounts: "all" })))
    const path = `/console/enrol/${invitation.enrolment_token}`
    const agent = new Agent(server.baseUrl)
    const page = await agent.get(path)
    const secret = /id="totp-secret"[^>]*>([A-Z2-7]+)</.exec(page.text)![1]!
    const [a, b] = await Promise.all([freshCode(secret), freshCode(secret)].map((code) =>
      agent.post(path, { csrf: csrfOf(page.text), password: PASSWORD, password_confirm: PASSWORD, code })
    ))
    const answers = [a!, b!]
    expect(answers.filter((answer) => answer.status === 303)).toHaveLength(1)
    // The loser: the link spent (404) or, mid-race, the operator changed under it.
    expect(answers.every((answer) => [200, 303, 404].includes(answer.status))).toBe(true)
    for (const answer of answers) {
      expect(answer.text).not.toMatch(/expected version|was changed by another request/)
      if (answer.status === 200) expect(answer.text).toContain(`role="alert">This link was just used; log in.`)
    }
  })

  it("a wrong code is refused with one message; the session cookie is HttpOnly, SameSite=Strict, Path=/console", async () => {
    const agent = new Agent(server.baseUrl)
    const page = await agent.get("/console/login")
    const wrong = await agent.post("/console/login", { csrf: csrfOf(page.text), name: viewer.name, password: viewer.password, code: "000000" })
    expect(wrong.status).toBe(200)
    expect(wrong.text).toContain("Name, password or code is wrong.")
    const cookie = asViewer.setCookies.find((line) => line.startsWith("tender_console="))!
    expect(cookie).toMatch(/HttpOnly/i)
    expect(cookie).toMatch(/SameSite=Strict/i)
    expect(cookie).toMatch(/Path=\/console/i)
    // Plain http here: a Secure cookie would never come back.
    expect(cookie).not.toMatch(/Secure/i)
  })
})

describe("login's edges", () => {
  it("behind a trusted proxy that says https, the cookies are Secure", async () => {
    const who = await enrolled("viewer", [accountA.account_id])
    const agent = new Agent(server.baseUrl)
    const page = await agent.get("/console/login")
    const answer = await agent.post(
      "/console/login",
      { csrf: csrfOf(page.text), name: who.name, password: who.password, code: freshCode(who.secret) },
      { "x-forwarded-proto": "https" }
    )
    expect(answer.status).toBe(303)
    expect(answer.headers.getSetCookie().find((line) => line.startsWith("tender_console="))).toMatch(/; Secure/i)
  })

  it("five failures lock the operator out, the right code included, and the page says until when", async () => {
    const who = await enrolled("viewer", [accountA.account_id])
    const agent = new Agent(server.baseUrl)
    const csrf = csrfOf((await agent.get("/console/login")).text)
    for (let i = 0; i < 5; i++) {
      const wrong = await agent.post("/console/login", { csrf, name: who.name, password: "wrong password here", code: "000000" })
      // The fifth failure is the one that locks: its own answer may already say so.
      expect(wrong.text).toMatch(i < 4 ? /Name, password or code is wrong\./ : /Name, password or code is wrong\.|Too many failed attempts/)
    }
    const locked = await agent.post("/console/login", { csrf, name: who.name, password: who.password, code: freshCode(who.secret) })
    expect(locked.status).toBe(200)
    expect(locked.text).toMatch(/role="alert">Too many failed attempts: try again after \d\d:\d\d UTC\./)
    expect(agent.cookies.has("tender_console")).toBe(false)
  })
})

describe("pages", () => {
  it("every page carries the strict CSP and its headers, and links its stylesheet", async () => {
    const agent = asOperator
    for (const path of ["/console/search", `/console/orders/${orderA}`, "/console/accounts", `/console/accounts/${accountA.account_id}`, "/console/audit", "/console/watch", "/console/nothing-here"]) {
      const page = await agent.get(path)
      expect(page.status, path).toBe(path === "/console/nothing-here" ? 404 : 200)
      expect(page.headers.get("content-security-policy"), path).toBe(CSP)
      expect(page.headers.get("x-content-type-options")).toBe("nosniff")
      expect(page.headers.get("referrer-policy")).toBe("no-referrer")
      expect(page.headers.get("cache-control")).toBe("no-store")
      expect(page.text).toContain("<html lang=\"en\">")
      expect(page.text.match(/<h1>/g)?.length, path).toBe(1)
      expect(page.text, path).not.toMatch(/ style=|<script|<style/)
    }
    const css = await agent.get("/console/assets/console.css")
    expect(css.status).toBe(200)
    expect(css.headers.get("content-type")).toContain("text/css")
    const again = await fetch(`${server.baseUrl}/console/assets/console.css`, { headers: { "if-none-match": css.headers.get("etag")! } })
    expect(again.status).toBe(304)
  })

  it("search finds the granted account's payment by last four and by reference, never another account's", async () => {
    const agent = asViewer
    const byLast4 = await agent.get("/console/search?kind=orders&last4=4242")
    expect(byLast4.text).toContain(orderA)
    expect(byLast4.text).not.toContain(orderB)
    const byReference = await agent.get("/console/search?kind=orders&reference=console-a-1")
    expect(byReference.text).toContain(`href="/console/orders/${orderA}"`)
    const theirs = await agent.get("/console/search?kind=orders&reference=console-b-1")
    expect(theirs.text).toContain("No results.")
    expect((await agent.get(`/console/orders/${orderB}`)).status).toBe(404)
    expect((await agent.get(`/console/find/${orderB}`)).status).toBe(404)
    const found = await agent.get(`/console/find/${orderA}`)
    expect(found.status).toBe(303)
    expect(found.headers.get("location")).toBe(`/console/orders/${orderA}`)
    const invalid = await agent.get("/console/search?kind=orders&last4=42x")
    expect(invalid.text).toMatch(/role="alert">Last four/)
  })

  it("a notice cookie the server did not write for this session is not shown", async () => {
    const payload = Buffer.from(JSON.stringify({ kind: "alert", text: "Call +1 555 0100 now" })).toString("base64url")
    const session = asViewer.cookies.get("tender_console")!
    const page = await fetch(`${server.baseUrl}/console/search`, { headers: { cookie: `tender_console=${session}; tender_console_flash=${payload}.forged` } })
    expect(page.status).toBe(200)
    expect(await page.text()).not.toContain("Call +1 555 0100 now")
  })

  it("the story page tells the payment and shows no card number; a viewer gets no actions", async () => {
    const agent = asViewer
    const page = await agent.get(`/console/orders/${orderA}`)
    expect(page.text).toContain(`<h1>Payment ${orderA}</h1>`)
    for (const section of ["Summary", "Card", "Timeline", "Refunds and payouts", "Events and webhook deliveries"]) expect(page.text).toContain(`<h2>${section}</h2>`)
    expect(page.text).not.toContain("<h2>Actions</h2>")
    expect(page.text).not.toContain("4242424242424242")
    expect(page.text).toContain("4242")
    // No 3-D Secure on this payment: no steps to tell.
    expect(page.text).not.toContain("3-D Secure steps")
  })

  it("a challenged card payment's story lists its 3-D Secure steps: the challenge asked, then its result", async () => {
    const token = await send(server, accountA, "POST", "/v1/test_helpers/card_tokens", {
      body: JSON.stringify({ number: "4000000000003220", exp_month: 12, exp_year: 2035, cvc: "123" })
    })
    const created = await send(server, accountA, "POST", "/v1/payments", {
      body: JSON.stringify({
        amount: "12.00", currency: "USD", country: "US", merchant_reference: "console-a-3ds", collect_cvv: false,
        payment_method: { code: "card", details: { card_token: token.json.token } }
      })
    })
    expect(created.json.status, created.text).toBe("requires_action")
    const order = created.json.order_id as string
    const approved = await send(server, accountA, "POST", `/v1/test_helpers/orders/${order}/simulate`, { body: JSON.stringify({ outcome: "succeed" }) })
    expect(approved.status, approved.text).toBe(200)
    const completed = await send(server, accountA, "POST", `/v1/payments/${order}/3ds/complete`, { body: "{}" })
    expect(completed.json.status, completed.text).toBe("completed")
    const page = await asViewer.get(`/console/orders/${order}`)
    expect(page.text).toContain("<h3>3-D Secure steps</h3>")
    const steps = page.text.slice(page.text.indexOf("<h3>3-D Secure steps</h3>")).split("</ol>")[0]
    const told = [...steps.matchAll(/<li>.*? · (.*?)<\/li>/g)].map((m) => m[1])
    expect(told).toEqual([
      "3-D Secure challenge asked of the customer (payment.requires_action)",
      "3-D Secure approved: payment paid (payment.succeeded)"
    ])
  })
})

describe("acting", () => {
  it("a POST without the CSRF token, or from another origin, is 403 and changes nothing", async () => {
    const agent = asOperator
    const page = await agent.get(`/console/orders/${orderA}`)
    const csrf = csrfOf(page.text)
    const fields = { amount: "1.00", final: "true", confirm: "yes" }
    const noToken = await agent.post(`/console/orders/${orderA}/capture`, fields)
    expect(noToken.status).toBe(403)
    expect(noToken.text).toContain("This form has expired or did not come from the console")
    const foreign = await agent.post(`/console/orders/${orderA}/capture`, { ...fields, csrf }, { origin: "https://evil.example" })
    expect(foreign.status).toBe(403)
    // Origin: null (how a browser words ours under no-referrer, and a sandboxed frame's) with Fetch Metadata saying another site.
    const crossSite = await agent.post(`/console/orders/${orderA}/capture`, { ...fields, csrf }, { origin: "null", "sec-fetch-site": "cross-site" })
    expect(crossSite.status).toBe(403)
    expect((await orderOf(accountA, orderA)).captured_amount ?? 0).toBe(0)
  })

  it("a viewer's capture is 403 even with a valid form, and the order is unchanged", async () => {
    const agent = asViewer
    const csrf = csrfOf((await agent.get(`/console/orders/${orderA}`)).text)
    const refused = await agent.post(`/console/orders/${orderA}/capture`, { csrf, amount: "10.00", final: "true", confirm: "yes" })
    expect(refused.status).toBe(403)
    expect((await orderOf(accountA, orderA)).captured_amount ?? 0).toBe(0)
    // The attempt is in the audit log, failed, where the account's operators read it.
    const audit = (await asOperator.get("/console/audit")).text
    expect(audit).toContain(`<td>${viewer.name}</td><td>capture</td><td><code>${orderA}</code></td><td>${accountA.account_id}</td><td>failed</td><td>refused: the viewer role may not capture</td>`)
  })

  it("an operator's capture and refund: a confirmation, then the action, its notice and its audit entries", async () => {
    const agent = asOperator
    const story = await agent.get(`/console/orders/${orderA}`)
    expect(story.text).toContain("<h2>Actions</h2>")
    const csrf = csrfOf(story.text)
    const confirm = await agent.post(`/console/orders/${orderA}/capture`, { csrf, amount: "10.00" })
    expect(confirm.status).toBe(200)
    expect(confirm.text).toContain("<h1>Confirm capture</h1>")
    expect(confirm.text).toContain("Amount: 10.00 USD")
    expect((await orderOf(accountA, orderA)).captured_amount ?? 0).toBe(0)
    const done = await agent.post(`/console/orders/${orderA}/capture`, { csrf, amount: "10.00", confirm: "yes" })
    expect(done.status).toBe(303)
    expect(done.headers.get("location")).toBe(`/console/orders/${orderA}`)
    expect((await agent.get(`/console/orders/${orderA}`)).text).toContain("Captured 10.00 USD.")
    expect((await orderOf(accountA, orderA)).captured_amount).toBe(10)

    // Over the uncaptured remainder: said in dollars, not in minor units (page and audit).
    const overCapture = await agent.post(`/console/orders/${orderA}/capture`, { csrf, amount: "95.00", confirm: "yes" })
    expect(overCapture.status).toBe(303)
    const refusedPage = (await agent.get(`/console/orders/${orderA}`)).text
    expect(refusedPage).toContain(`role="alert">The capture amount exceeds the uncaptured remainder (90.00 USD, less any capture still in flight).`)
    expect(refusedPage).not.toContain("minor units")

    const refunded = await agent.post(`/console/orders/${orderA}/refund`, { csrf, amount: "4.00", confirm: "yes" })
    expect(refunded.status).toBe(303)
    expect((await agent.get(`/console/orders/${orderA}`)).text).toMatch(/Refund re_\w+ created\./)

    // Over what is refundable: the domain refuses, the page says so, the audit says failed.
    const tooMuch = await agent.post(`/console/orders/${orderA}/refund`, { csrf, amount: "90.00", confirm: "yes" })
    expect(tooMuch.status).toBe(303)
    expect((await agent.get(`/console/orders/${orderA}`)).text).toContain("role=\"alert\"")

    const audit = await agent.get("/console/audit")
    expect(audit.text).toContain(`<td>${operator.name}</td><td>capture</td><td><code>${orderA}</code>`)
    // The refund's entry names the refund it made.
    expect(audit.text).toMatch(/<td>refund<\/td>[\s\S]*?<td>succeeded<\/td><td>refund 4\.00 USD: re_\w+<\/td>/)
    expect(audit.text).toMatch(/<td>refund<\/td>[\s\S]*?<td>failed<\/td>/)
    expect(audit.text).toContain("capture_amount_exceeds_remaining: The capture amount exceeds the uncaptured remainder (90.00 USD")
    expect(audit.text).not.toContain("minor units")

    // An empty refund amount is the whole remainder: the confirmation sends that figure, not the empty field.
    const whole = await agent.post(`/console/orders/${orderA}/refund`, { csrf, amount: "" })
    expect(whole.text).toContain("Amount: 6.00 USD")
    expect(whole.text).toContain(`<input type="hidden" name="amount" value="6.00">`)
    // Capture's defaulted amount likewise.
    const rest = await agent.post(`/console/orders/${orderA}/capture`, { csrf, amount: "" })
    expect(rest.text).toContain(`<input type="hidden" name="amount" value="90.00">`)
  })

  it("acting on another account's order is the 404 page, and nothing changes", async () => {
    const agent = asOperator
    const csrf = csrfOf((await agent.get("/console/search")).text)
    const refused = await agent.post(`/console/orders/${orderB}/void`, { csrf, confirm: "yes" })
    expect(refused.status).toBe(404)
    expect((await orderOf(accountB, orderB)).status).toBe("authorized")
    // The attempt is in B's audit log (read by whoever is granted B), not in the operator's own view.
    const log = await server.run(Effect.flatMap(Operators, (o) => o.audit({ accounts: [accountB.account_id], limit: 50 })))
    expect(log.data.find((entry) => entry.target === orderB && entry.operator_name === operator.name)).toMatchObject({
      action: "void", outcome: "failed", detail: "refused: the account is not granted", account_id: accountB.account_id
    })
  })

  it("our own form as Chromium posts it (Origin: null under no-referrer, Sec-Fetch-Site: same-origin) is taken", async () => {
    const agent = asOperator
    const csrf = csrfOf((await agent.get(`/console/orders/${orderA}`)).text)
    const confirm = await agent.post(`/console/orders/${orderA}/void`, { csrf }, { origin: "null", "sec-fetch-site": "same-origin" })
    expect(confirm.status).toBe(200)
    expect(confirm.text).toContain("<h1>Confirm void</h1>")
  })

  it("after logout the old session cookie is refused (back to login)", async () => {
    const who = await enrolled("operator", [accountA.account_id])
    const agent = await login(who)
    const stolen = agent.cookies.get("tender_console")!
    const csrf = csrfOf((await agent.get("/console/search")).text)
    const out = await agent.post("/console/logout", { csrf })
    expect(out.status).toBe(303)
    expect(out.headers.get("location")).toBe("/console/login")
    const replayed = await fetch(`${server.baseUrl}/console/search`, { headers: { cookie: `tender_console=${stolen}` }, redirect: "manual" })
    expect(replayed.status).toBe(303)
    expect(replayed.headers.get("location")).toBe("/console/login")
    const replayedPost = await fetch(`${server.baseUrl}/console/orders/${orderA}/void`, {
      method: "POST",
      headers: { cookie: `tender_console=${stolen}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf, confirm: "yes" }).toString(),
      redirect: "manual"
    })
    expect(replayedPost.status).toBe(303)
    expect((await orderOf(accountA, orderA)).status).toBe("authorized")
  })
})

describe("an admin's actions: redeliver, disable an endpoint, suspend and activate", () => {
  let receiver: Server
  afterAll(() => new Promise<void>((resolve) => receiver ? receiver.close(() => resolve()) : resolve()))

  it("every delivery attempt with the receiver's answer; each action confirmed, done, noticed and audited; an operator may not", async () => {
    receiver = createServer((request, response) => {
      request.resume()
      request.on("end", () => response.writeHead(200, { "content-type": "text/plain" }).end("ok-from-receiver"))
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const port = (receiver.address() as { port: number }).port
    const endpoint = await send(server, accountA, "POST", "/v1/webhook_endpoints", { body: JSON.stringify({ url: `http://127.0.0.1:${port}/hooks` }) })
    expect(endpoint.status, endpoint.text).toBe(201)
    const order = await authorize(accountA, "console-a-hooks")
    const admin = await login(await enrolled("admin", "all"))

    // The story shows the delivery's attempt once the dispatcher made it.
    const deadline = Date.now() + 15_000
    let story = ""
    while (!(story = (await admin.get(`/console/orders/${order}`)).text).includes("ok-from-receiver")) {
      if (Date.now() > deadline) throw new Error(`no delivery attempt shown: ${story.slice(story.indexOf("<h2>Events"), story.indexOf("<h2>Events") + 3000)}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(story).toMatch(/<td class="num">200<\/td><td class="num">\d+<\/td><td><pre class="code">ok-from-receiver<\/pre><\/td>/)
    const eventId = /action="\/console\/events\/(evt_\w+)\/redeliver"/.exec(story)![1]!
    const csrf = csrfOf(story)

    const confirm = await admin.post(`/console/events/${eventId}/redeliver`, { csrf })
    expect(confirm.text).toContain("<h1>Confirm redelivery</h1>")
    const redelivered = await admin.post(`/console/events/${eventId}/redeliver`, { csrf, confirm: "yes" })
    expect(redelivered.headers.get("location")).toBe(`/console/orders/${order}`)
    expect((await admin.get(`/console/orders/${order}`)).text).toContain("Event redelivered.")

    // A plain operator may not disable or suspend: 403, nothing changes.
    const opCsrf = csrfOf((await asOperator.get("/console/accounts")).text)
    expect((await asOperator.post(`/console/webhook_endpoints/${endpoint.json.id}/disable`, { csrf: opCsrf, confirm: "yes" })).status).toBe(403)
    expect((await asOperator.post(`/console/accounts/${accountA.account_id}/suspend`, { csrf: opCsrf, confirm: "yes" })).status).toBe(403)

    const accountPage = await admin.get(`/console/accounts/${accountA.account_id}`)
    expect(accountPage.text).toContain(`/console/webhook_endpoints/${endpoint.json.id}/disable`)
    expect((await admin.post(`/console/webhook_endpoints/${endpoint.json.id}/disable`, { csrf })).text).toContain("<h1>Confirm disabling</h1>")
    await admin.post(`/console/webhook_endpoints/${endpoint.json.id}/disable`, { csrf, confirm: "yes" })
    expect((await admin.get(`/console/accounts/${accountA.account_id}`)).text).toContain("Endpoint disabled.")
    expect((await send(server, accountA, "GET", `/v1/webhook_endpoints/${endpoint.json.id}`)).json.status).toBe("disabled")

    expect((await admin.post(`/console/accounts/${accountB.account_id}/suspend`, { csrf })).text).toContain("<h1>Confirm suspension</h1>")
    await admin.post(`/console/accounts/${accountB.account_id}/suspend`, { csrf, confirm: "yes" })
    expect((await admin.get(`/console/accounts/${accountB.account_id}`)).text).toContain("Account suspended.")
    expect((await Effect.runPromise(server.accounts.get(accountB.account_id))).status).toBe("suspended")
    await admin.post(`/console/accounts/${accountB.account_id}/activate`, { csrf, confirm: "yes" })
    expect((await admin.get(`/console/accounts/${accountB.account_id}`)).text).toContain("Account activated.")
    expect((await Effect.runPromise(server.accounts.get(accountB.account_id))).status).toBe("active")

    const audit = (await admin.get("/console/audit")).text
    for (const action of ["redeliver_event", "disable_webhook_endpoint", "suspend_account", "activate_account"]) {
      expect(audit).toMatch(new RegExp(`<td>${action}</td>[\\s\\S]*?<td>succeeded</td>`))
    }
    // The operator granted A only does not read B's entries.
    expect((await asOperator.get("/console/audit")).text).not.toContain(accountB.account_id)
  }, 30_000)
})

describe("garbage in, never a 500", () => {
  it("search and audit fields, path ids of pages and actions, amounts and login fields of any shape: the console's own page, never a 500", async () => {
    await garbageRounds(server, asOperator, orderA)
    expect((await orderOf(accountA, orderA)).captured_amount).toBe(10)
  }, 60_000)

  it("a search value over its bound or holding a control is refused naming its field, not cut to fit", async () => {
    const long = await asViewer.get(`/console/search?kind=orders&reference=${"a".repeat(201)}`)
    expect(long.text).toContain(`role="alert">Reference: at most 200 characters.`)
    expect(long.text).not.toContain("No results.")
    const nul = await asViewer.get("/console/search?kind=orders&reference=%00abc")
    expect(nul.text).toContain(`role="alert">Reference: must not contain control characters.`)
    // The audit log's filter: nobody's entries.
    expect((await asViewer.get("/console/audit?operator=%00")).text).toContain("No entries.")
  })

  it("HEAD answers as GET without a body; another method on a console path is 405 with Allow", async () => {
    const cookie = `tender_console=${asViewer.cookies.get("tender_console")}`
    for (const [path, signedIn] of [["/console/search", true], [`/console/orders/${orderA}`, true], ["/console/login", false]] as const) {
      const head = await fetch(server.baseUrl + path, { method: "HEAD", headers: signedIn ? { cookie } : {}, redirect: "manual" })
      expect(head.status, path).toBe(200)
      expect(head.headers.get("content-security-policy")).toBe(CSP)
      expect(await head.text()).toBe("")
    }
    expect((await fetch(`${server.baseUrl}/console/nothing-here`, { method: "HEAD", headers: { cookie } })).status).toBe(404)
    for (const [method, path, allow] of [["PUT", "/console/search", "GET, HEAD"], ["DELETE", `/console/orders/${orderA}`, "GET, HEAD"], ["GET", `/console/orders/${orderA}/void`, "POST"]] as const) {
      const answer = await fetch(server.baseUrl + path, { method, headers: { cookie }, redirect: "manual" })
      expect(answer.status, `${method} ${path}`).toBe(405)
      expect(answer.headers.get("allow")).toBe(allow)
      expect(answer.headers.get("content-security-policy")).toBe(CSP)
      expect(await answer.text()).toContain("<h1>Method not allowed</h1>")
    }
  })
})

describe("deep links survive login", () => {
  it("a signed-out operator opening an order lands on it after login; the login form carries it as `next`", async () => {
    const who = await enrolled("viewer", [accountA.account_id])
    const agent = new Agent(server.baseUrl)
    const opened = await agent.get(`/console/orders/${orderA}`)
    expect(opened.status).toBe(303)
    const location = opened.headers.get("location")!
    expect(location).toBe(`/console/login?next=${encodeURIComponent(`/console/orders/${orderA}`)}`)
    const page = await agent.get(location)
    expect(page.text).toContain(`<input type="hidden" name="next" value="/console/orders/${orderA}">`)
    const next = /name="next" value="([^"]+)"/.exec(page.text)![1]!
    // A wrong answer keeps it for the next try.
    const wrong = await agent.post("/console/login", { csrf: csrfOf(page.text), name: who.name, password: "not the password", code: "000000", next })
    expect(wrong.text).toContain(`<input type="hidden" name="next" value="/console/orders/${orderA}">`)
    const answer = await agent.post("/console/login", { csrf: csrfOf(page.text), name: who.name, password: who.password, code: freshCode(who.secret), next })
    expect(answer.status, answer.text).toBe(303)
    expect(answer.headers.get("location")).toBe(`/console/orders/${orderA}`)
    const find = await new Agent(server.baseUrl).get(`/console/find/${orderA}`)
    expect(find.headers.get("location")).toBe(`/console/login?next=${encodeURIComponent(`/console/find/${orderA}`)}`)
  })

  it("`next` is only a console path of this origin: another host, scheme, `//`, backslash or `..` lands on search", async () => {
    const attempts = ["//evil.example", "https://evil.example/console/", "/console/\\evil.example", "/\\evil.example", "/console/../v1/payments", "javascript:alert(1)", "/consolex"]
    // Signed in, the login page follows `next` at once: each attempt checked the same way as after a login.
    for (const next of attempts) {
      const answer = await asViewer.get(`/console/login?next=${encodeURIComponent(next)}`)
      expect(answer.status, next).toBe(303)
      expect(answer.headers.get("location"), next).toBe("/console/search")
    }
    expect((await asViewer.get(`/console/login?next=${encodeURIComponent("/console/audit?operator=x")}`)).headers.get("location")).toBe("/console/audit?operator=x")
    // And through the form itself, as an attacker's page would post it.
    const who = await enrolled("viewer", [accountA.account_id])
    const agent = new Agent(server.baseUrl)
    const page = await agent.get("/console/login?next=%2F%2Fevil.example")
    expect(page.text).not.toContain("name=\"next\"")
    const answer = await agent.post("/console/login", { csrf: csrfOf(page.text), name: who.name, password: who.password, code: freshCode(who.secret), next: "//evil.example" })
    expect(answer.status).toBe(303)
    expect(answer.headers.get("location")).toBe("/console/search")
  })
})

describe("watch", () => {
  it("charts read the figures /metrics serves: the authorization rate of the sandbox's card attempts", async () => {
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text()
    expect(metrics).toMatch(/tender_authorizations_total\{channel="sandbox",method="card",outcome="approved"\} [1-9]/)
    const page = await asViewer.get("/console/watch")
    for (const title of ["Payments per minute by outcome", "Authorization rate by channel and method", "Webhook backlog", "Webhook delivery lag", "Reconciliation backlog"]) {
      expect(page.text).toContain(`<figcaption id=`)
      expect(page.text).toContain(`<title id="`)
      expect(page.text).toContain(title)
    }
    expect(page.text.slice(page.text.indexOf("authorization-rate-caption"), page.text.indexOf("webhook-backlog-caption"))).toMatch(/<th scope="row">sandbox card<\/th><td class="num">100%<\/td><td>\d+ approved of \d+<\/td>/)
  })

  it("minute points: one per minute, the latest sample of each, the last hour; differences start at the origin", () => {
    const point = (minute: number, created: number): MinutePoint => ({
      minute: minute * 60_000, payments: { authorized: created }, authorizations: {}, webhookBacklog: null, reconciliationBacklog: null, lagBuckets: null
    })
    let window = EMPTY_WINDOW
    window = addPoint(window, point(1, 0))
    window = addPoint(window, point(1, 3))
    // The first sample is the origin: the start minute's 3 payments are a difference, not a baseline.
    expect(window.origin?.payments.authorized).toBe(0)
    expect(window.points.map((p) => p.payments.authorized)).toEqual([3])
    for (let m = 2; m < 100; m++) window = addPoint(window, point(m, m))
    expect(window.points.length).toBe(POINTS)
    expect(window.points[window.points.length - 1]!.minute).toBe(99 * 60_000)
    expect(window.origin!.minute).toBe(39 * 60_000)
  })

  it("quantiles from cumulative buckets, and axis tops", () => {
    const buckets = [[0.1, 50], [0.5, 90], [1, 99], [null, 100]] as const
    expect(quantile(buckets, 0.5)).toBe(0.1)
    expect(quantile(buckets, 0.9)).toBe(0.5)
    expect(quantile(buckets, 0.999)).toBe(1)
    expect(quantile([[0.1, 0], [null, 0]], 0.5)).toBeNull()
    expect([0, 0.3, 1, 7, 12, 180].map(niceCeiling)).toEqual([1, 0.5, 1, 10, 20, 200])
  })
})
