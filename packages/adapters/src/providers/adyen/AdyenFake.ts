/**
 * A wire-level fake of Adyen's Checkout API (POST /payments, /payments/details, /cardDetails, and
 * the modifications /payments/{pspReference}/captures, /cancels, /refunds), a real HTTPS server
 * on 127.0.0.1 that the official `@adyen/api-library` talks to unchanged: the library only speaks
 * HTTPS, so the fake serves a self-signed certificate made at start (openssl) and hands out its
 * PEM for the client to trust.
 *
 * It follows Adyen's published API reference (CheckoutService v71/v72) where the adapter depends
 * on it: JSON bodies, `X-API-Key` authentication, `resultCode` Authorised / Refused (with
 * `refusalReason` and `refusalReasonCode`) / RedirectShopper (with `action {type: redirect, url,
 * method}`), modifications answering 201 `received` with the outcome arriving later by
 * notification (success true or false), error bodies `{status, errorCode, message, errorType}`,
 * and the Idempotency-Key layer as Adyen documents it: keys are unique per company account (not
 * per endpoint), a processed request's first response is returned again for any later request
 * with the key, whatever its body. Requests refused by validation (4xx) are not kept under their
 * key, and neither are 5xx answers (Adyen calls them transient: retry with the same key).
 *
 * Notifications (AUTHORISATION, CAPTURE, CANCELLATION, REFUND) are HMAC-signed and POSTed to
 * `notificationUrl` as Adyen's `{live, notificationItems: [{NotificationRequestItem}]}`.
 *
 * Faults, per call kind: `timeout` (apply, never answer), `5xx` (answer 500 without applying) and
 * `applyThenDrop` (apply, then destroy the socket); `refuse()` stops listening until `accept()`.
 *
 * Raw card numbers reach it (paymentMethod.number); it keeps only brand, last four digits and the
 * outcome the number decides.
 */
import { Card as CardRules } from "@tender/domain"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as https from "node:https"
import type * as http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { answerUnless, controls, type Fault, faultSwitch, outbox, readBody, serveLocal } from "../fake/FakeServer.ts"
import { THREE_DS2_TEST_CARD } from "./AdyenProvider.ts"
import { sign } from "./AdyenSignature.ts"

export type CallKind = "payments" | "details" | "captures" | "cancels" | "refunds" | "cardDetails"
export type { Fault }

/** Adyen's refusal reasons (docs.adyen.com, "Refusal reasons"), by refusalReasonCode. */
export const REFUSAL_REASONS: Readonly<Record<string, string>> = {
  "2": "Refused",
  "3": "Referral",
  "4": "Acquirer Error",
  "5": "Blocked Card",
  "6": "Expired Card",
  "7": "Invalid Amount",
  "8": "Invalid Card Number",
  "9": "Issuer Unavailable",
  "10": "Not supported",
  "11": "3D Not Authenticated",
  "12": "Not enough balance",
  "14": "Acquirer Fraud",
  "20": "FRAUD",
  "23": "Transaction Not Permitted",
  "24": "CVC Declined",
  "25": "Restricted Card",
  "27": "Declined Non Generic",
  "28": "Withdrawal amount exceeded",
  "29": "Withdrawal count exceeded",
  "31": "Issuer Suspected Fraud"
}

const withCheckDigit = (partial: string) => {
  for (let digit = 0; digit <= 9; digit++) {
    if (CardRules.luhnValid(`${partial}${digit}`)) return `${partial}${digit}`
  }
  throw new Error("unreachable")
}

/**
 * The fake's refusal cards (its own convention, beside Adyen's holder names above, for the
 * adapter's tests that send cards directly): `4000 1000 0000 0NNc` is refused with
 * refusalReasonCode NN, `c` being the Luhn check digit.
 */
export const refusalCard = (code: string) => withCheckDigit(`4000100000000${code.padStart(2, "0")}`)

/** Adyen's 3-D Secure 2 test card (Visa): always challenged, answered on the fake's page. */
export const CHALLENGE_CARD = THREE_DS2_TEST_CARD

/**
 * The holder names Adyen's test environment refuses with a given refusalReasonCode (docs.adyen.com,
 * "Testing result codes and refusal reasons"), those of REFUSAL_REASONS.
 */
export const HOLDER_NAME_REFUSALS: Readonly<Record<string, string>> = {
  DECLINED: "2",
  REFERRAL: "3",
  BLOCK_CARD: "5",
  CARD_EXPIRED: "6",
  INVALID_AMOUNT: "7",
  INVALID_CARD_NUMBER: "8",
  ISSUER_UNAVAILABLE: "9",
  NOT_SUPPORTED: "10",
  NOT_3D_AUTHENTICATED: "11",
  NOT_ENOUGH_BALANCE: "12",
  ACQUIRER_FRAUD: "14"
}

/** Adyen's own test cards the fake names; any other Luhn-valid number is authorised too. */
export const APPROVED_CARDS = ["4111111111111111", "5555341244441115", "5454545454545454"] as const

/** What /cardDetails knows of a BIN's issuer (the fake's own table); others answer no country. */
const ISSUING_COUNTRIES: Readonly<Record<string, string>> = { "411111": "US", "555534": "NL", "545454": "GB", "491761": "NL" }

type Outcome = { readonly _tag: "Authorise" } | { readonly _tag: "Refuse"; readonly code: string } | { readonly _tag: "Challenge" }

const outcomeOf = (number: string, holderName: string | undefined): Outcome => {
  const named = HOLDER_NAME_REFUSALS[holderName ?? ""]
  if (named !== undefined) return { _tag: "Refuse", code: named }
  if (number === CHALLENGE_CARD) return { _tag: "Challenge" }
  const refusal = /^4000100000000(\d\d)\d$/.exec(number)
  if (refusal !== null && REFUSAL_REASONS[String(Number(refusal[1]))] !== undefined) return { _tag: "Refuse", code: String(Number(refusal[1])) }
  return { _tag: "Authorise" }
}

export interface FakePayment {
  readonly pspReference: string
  readonly merchantReference: string
  readonly amount: { readonly value: number; readonly currency: string }
  readonly manualCapture: boolean
  readonly brand: string
  readonly last4: string
  /** As sent: `Ecommerce` unless given; `ContAuth` (a stored card, no shopper) with its recurringProcessingModel. */
  readonly shopperInteraction: string
  readonly recurringProcessingModel: string | null
  status: "Authorised" | "Refused" | "RedirectShopper" | "Cancelled"
  refusalReasonCode: string | null
  captured: number
  refunded: number
  captures: number
  /** The shopper's answer on the challenge page and the redirectResult that carries it back. */
  challenge: { readonly returnUrl: string; answer: "approve" | "deny" | null; redirectResult: string | null } | null
}

export interface FakeModification {
  readonly pspReference: string
  readonly kind: "capture" | "cancel" | "refund"
  readonly paymentPspReference: string
  readonly reference: string
  readonly amount: { readonly value: number; readonly currency: string } | null
  readonly success: boolean
  readonly reason: string
}

export interface NotificationRequestItem {
  readonly additionalData: Record<string, string>
  readonly amount: { readonly value: number; readonly currency: string }
  readonly eventCode: string
  readonly eventDate: string
  readonly merchantAccountCode: string
  readonly merchantReference: string
  readonly originalReference?: string | undefined
  readonly pspReference: string
  readonly reason: string
  readonly success: "true" | "false"
  readonly paymentMethod?: string | undefined
}

export interface AdyenFakeOptions {
  readonly apiKey?: string | undefined
  readonly merchantAccount?: string | undefined
  /** Where notifications are POSTed and the HMAC key (hex) they are signed with. */
  readonly notifications?: { readonly url: string; readonly hmacKey: string } | undefined
  /** The merchant account's "multiple partial captures" setting (Adyen enables it on request); default on. */
  readonly multipleCaptures?: boolean | undefined
}

interface Reply { readonly status: number; readonly body: unknown }

class AdyenHttpError {
  readonly status: number
  readonly errorCode: string
  readonly message: string
  readonly errorType: string
  constructor(status: number, errorCode: string, message: string, errorType: string) {
    this.status = status
    this.errorCode = errorCode
    this.message = message
    this.errorType = errorType
  }
}
const validation = (errorCode: string, message: string) => new AdyenHttpError(422, errorCode, message, "validation")

/** Adyen's pspReferences are 16 alphanumeric characters. */
const pspReference = () => randomBytes(8).toString("hex").toUpperCase()

/** A self-signed certificate for 127.0.0.1, made once per process. */
let certificate: { readonly key: string; readonly cert: string } | undefined
const selfSigned = () => {
  if (certificate !== undefined) return certificate
  const dir = mkdtempSync(join(tmpdir(), "adyen-fake-"))
  try {
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
      "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
      "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")
    ], { stdio: "ignore" })
    certificate = { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") }
    return certificate
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

type Json = Record<string, unknown>
const obj = (value: unknown): Json | undefined => (typeof value === "object" && value !== null && !Array.isArray(value) ? value as Json : undefined)
const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

export const start = async (options: AdyenFakeOptions = {}) => {
  const apiKey = options.apiKey ?? "AQE_test_fake_key"
  const merchantAccount = options.merchantAccount ?? "TenderECOM"
  const multipleCaptures = options.multipleCaptures ?? true
  const payments = new Map<string, FakePayment>()
  const modifications: Array<FakeModification> = []
  const idempotency = new Map<string, Reply>()
  const faults = faultSwitch<CallKind>()
  const notifications: Array<NotificationRequestItem> = []
  const sent = outbox()
  const tls = selfSigned()
  let base = ""

  // ---- notifications ----

  const notify = (item: Omit<NotificationRequestItem, "additionalData" | "eventDate" | "merchantAccountCode">) => {
    const unsigned = { ...item, merchantAccountCode: merchantAccount, eventDate: new Date().toISOString() }
    const target = options.notifications
    const signed: NotificationRequestItem = { ...unsigned, additionalData: target === undefined ? {} : { hmacSignature: sign(unsigned, target.hmacKey) } }
    notifications.push(signed)
    if (target === undefined) return
    sent.post(target.url, {}, JSON.stringify({ live: "false", notificationItems: [{ NotificationRequestItem: signed }] }))
  }

  // ---- views ----

  const resultView = (payment: FakePayment): Json => {
    const common = { pspReference: payment.pspReference, merchantReference: payment.merchantReference, amount: payment.amount }
    switch (payment.status) {
      case "Authorised":
      case "Cancelled":
        return { ...common, resultCode: "Authorised", paymentMethod: { type: "scheme", brand: payment.brand } }
      case "Refused":
        return { ...common, resultCode: "Refused", refusalReason: REFUSAL_REASONS[payment.refusalReasonCode!], refusalReasonCode: payment.refusalReasonCode }
      case "RedirectShopper":
        return {
          ...common,
          resultCode: "RedirectShopper",
          action: { type: "redirect", paymentMethodType: "scheme", method: "GET", url: `${base}/threeds/${payment.pspReference}` }
        }
    }
  }

  // ---- operations ----

  const amountOf = (value: unknown, field = "amount") => {
    const amount = obj(value)
    const minor = amount?.["value"]
    const currency = str(amount?.["currency"])
    if (amount === undefined) throw validation("100", `Required field '${field}' is not provided.`)
    if (typeof minor !== "number" || !Number.isInteger(minor) || minor < 0) throw validation("137", "Invalid amount specified")
    if (currency === undefined || !/^[A-Z]{3}$/.test(currency)) throw validation("138", "Invalid currency")
    return { value: minor, currency }
  }

  const requireMerchant = (body: Json) => {
    const account = str(body["merchantAccount"])
    if (account === undefined) throw validation("100", "Required field 'merchantAccount' is not provided.")
    if (account !== merchantAccount) throw new AdyenHttpError(403, "901", "Invalid Merchant Account", "security")
  }

  const authorise = (payment: FakePayment, outcome: Outcome) => {
    if (outcome._tag === "Refuse") {
      payment.status = "Refused"
      payment.refusalReasonCode = outcome.code
    } else {
      payment.status = "Authorised"
      if (!payment.manualCapture) payment.captured = payment.amount.value
    }
    notify({
      pspReference: payment.pspReference,
      merchantReference: payment.merchantReference,
      amount: payment.amount,
      eventCode: "AUTHORISATION",
      success: payment.status === "Authorised" ? "true" : "false",
      reason: payment.status === "Authorised" ? `${payment.last4}:${payment.brand}` : REFUSAL_REASONS[payment.refusalReasonCode!]!,
      paymentMethod: payment.brand
    })
  }

  const pay = (body: Json): Reply => {
    requireMerchant(body)
    const amount = amountOf(body["amount"])
    const reference = str(body["reference"])
    if (reference === undefined || reference === "") throw validation("130", "Required field 'reference' is not provided.")
    const returnUrl = str(body["returnUrl"])
    if (returnUrl === undefined) throw validation("100", "Required field 'returnUrl' is not provided.")
    const method = obj(body["paymentMethod"])
    if (method === undefined) throw validation("100", "Required field 'paymentMethod' is not provided.")
    if (str(method["type"]) !== "scheme") throw validation("14_004", "Payment method not supported by the fake: only scheme (cards)")
    const number = str(method["number"])?.replace(/\s+/g, "")
    if (number === undefined) throw validation("100", "Required field 'paymentMethod.number' is not provided.")
    if (!/^\d{12,19}$/.test(number) || !CardRules.luhnValid(number)) throw validation("101", "Invalid card number")
    const month = Number(str(method["expiryMonth"]))
    const year = Number(str(method["expiryYear"]))
    if (!Number.isInteger(month) || month < 1 || month > 12 || !Number.isInteger(year) || year < 2000) throw validation("129", "Expiry Date Invalid")
    const cvc = str(method["cvc"])
    if (cvc !== undefined && !/^\d{3,4}$/.test(cvc)) throw validation("103", "CVC is not the right length")
    // Adyen's enums (CheckoutService v71: PaymentRequest.shopperInteraction, .recurringProcessingModel);
    // stored payment details need a recurringProcessingModel, and ContAuth is always a stored card.
    const interaction = str(body["shopperInteraction"]) ?? "Ecommerce"
    if (!["Ecommerce", "ContAuth", "Moto", "POS"].includes(interaction)) throw validation("100", `Invalid shopperInteraction: ${interaction}`)
    const model = str(body["recurringProcessingModel"])
    if (model !== undefined && !["CardOnFile", "Subscription", "UnscheduledCardOnFile"].includes(model)) {
      throw validation("100", `Invalid recurringProcessingModel: ${model}`)
    }
    if (interaction === "ContAuth" && model === undefined) throw validation("100", "Required field 'recurringProcessingModel' is not provided.")
    const additional = obj(body["additionalData"])
    const delay = body["captureDelayHours"]
    const payment: FakePayment = {
      pspReference: pspReference(),
      merchantReference: reference,
      amount,
      // Manual capture per request (additionalData.manualCapture); a capture delay leaves the
      // payment uncaptured too, as the fake runs no clock to capture it later.
      manualCapture: str(additional?.["manualCapture"]) === "true" || (typeof delay === "number" && delay > 0),
      brand: CardRules.detectBrand(number),
      last4: CardRules.last4Of(number),
      shopperInteraction: interaction,
      recurringProcessingModel: model ?? null,
      status: "Refused",
      refusalReasonCode: null,
      captured: 0,
      refunded: 0,
      captures: 0,
      challenge: null
    }
    payments.set(payment.pspReference, payment)
    const now = new Date()
    const expired = year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1)
    const outcome = expired ? { _tag: "Refuse" as const, code: "6" } : outcomeOf(number, str(method["holderName"]))
    if (outcome._tag === "Challenge") {
      payment.status = "RedirectShopper"
      payment.challenge = { returnUrl, answer: null, redirectResult: null }
    } else {
      authorise(payment, outcome)
    }
    return { status: 200, body: resultView(payment) }
  }

  const details = (body: Json): Reply => {
    const redirectResult = str(obj(body["details"])?.["redirectResult"])
    if (redirectResult === undefined) throw validation("100", "Required field 'details.redirectResult' is not provided.")
    const payment = [...payments.values()].find((candidate) => candidate.challenge?.redirectResult === redirectResult)
    if (payment === undefined) throw validation("14_018", "Invalid payload provided")
    if (payment.status === "RedirectShopper") {
      authorise(payment, payment.challenge!.answer === "approve" ? { _tag: "Authorise" } : { _tag: "Refuse", code: "11" })
    }
    return { status: 200, body: resultView(payment) }
  }

  /** Checks a modification synchronously only for its form; whether it succeeds arrives by notification, as on Adyen. */
  const modify = (kind: FakeModification["kind"], paymentPsp: string, body: Json): Reply => {
    requireMerchant(body)
    const amount = kind === "cancel" ? null : amountOf(body["amount"])
    const reference = str(body["reference"]) ?? ""
    const payment = payments.get(paymentPsp)
    const decide = (): string | undefined => {
      if (payment === undefined) return "Original pspReference is invalid for this environment"
      if (amount !== null && amount.currency !== payment.amount.currency) return "Currency mismatch"
      switch (kind) {
        case "capture":
          if (payment.status !== "Authorised") return `Payment is ${payment.status}`
          if (payment.captured > 0 && !multipleCaptures) return "Multiple partial captures are not enabled"
          if (amount!.value > payment.amount.value - payment.captured) return "Insufficient balance on payment"
          payment.captured += amount!.value
          payment.captures++
          return undefined
        case "cancel":
          if (payment.status !== "Authorised" || payment.captured > 0) return `Payment cannot be cancelled (${payment.status}, ${payment.captured} captured)`
          payment.status = "Cancelled"
          return undefined
        case "refund":
          if (amount!.value > payment.captured - payment.refunded) return "Insufficient balance on payment"
          payment.refunded += amount!.value
          return undefined
      }
    }
    const failure = decide()
    const modification: FakeModification = {
      pspReference: pspReference(),
      kind,
      paymentPspReference: paymentPsp,
      reference,
      amount,
      success: failure === undefined,
      reason: failure ?? ""
    }
    modifications.push(modification)
    notify({
      pspReference: modification.pspReference,
      originalReference: paymentPsp,
      merchantReference: payment?.merchantReference ?? reference,
      amount: amount ?? payment?.amount ?? { value: 0, currency: "EUR" },
      eventCode: kind === "capture" ? "CAPTURE" : kind === "cancel" ? "CANCELLATION" : "REFUND",
      success: failure === undefined ? "true" : "false",
      reason: failure ?? ""
    })
    return {
      status: 201,
      body: {
        merchantAccount,
        paymentPspReference: paymentPsp,
        pspReference: modification.pspReference,
        reference,
        status: "received",
        ...(amount === null ? {} : { amount })
      }
    }
  }

  const cardDetails = (body: Json): Reply => {
    requireMerchant(body)
    const number = str(body["cardNumber"])?.replace(/\s+/g, "")
    if (number === undefined || !/^\d{6,19}$/.test(number)) throw validation("100", "Required field 'cardNumber' is not provided.")
    const country = ISSUING_COUNTRIES[number.slice(0, 6)]
    const brand = CardRules.detectBrand(number)
    return { status: 200, body: { brands: brand === "unknown" ? [] : [{ type: brand, supported: true }], ...(country === undefined ? {} : { issuingCountryCode: country }) } }
  }

  // ---- the 3-D Secure challenge page (stands in for the issuer's ACS) ----

  const challengePage = (payment: FakePayment) =>
    `<!doctype html><html><head><title>3-D Secure 2 test</title></head><body>` +
    `<h1>Adyen 3-D Secure 2 test page</h1><p>Amount: ${payment.amount.value} ${payment.amount.currency}</p>` +
    `<form method="post" action="/threeds/${payment.pspReference}"><input type="hidden" name="answer" value="approve"><button>Authenticate</button></form>` +
    `<form method="post" action="/threeds/${payment.pspReference}"><input type="hidden" name="answer" value="deny"><button>Cancel authentication</button></form>` +
    `</body></html>`

  // ---- HTTP ----

  const route = (method: string, path: string): { kind: CallKind; run: (body: Json) => Reply } | undefined => {
    if (method !== "POST") return undefined
    // The version prefix (/v71, /v72, or /checkout/vNN on live endpoints) does not change what the fake does.
    const rest = /^(?:\/checkout)?\/v\d+(\/.*)$/.exec(path)?.[1]
    if (rest === "/payments") return { kind: "payments", run: pay }
    if (rest === "/payments/details") return { kind: "details", run: details }
    if (rest === "/cardDetails") return { kind: "cardDetails", run: cardDetails }
    const modification = /^\/payments\/([^/]+)\/(captures|cancels|refunds)$/.exec(rest ?? "")
    if (modification === null) return undefined
    const kind = modification[2] as "captures" | "cancels" | "refunds"
    const target = decodeURIComponent(modification[1]!)
    return { kind, run: (body) => modify(kind === "captures" ? "capture" : kind === "cancels" ? "cancel" : "refund", target, body) }
  }

  const send = (res: http.ServerResponse, reply: Reply, headers: Record<string, string> = {}) => {
    res.writeHead(reply.status, { "content-type": "application/json", "pspreference": pspReference(), ...headers })
    res.end(JSON.stringify(reply.body))
  }
  const error = (failure: AdyenHttpError): Reply => ({
    status: failure.status,
    body: { status: failure.status, errorCode: failure.errorCode, message: failure.message, errorType: failure.errorType }
  })

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? "/", base)
    const method = req.method ?? "GET"
    const raw = await readBody(req)
    const challenge = /^\/threeds\/([0-9A-F]{16})$/.exec(url.pathname)
    if (challenge !== null) {
      const payment = payments.get(challenge[1]!)
      if (payment?.challenge == null) return void res.writeHead(404).end("No such payment")
      if (method === "GET") return void res.writeHead(200, { "content-type": "text/html" }).end(challengePage(payment))
      if (payment.status !== "RedirectShopper") return void res.writeHead(409).end("This payment awaits no authentication")
      payment.challenge.answer = new URLSearchParams(raw).get("answer") === "approve" ? "approve" : "deny"
      payment.challenge.redirectResult = randomBytes(24).toString("base64url")
      const back = new URL(payment.challenge.returnUrl)
      back.searchParams.set("redirectResult", payment.challenge.redirectResult)
      return void res.writeHead(302, { location: back.toString() }).end()
    }
    if (req.headers["x-api-key"] !== apiKey) {
      return send(res, error(new AdyenHttpError(401, "000", "HTTP Status Response - Unauthorized", "security")))
    }
    const target = route(method, url.pathname)
    if (target === undefined) return send(res, error(new AdyenHttpError(404, "000", `No such endpoint: ${method} ${url.pathname}`, "validation")))
    const key = req.headers["idempotency-key"] as string | undefined
    const keyHeader: Record<string, string> = key === undefined ? {} : { "idempotency-key": key }
    const fault = faults.take(target.kind)
    const answer = (reply: Reply) => answerUnless(fault, req, () => send(res, reply, keyHeader))
    // Company-account-wide keys: the first response comes back for any request with the key.
    const saved = key === undefined ? undefined : idempotency.get(key)
    if (saved !== undefined) return answer(saved)
    if (fault === "5xx") return send(res, error(new AdyenHttpError(500, "000", "An unexpected error occurred", "internal")), keyHeader)
    let body: Json
    try {
      body = obj(JSON.parse(raw)) ?? {}
    } catch {
      return send(res, error(new AdyenHttpError(400, "702", "Structure of the request is invalid (not JSON)", "validation")), keyHeader)
    }
    let reply: Reply
    try {
      reply = target.run(body)
    } catch (failure) {
      if (!(failure instanceof AdyenHttpError)) throw failure
      // Refused before processing: nothing is kept under the key.
      return answer(error(failure))
    }
    if (key !== undefined) idempotency.set(key, reply)
    answer(reply)
  }

  const listener = await serveLocal(https.createServer({ key: tls.key, cert: tls.cert }), "https", handle, (res, failure) =>
    send(res, { status: 500, body: { status: 500, errorCode: "000", message: String(failure), errorType: "internal" } }))
  base = listener.url

  return {
    ...controls(faults, listener, sent),
    /** The Checkout API base URL the client is pointed at, and the certificate it must trust. */
    endpoint: `${base}/v72`,
    caCertificate: tls.cert,
    apiKey,
    merchantAccount,
    /** The payments the fake holds, oldest first (what a test counts). */
    payments: () => [...payments.values()].map((payment) => ({ ...payment })),
    modifications: () => [...modifications],
    /** Every notification item emitted so far, oldest first, as signed. */
    notifications: () => [...notifications]
  }
}

export type AdyenFake = Awaited<ReturnType<typeof start>>
