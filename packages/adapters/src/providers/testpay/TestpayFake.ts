/**
 * Testpay's wire-level fake (TestpayWire.ts): charges, captures, voids, refunds and lookups in
 * memory, the shared fault switch and server harness (fake/FakeServer.ts), and a notification per
 * charge created. Cards: 4000000000009995 is declined `insufficient_funds`, 4000000000000002
 * `card_declined`, any other approved — unless the test's `decide` hook answers otherwise, which is
 * how a test or the routing bench (bench/market.ts) gives each channel (each API key sharing one
 * fake) its own approval rate, declines, latency and outages.
 */
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import { answerUnless, controls, faultSwitch, outbox, readBody, serveLocal } from "../fake/FakeServer.ts"
import { type Charge, type Operation, SIGNATURE_HEADER, sign } from "./TestpayWire.ts"

export type CallKind = "charge" | "capture" | "void" | "refund" | "lookup"

/** A charge as the `decide`/`delayMs` hooks see it: whose key asked, and for what. */
export interface ChargeAsked {
  readonly apiKey: string
  readonly reference: string
  readonly amount: number
  readonly currency: string
  readonly number: string
}

/**
 * What the hook makes of a charge: approve it, decline it with `code` (carried to Tender as the
 * decline_code), or be unavailable — refused unapplied (429, nothing kept under the idempotency
 * key, so a lookup finds nothing), which TestpayChannel reads as ProviderUnavailable: definitely
 * unreachable, the answer that cascades and counts toward the channel's breaker.
 */
export type ChargeVerdict =
  | { readonly _tag: "Approve" }
  | { readonly _tag: "Decline"; readonly code: string }
  | { readonly _tag: "Unavailable" }

export interface TestpayFakeOptions {
  /** The one key the fake accepts; unset: any `tp_test_…`. */
  readonly apiKey?: string | undefined
  /** Where each new charge is POSTed, signed with `secret`. */
  readonly notifications?: { readonly url: string; readonly secret: string } | undefined
  /** Each new charge's verdict; undefined (or no hook): the card rules above. Replays of a key are not asked again. */
  readonly decide?: ((asked: ChargeAsked) => ChargeVerdict | undefined) | undefined
  /** How long (ms) to wait before answering each charge call, replays included: the channel's latency. */
  readonly delayMs?: ((asked: ChargeAsked) => number) | undefined
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
  /** Which key created each charge (several channels may share one fake, each with its key). */
  const chargedBy = new Map<string, string>()
  const captures = new Map<string, { readonly id: string; readonly charge: string; readonly amount: number }>()
  const refunds: Array<{ readonly id: string; readonly payment: string; readonly reference: string; readonly amount: number }> = []
  /** What each key answered, and which call it was; `fenced` once a lookup found nothing under it. */
  const keys = new Map<string, { readonly operation: Operation; readonly reply: Reply } | "fenced">()
  const faults = faultSwitch<CallKind>()
  const sent = outbox()

  const view = ({ refunded: _, ...charge }: Held): Charge => ({ ...charge })

  /** Every charge call that passed the key check, in arrival order (replays too): what a test counts per key. */
  const asked: Array<ChargeAsked> = []

  const askedOf = (apiKey: string, body: Json): ChargeAsked => ({
    apiKey,
    reference: String(body["reference"]),
    amount: Number(body["amount"]),
    currency: String(body["currency"]),
    number: String((body["card"] as Json | undefined)?.["number"] ?? "")
  })

  const charge = (apiKey: string, body: Json, verdict: ChargeVerdict | undefined): Reply => {
    const decline = verdict === undefined ? DECLINES[String((body["card"] as Json | undefined)?.["number"] ?? "")] : verdict._tag === "Decline" ? verdict.code : undefined
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
    chargedBy.set(created.id, apiKey)
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

  const routes: ReadonlyArray<readonly [RegExp, CallKind, Operation | undefined, (match: RegExpMatchArray, body: Json, key: string, verdict: ChargeVerdict | undefined) => Reply]> = [
    [/^\/charges$/, "charge", "authorize", (_, body, key, verdict) => charge(key, body, verdict)],
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
    const charging = route.kind === "charge" ? askedOf(key, body) : undefined
    if (charging !== undefined) {
      asked.push(charging)
      const delay = options.delayMs?.(charging) ?? 0
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay))
    }
    const fault = faults.take(route.kind)
    if (fault === "5xx") return send(res, refuse(500, "internal"))
    const idempotencyKey = req.headers["idempotency-key"]
    if (typeof idempotencyKey !== "string") return send(res, refuse(400, "idempotency_key_missing"))
    const held = keys.get(idempotencyKey)
    if (held === "fenced") return send(res, refuse(409, "key_fenced", "a lookup fenced this key: the call was not applied"))
    const verdict = held === undefined && charging !== undefined ? options.decide?.(charging) : undefined
    // Unavailable: refused before anything is applied or kept under the key (a 5xx would read as in doubt).
    if (verdict?._tag === "Unavailable") return send(res, refuse(429, "unavailable", "Testpay is unavailable: the charge was not applied"))
    // The same key replays its answer: a retry never applies a call twice.
    const reply = held?.reply ?? route.run(route.match!, body, key, verdict)
    if (held === undefined && reply.status < 500) keys.set(idempotencyKey, { operation: route.operation!, reply })
    answerUnless(fault, req, () => send(res, reply))
  }

  const listener = await serveLocal(http.createServer(), "http", handle, (res, error) => send(res, refuse(500, "internal", String(error))))
  return {
    ...controls(faults, listener, sent),
    /** The charges the fake holds, oldest first (what a test counts); given a key, only those that key created. */
    charges: (apiKey?: string) => [...charges.values()].filter((c) => apiKey === undefined || chargedBy.get(c.id) === apiKey).map(view),
    /** Every charge call received, with the key that sent it (replays and refused-unavailable ones too). */
    asked: (): ReadonlyArray<ChargeAsked> => [...asked],
    refunds: () => [...refunds]
  }
}

export type TestpayFake = Awaited<ReturnType<typeof start>>
