/**
 * What the console's HTTP tests share (Console.test.ts on memory, Console.postgres.test.ts): TOTP
 * codes the test computes itself (RFC 6238), a browser's worth of HTTP (a cookie jar, forms, no
 * redirects followed), operators enrolled through the use case, and the garbage every console
 * input must survive without a 500.
 */
import { createHmac } from "node:crypto"
import { expect } from "vitest"
import { Effect } from "effect"
import { type Credentials, send } from "@tender/client/Testing"
import { Operators } from "@tender/domain/operators/Operators"
import type { OperatorRole } from "@tender/domain/operators/Operator"
import type { TestServer } from "../src/testing/TestServer.ts"
import { CSP } from "../src/console/Layout.ts"

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
export const freshCode = (secret: string): string => {
  const now = Math.floor(Date.now() / 30_000)
  const step = Math.max(now - 1, (used.get(secret) ?? -Infinity) + 1)
  if (step > now + 1) throw new Error("no fresh TOTP step left in this window: the test uses too many codes for one operator")
  used.set(secret, step)
  return totpAt(secret, step)
}

// --- a browser's worth of HTTP: a cookie jar, forms, no redirects followed -------------------

export class Agent {
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

export const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? ""

export type Merchant = Credentials & { readonly account_id: string }

export interface Enrolled {
  readonly name: string
  readonly secret: string
  readonly password: string
}

export const PASSWORD = "correct horse battery staple"

/** The helpers bound to a test file's console server (read when called: the server starts in beforeAll). */
export const helpersFor = (serverOf: () => TestServer) => {
  let seq = 0
  /** An operator added and enrolled through the use case (the enrolment pages have their own test). */
  const enrolled = async (role: OperatorRole, accounts: ReadonlyArray<string> | "all"): Promise<Enrolled> => {
    const server = serverOf()
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
    const agent = new Agent(serverOf().baseUrl)
    const page = await agent.get("/console/login")
    const answer = await agent.post("/console/login", { csrf: csrfOf(page.text), name: who.name, password: who.password, code: freshCode(who.secret) })
    expect(answer.status, answer.text).toBe(303)
    expect(answer.headers.get("location")).toBe("/console/search")
    return agent
  }

  /** A manual-capture card payment of `account` (sandbox card 4242), authorized. */
  const authorize = async (creds: Merchant, reference: string) => {
    const server = serverOf()
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

  const orderOf = async (account: Merchant, id: string) => (await send(serverOf(), account, "GET", `/v1/orders/${id}`)).json

  return { enrolled, login, authorize, orderOf }
}

/** A console answer: never a 500, and always the console's own page (its CSP), never the API's JSON. */
const expectConsoleAnswer = (answer: { status: number; headers: Headers }, what: string) => {
  expect([200, 303, 403, 404, 405], what).toContain(answer.status)
  expect(answer.headers.get("content-security-policy"), what).toBe(CSP)
  expect(answer.headers.get("content-type") ?? "", what).not.toContain("json")
}

/** Values of any shape: NUL and other controls (PostgreSQL refuses a NUL), over-long, markup, unicode. */
const JUNK = ["", " ", "-1", "1e309", "NaN", "0x10", "10.001", "９９", "'\"<script>", "%00", "\u0000", "ord_\u0000", "a\u0000b", "\u0007\u001f\u007f", "a".repeat(5000), "2026-02-30", "../..", "ord_", "🙂"]
const SEARCH_FIELDS = ["kind", "q", "reference", "amount", "currency", "status", "method", "channel", "from", "to", "last4", "cursor"]

/**
 * Every console input an operator can type or a link can carry, with junk: search fields, audit
 * filters, path ids of pages and actions, action amounts, the login form. `agent` is signed in as an
 * operator granted `order`'s account; the order is not changed.
 */
export const garbageRounds = async (server: TestServer, agent: Agent, order: string) => {
  const csrf = csrfOf((await agent.get("/console/search")).text)
  for (const value of JUNK) {
    const shown = JSON.stringify(value.slice(0, 20))
    const encoded = encodeURIComponent(value)
    for (const name of SEARCH_FIELDS) {
      const page = await agent.get(`/console/search?kind=orders&${name}=${encoded}`)
      expectConsoleAnswer(page, `search ${name}=${shown}`)
      expect(page.text).not.toContain("<script>")
    }
    for (const name of ["operator", "cursor"]) expectConsoleAnswer(await agent.get(`/console/audit?${name}=${encoded}`), `audit ${name}=${shown}`)
    for (const action of ["capture", "refund"]) {
      expectConsoleAnswer(await agent.post(`/console/orders/${order}/${action}`, { csrf, amount: value, final: value }), `${action} amount=${shown}`)
    }
    for (const path of ["orders", "find", "accounts"]) expectConsoleAnswer(await agent.get(`/console/${path}/${encoded}`), `${path}/${shown}`)
    for (const path of ["orders/%s/void", "events/%s/redeliver", "webhook_endpoints/%s/disable", "accounts/%s/suspend"]) {
      const answer = await agent.post(`/console/${path.replace("%s", encoded)}`, { csrf, confirm: "yes" })
      expectConsoleAnswer(answer, `POST ${path} id=${shown}`)
    }
    const login = new Agent(server.baseUrl)
    const loginCsrf = csrfOf((await login.get("/console/login")).text)
    const wrong = await login.post("/console/login", { csrf: loginCsrf, name: value, password: "not the password", code: value, next: value })
    expectConsoleAnswer(wrong, `login name=${shown}`)
    expect(wrong.status, `login name=${shown}`).toBe(200)
  }
}
