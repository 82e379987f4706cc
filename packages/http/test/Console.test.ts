/**
 * The operator console over real HTTP (issue 26), in-process on memory storage: off unless enabled;
 * enrolment and login with codes this test computes itself (RFC 6238); the cookie's flags; the
 * strict CSP on every answer; CSRF (a missing token, a foreign Origin); a viewer refused an action;
 * an operator's two-step capture and refund, with their audit entries; logout ending the session
 * for good; another account's payment neither found nor shown; and no 500 for garbage input.
 * The same flows in Chromium: the browser-test helper's files.
 */
import { createHmac } from "node:crypto"
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { type Credentials, send } from "@tender/client/Testing"
import { Operators } from "@tender/domain/operators/Operators"
import type { OperatorRole } from "@tender/domain/operators/Operator"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { CSP } from "../src/console/Layout.ts"
import { niceCeiling } from "../src/console/Charts.ts"
import { addPoint, EMPTY_WINDOW, type MinutePoint, POINTS } from "../src/console/Sampler.ts"
import { quantile } from "../src/console/WatchPage.ts"

// --- TOTP (RFC 6238, SHA-1, 6 digits, 30 s), the test's own ---------------------------------

const base32 = (text: string): Buffer => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
  let bits = ""
  for (const c of text.replace(/=+$/, "").toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, "0")
  const bytes: Array<number> = []
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2))
  return Buffer.from(bytes)
}

const totpAt = (secret: string, step: number): string => {
  const counter = Buffer.alloc(8)
  counter.writeBigUInt64BE(BigInt(step))
  const mac = createHmac("sha1", base32(secret)).update(counter).digest()
  const offset = mac[mac.length - 1]! & 0xf
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, "0")
}

/** A code not used before for this secret: each is accepted once (the step after the last one used, within ±1 of now). */
const used = new Map<string, number>()
const freshCode = (secret: string): string => {
  const now = Math.floor(Date.now() / 30_000)
  const step = Math.max(now - 1, (used.get(secret) ?? -Infinity) + 1)
  if (step > now + 1) throw new Error("no fresh TOTP step left in this window: the test uses too many codes for one operator")
  used.set(secret, step)
  return totpAt(secret, step)
}

// --- a browser's worth of HTTP: a cookie jar, forms, no redirects followed -------------------

class Agent {
  readonly cookies = new Map<string, string>()
  readonly setCookies: Array<string> = []
  readonly base: string
  constructor(base: string) {
    this.base = base
  }
  private remember(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      this.setCookies.push(line)
      const [pair] = line.split(";")
      const eq = pair!.indexOf("=")
      const name = pair!.slice(0, eq), value = pair!.slice(eq + 1)
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === "") this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }
  private header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
  }
  async get(path: string) {
    const response = await fetch(this.base + path, { headers: { cookie: this.header() }, redirect: "manual" })
    this.remember(response)
    return { status: response.status, headers: response.headers, text: await response.text() }
  }
  async post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
    const response = await fetch(this.base + path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: this.header(), ...headers },
      body: new URLSearchParams(fields).toString(),
      redirect: "manual"
    })
    this.remember(response)
    return { status: response.status, headers: response.headers, text: await response.text() }
  }
}

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? ""

let server: TestServer
let off: TestServer
type Merchant = Credentials & { readonly account_id: string }
let accountA: Merchant
let accountB: Merchant
let seq = 0

interface Enrolled {
  readonly name: string
  readonly secret: string
  readonly password: string
}

const PASSWORD = "correct horse battery staple"

/** An operator added and enrolled through the use case (the enrolment pages have their own test). */
const enrolled = async (role: OperatorRole, accounts: ReadonlyArray<string> | "all"): Promise<Enrolled> => {
  const name = `${role}${++seq}`
  const secret = await server.run(Effect.gen(function*() {
    const operators = yield* Operators
    const invitation = yield* operators.add({ name, role, accounts })
    const found = yield* operators.enrolment(invitation.enrolment_token)
    if (found._tag === "None") throw new Error("no enrolment")
    return { token: invitation.enrolment_token, secret: found.value.totp_secret }
  }))
  await server.run(Effect.flatMap(Operators, (o) => o.enrol(secret.token, PASSWORD, freshCode(secret.secret))))
  return { name, secret: secret.secret, password: PASSWORD }
}

const login = async (who: Enrolled) => {
  const agent = new Agent(server.baseUrl)
  const page = await agent.get("/console/login")
  const answer = await agent.post("/console/login", { csrf: csrfOf(page.text), name: who.name, password: who.password, code: freshCode(who.secret) })
  expect(answer.status, answer.text).toBe(303)
  expect(answer.headers.get("location")).toBe("/console/search")
  return agent
}

/** A manual-capture card payment of `account` (sandbox card 4242), authorized. */
const authorize = async (creds: Merchant, reference: string) => {
  const token = await send(server, creds, "POST", "/v1/test_helpers/card_tokens", {
    body: JSON.stringify({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123", holder_name: "Ada Lovelace" })
  })
  expect(token.status, token.text).toBe(201)
  const created = await send(server, creds, "POST", "/v1/payments", {
    body: JSON.stringify({
      amount: "100.00", currency: "USD", country: "US", merchant_reference: reference, capture_method: "manual",
      payment_method: { code: "card", details: { card_token: token.json.token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
    })
  })
  expect(created.status, created.text).toBe(200)
  expect(created.json.status).toBe("authorized")
  return created.json.order_id as string
}

const orderOf = async (account: Merchant, id: string) => (await send(server, account, "GET", `/v1/orders/${id}`)).json

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
    const invitation = await server.run(Effect.flatMap(Operators, (o) => o.add({ name: `enrol${++seq}`, role: "admin", accounts: "all" })))
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

    const refunded = await agent.post(`/console/orders/${orderA}/refund`, { csrf, amount: "4.00", confirm: "yes" })
    expect(refunded.status).toBe(303)
    expect((await agent.get(`/console/orders/${orderA}`)).text).toMatch(/Refund re_\w+ created\./)

    // Over what is refundable: the domain refuses, the page says so, the audit says failed.
    const tooMuch = await agent.post(`/console/orders/${orderA}/refund`, { csrf, amount: "90.00", confirm: "yes" })
    expect(tooMuch.status).toBe(303)
    expect((await agent.get(`/console/orders/${orderA}`)).text).toContain("role=\"alert\"")

    const audit = await agent.get("/console/audit")
    expect(audit.text).toContain(`<td>${operator.name}</td><td>capture</td><td><code>${orderA}</code>`)
    expect(audit.text).toMatch(/<td>refund<\/td>[\s\S]*?<td>succeeded<\/td><td>refund 4\.00 USD<\/td>/)
    expect(audit.text).toMatch(/<td>refund<\/td>[\s\S]*?<td>failed<\/td>/)
  })

  it("acting on another account's order is the 404 page, and nothing changes", async () => {
    const agent = asOperator
    const csrf = csrfOf((await agent.get("/console/search")).text)
    const refused = await agent.post(`/console/orders/${orderB}/void`, { csrf, confirm: "yes" })
    expect(refused.status).toBe(404)
    expect((await orderOf(accountB, orderB)).status).toBe("authorized")
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
  it("search fields and action amounts of any shape answer 200, 303, 403 or 404", async () => {
    const agent = asOperator
    const csrf = csrfOf((await agent.get("/console/search")).text)
    const junk = ["", " ", "-1", "1e309", "NaN", "0x10", "10.001", "９９", "'\"<script>", "%00", "\u0000", "a".repeat(5000), "2026-02-30", "../..", "ord_", "🙂"]
    const fields = ["kind", "q", "reference", "amount", "currency", "status", "method", "channel", "from", "to", "last4", "cursor"]
    for (const value of junk) {
      for (const name of fields) {
        const page = await agent.get(`/console/search?kind=orders&${name}=${encodeURIComponent(value)}`)
        expect([200, 303, 403, 404], `${name}=${JSON.stringify(value.slice(0, 20))}`).toContain(page.status)
        expect(page.text).not.toContain("<script>")
      }
      for (const action of ["capture", "refund"]) {
        const answer = await agent.post(`/console/orders/${orderA}/${action}`, { csrf, amount: value, final: value })
        expect([200, 303, 403, 404], `${action} amount=${JSON.stringify(value.slice(0, 20))}`).toContain(answer.status)
      }
      expect([200, 303, 403, 404]).toContain((await agent.get(`/console/orders/${encodeURIComponent(value)}`)).status)
      expect([200, 303, 403, 404]).toContain((await agent.get(`/console/find/${encodeURIComponent(value)}`)).status)
    }
    expect((await orderOf(accountA, orderA)).captured_amount).toBe(10)
  }, 60_000)
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
