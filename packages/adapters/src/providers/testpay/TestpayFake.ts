/**
 * Testpay's wire-level fake (TestpayWire.ts): charges, captures, voids, refunds and lookups in
 * memory, the shared fault switch and server harness (fake/FakeServer.ts), and a notification per
 * charge created. Cards: 4000000000009995 is declined `insufficient_funds`, 4000000000000002
 * `card_declined`, any other approved.
 */
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import { answerUnless, controls, faultSwitch, outbox, readBody, serveLocal } from "../fake/FakeServer.ts"
import { type Charge, type Operation, SIGNATURE_HEADER, sign } from "./TestpayWire.ts"

export type CallKind = "charge" | "capture" | "void" | "refund" | "lookup"

export interface TestpayFakeOptions {
  /** The one key the fake accepts; unset: any `tp_test_…`. */
  readonly apiKey?: string | undefined
  /** Where each new charge is POSTed, signed with `secret`. */
  readonly notifications?: { readonly url: string; readonly secret: string } | undefined
}

const DECLINES: Readonly<Record<string, string>> = { "4000000000009995": "insufficient_funds", "4000000000000002": "card_declined" }

const id = (prefix: string) => `${prefix}_${randomBytes(8).toString("hex")}`

interface Reply { readonly status: number; readonly body: unknown }
const refuse = (status: number, code: string, message = code): Reply => ({ status, body: { error: { code, message } } })

type Json = Record<string, unknown>
/** A charge as the fake keeps it: it changes as it is captured, voided and refunded. */
type Held = { -readonly [K in keyof Charge]: Charge[K] } & { refunded: number }

export const start = async (options: TestpayFakeOptions = {}) => {
  const charges = new Map<string, Held>()
  const captures = new Map<string, { readonly id: string; readonly charge: string; readonly amount: number }>()
  const refunds: Array<{ readonly id: string; readonly payment: string; readonly reference: string; readonly amount: number }> = []
  /** What each key answered, and which call it was; `fenced` once a lookup found nothing under it. */
  const keys = new Map<string, { readonly operation: Operation; readonly reply: Reply } | "fenced">()
  const faults = faultSwitch<CallKind>()
  const sent = outbox()

  const view = ({ refunded: _, ...charge }: Held): Charge => ({ ...charge })

  const charge = (body: Json): Reply => {
    const card = body["card"] as Json | undefined
    const decline = DECLINES[String(card?.["number"] ?? "")]
    const created: Held = {
      id: id("tp_ch"),
      reference: String(body["reference"]),
      amount: Number(body["amount"]),
      currency: String(body["currency"]),
      status: decline !== undefined ? "declined" : body["capture"] === true ? "captured" : "authorized",
      decline_code: decline ?? null,
      captured: decline === undefined && body["capture"] === true ? Number(body["amount"]) : 0,
      refunded: 0
    }
    charges.set(created.id, created)
    if (options.notifications !== undefined) {
      const payload = JSON.stringify(view(created))
      sent.post(options.notifications.url, { [SIGNATURE_HEADER]: sign(payload, options.notifications.secret) }, payload)
    }
    return { status: 200, body: view(created) }
  }

  const capture = (chargeId: string, body: Json): Reply => {
    const held = charges.get(chargeId)
    if (held === undefined) return refuse(404, "no_such_charge")
    if (held.status !== "authorized") return refuse(400, "not_capturable")
    const amount = Number(body["amount"])
    if (held.captured + amount > held.amount) return refuse(400, "amount_too_large")
    held.captured += amount
    // A final capture releases what is left; so does one that takes it all.
    if (body["final"] !== false || held.captured === held.amount) held.status = "captured"
    const made = { id: id("tp_cp"), charge: chargeId, amount }
    captures.set(made.id, made)
    return { status: 200, body: made }
  }

  const release = (chargeId: string): Reply => {
    const held = charges.get(chargeId)
    if (held === undefined) return refuse(404, "no_such_charge")
    if (held.status !== "authorized") return refuse(400, "not_voidable")
    held.status = held.captured > 0 ? "captured" : "voided"
    return { status: 200, body: view(held) }
  }

  const refund = (body: Json): Reply => {
    const payment = String(body["payment"])
    const held = charges.get(captures.get(payment)?.charge ?? payment)
    if (held === undefined) return refuse(404, "no_such_charge")
    const amount = Number(body["amount"])
    if (held.refunded + amount > held.captured) return refuse(400, "amount_too_large")
    held.refunded += amount
    const made = { id: id("tp_rf"), payment, reference: String(body["reference"]), amount }
    refunds.push(made)
    return { status: 200, body: { id: made.id, payment, amount } }
  }

  const routes: ReadonlyArray<readonly [RegExp, CallKind, Operation | undefined, (match: RegExpMatchArray, body: Json) => Reply]> = [
    [/^\/charges$/, "charge", "authorize", (_, body) => charge(body)],
    [/^\/charges\/([^/]+)\/capture$/, "capture", "capture", (m, body) => capture(m[1]!, body)],
    [/^\/charges\/([^/]+)\/void$/, "void", "void", (m) => release(m[1]!)],
    [/^\/refunds$/, "refund", "refund", (_, body) => refund(body)]
  ]

  const send = (res: http.ServerResponse, reply: Reply) => {
    res.writeHead(reply.status, { "content-type": "application/json" })
    res.end(JSON.stringify(reply.body))
  }

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const text = await readBody(req)
    const key = req.headers["authorization"]?.replace(/^Bearer /, "")
    if (key === undefined || (options.apiKey !== undefined ? key !== options.apiKey : !/^tp_test_\w+$/.test(key))) {
      return send(res, refuse(401, "unauthorized"))
    }
    const body = (text === "" ? {} : JSON.parse(text)) as Json
    const path = new URL(req.url ?? "/", "http://fake").pathname
    if (req.method === "POST" && path === "/lookups") {
      const fault = faults.take("lookup")
      if (fault === "5xx") return send(res, refuse(500, "internal"))
      const asked = String(body["key"])
      const held = keys.get(asked)
      if (held === undefined) keys.set(asked, "fenced")
      const reply: Reply = held === undefined || held === "fenced"
        ? { status: 200, body: { found: false } }
        : { status: 200, body: { found: true, operation: held.operation, status: held.reply.status, body: held.reply.body } }
      return answerUnless(fault, req, () => send(res, reply))
    }
    const route = routes.map(([pattern, kind, operation, run]) => ({ match: path.match(pattern), kind, operation, run })).find((r) => r.match !== null)
    if (req.method !== "POST" || route === undefined) return send(res, refuse(404, "not_found"))
    const fault = faults.take(route.kind)
    if (fault === "5xx") return send(res, refuse(500, "internal"))
    const idempotencyKey = req.headers["idempotency-key"]
    if (typeof idempotencyKey !== "string") return send(res, refuse(400, "idempotency_key_missing"))
    const held = keys.get(idempotencyKey)
    if (held === "fenced") return send(res, refuse(409, "key_fenced", "a lookup fenced this key: the call was not applied"))
    // The same key replays its answer: a retry never applies a call twice.
    const reply = held?.reply ?? route.run(route.match!, body)
    if (held === undefined && reply.status < 500) keys.set(idempotencyKey, { operation: route.operation!, reply })
    answerUnless(fault, req, () => send(res, reply))
  }

  const listener = await serveLocal(http.createServer(), "http", handle, (res, error) => send(res, refuse(500, "internal", String(error))))
  return {
    ...controls(faults, listener, sent),
    /** The charges the fake holds, oldest first (what a test counts). */
    charges: () => [...charges.values()].map(view),
    refunds: () => [...refunds]
  }
}

export type TestpayFake = Awaited<ReturnType<typeof start>>
