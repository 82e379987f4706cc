import { describe, expect, it, layer, type Vitest } from "@effect/vitest"
import { type CardDetails, Errors, type FaultPoints, Faults, PaymentProvider, UnitOfWork } from "@tender/domain"
import type { LocalPaymentRequest } from "@tender/domain"
import { Cause, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as LocalDocuments from "../src/providers/sandbox/LocalDocuments.ts"
import * as PaymentProviderSandbox from "../src/providers/sandbox/PaymentProviderSandbox.ts"
import { SandboxLedger } from "../src/providers/sandbox/SandboxLedger.ts"
import * as SandboxLedgerMemory from "../src/providers/sandbox/SandboxLedgerMemory.ts"
import * as SandboxLedgerPg from "../src/providers/sandbox/SandboxLedgerPg.ts"
import * as SandboxOutage from "../src/providers/sandbox/SandboxOutage.ts"
import { configFromEnv } from "../src/Config.ts"
import * as PgDatabase from "../src/storage/postgres/PgDatabase.ts"
import * as UnitOfWorkPg from "../src/storage/postgres/UnitOfWorkPg.ts"
import { sharedConfig } from "./PgTestDatabase.ts"

const PUBLIC_URL = "https://tender.test"
const ledger = SandboxLedgerMemory.make()
const provider = PaymentProviderSandbox.make({ publicUrl: PUBLIC_URL }, ledger)
/** Another server process: it shares nothing with `provider` but the ids it is handed and the provider's own ledger. */
const otherProcess = PaymentProviderSandbox.make({ publicUrl: PUBLIC_URL }, ledger)

let keys = 0
/** A key never used before: most calls here are first calls. */
const newKey = () => `key_${++keys}`

const card = (number: string): CardDetails => ({ number, exp_month: 12, exp_year: 2030, cvc: "123" })

const authorize = (number: string, options: { capture?: boolean; authenticated?: boolean; reference?: string } = {}) =>
  provider.authorizeCard({
    reference: options.reference ?? "txn_auth",
    idempotency_key: newKey(),
    card: card(number),
    amount: 1000,
    currency: "USD",
    capture: options.capture ?? false,
    authenticated: options.authenticated ?? false
  })

const capture = (authorization: string, previousCaptures = 0, reference = `txn_cap_${previousCaptures}`) =>
  provider.captureCard({ reference, idempotency_key: newKey(), authorization, amount: 500, currency: "USD", final: false, previousCaptures })

const approvedId = Effect.fnUntraced(function*(number: string) {
  const result = yield* authorize(number)
  if (result._tag !== "Approved") throw new Error(`expected an approval, got ${result._tag}`)
  return result.provider_transaction_id
})

const isDefect = <A, E>(exit: Exit.Exit<A, E>) => Exit.isFailure(exit) && Cause.hasDies(exit.cause)

describe("PaymentProviderSandbox cards", () => {
  it.effect("is the PaymentProvider named sandbox, serving test mode only", () =>
    Effect.gen(function*() {
      const fromLayer = yield* PaymentProvider
      expect(fromLayer.name).toBe("sandbox")
      expect(fromLayer.mode).toBe("test")
    }).pipe(Effect.provide(PaymentProviderSandbox.layer({ publicUrl: PUBLIC_URL }).pipe(Layer.provide(SandboxLedgerMemory.layer)))))

  it.effect.each(["4242424242424242", "5555555555554444", "378282246310005", "4000056655665556", "4111111111111111"])(
    "approves %s with multicapture granted",
    (number) =>
      Effect.gen(function*() {
        const result = yield* authorize(number)
        expect(result).toMatchObject({ _tag: "Approved", multicapture: true })
        const id = yield* approvedId(number)
        expect(yield* capture(id, 0)).toMatchObject({ _tag: "Settled" })
        expect(yield* capture(id, 1)).toMatchObject({ _tag: "Settled" })
        expect(yield* capture(id, 3)).toMatchObject({ _tag: "Settled" })
      })
  )

  it.effect("approves 4000000000000044 without multicapture: the second capture is refused", () =>
    Effect.gen(function*() {
      expect(yield* authorize("4000000000000044")).toMatchObject({ _tag: "Approved", multicapture: false })
      const id = yield* approvedId("4000000000000044")
      expect(yield* capture(id, 0)).toMatchObject({ _tag: "Settled" })
      expect(yield* capture(id, 1)).toEqual({ _tag: "Refused", decline_code: "multicapture_not_supported" })
      // Another process reads the missing grant from the id alone.
      const elsewhere = yield* otherProcess.captureCard({
        reference: "txn_cap_other",
        idempotency_key: newKey(),
        authorization: id,
        amount: 100,
        currency: "USD",
        final: true,
        previousCaptures: 2
      })
      expect(elsewhere).toEqual({ _tag: "Refused", decline_code: "multicapture_not_supported" })
    }))

  it.effect.each([
    ["4000000000000002", "card_declined"],
    ["4000000000009995", "insufficient_funds"],
    ["4000000000000069", "expired_card"],
    ["4242424242424241", "invalid_number"]
  ])("declines %s with %s, manual or automatic", ([number, code]) =>
    Effect.gen(function*() {
      for (const captureNow of [false, true]) {
        const result = yield* authorize(number, { capture: captureNow })
        expect(result).toMatchObject({ _tag: "Declined", decline_code: code })
        expect(result._tag === "Declined" && result.provider_transaction_id).toMatch(/^sbx_dec_/)
      }
    }))

  it.effect("asks 4000000000003220 for a 3-D Secure challenge until it is passed", () =>
    Effect.gen(function*() {
      const challenged = yield* authorize("4000000000003220", { reference: "txn_3ds" })
      expect(challenged).toMatchObject({ _tag: "ChallengeRequired", challenge_url: `${PUBLIC_URL}/sandbox/3ds/txn_3ds` })
      expect(challenged.provider_transaction_id).toMatch(/^sbx_3ds_/)
      expect(yield* authorize("4000000000003220", { reference: "txn_3ds", authenticated: true }))
        .toMatchObject({ _tag: "Approved", multicapture: true })
      expect(yield* authorize("4000000000003220", { reference: "txn_3ds", authenticated: true, capture: true }))
        .toMatchObject({ _tag: "Approved" })
    }))

  it.effect("approves 4000000000000259 but refuses every capture; a sale on it fails", () =>
    Effect.gen(function*() {
      const id = yield* approvedId("4000000000000259")
      for (const previous of [0, 1]) {
        expect(yield* capture(id, previous)).toEqual({ _tag: "Refused", decline_code: "capture_refused" })
      }
      expect(yield* otherProcess.captureCard({ reference: "r", idempotency_key: newKey(), authorization: id, amount: 1, currency: "USD", final: true, previousCaptures: 0 }))
        .toEqual({ _tag: "Refused", decline_code: "capture_refused" })
      expect(yield* authorize("4000000000000259", { capture: true })).toMatchObject({ _tag: "Declined", decline_code: "capture_refused" })
    }))

  it.effect("settles captures of 4000000000000341 two seconds after they were accepted, in any process", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 0, 15, 12))
      const id = yield* approvedId("4000000000000341")
      yield* TestClock.adjust(10_000)
      const accepted = yield* capture(id, 0)
      expect(accepted._tag).toBe("Settling")
      const captureId = accepted._tag === "Settling" ? accepted.provider_transaction_id : ""
      expect(yield* provider.settlement(captureId)).toBe("pending")
      yield* TestClock.adjust(1_999)
      expect(yield* provider.settlement(captureId)).toBe("pending")
      expect(yield* otherProcess.settlement(captureId)).toBe("pending")
      yield* TestClock.adjust(1)
      expect(yield* provider.settlement(captureId)).toBe("settled")
      expect(yield* otherProcess.settlement(captureId)).toBe("settled")
    }))

  it.effect("settles an automatic capture of 4000000000000341 at once", () =>
    Effect.gen(function*() {
      const sale = yield* authorize("4000000000000341", { capture: true })
      expect(sale).toMatchObject({ _tag: "Approved" })
      expect(sale.provider_transaction_id).toMatch(/^sbx_pay_/)
    }))

  it.effect("reports captures that settled at once as settled", () =>
    Effect.gen(function*() {
      const settled = yield* capture(yield* approvedId("4242424242424242"))
      expect(settled._tag).toBe("Settled")
      expect(yield* provider.settlement(settled._tag === "Settled" ? settled.provider_transaction_id : "")).toBe("settled")
      expect(isDefect(yield* Effect.exit(provider.settlement("ch_not_ours")))).toBe(true)
    }))

  it.effect("fails 4000000000000119 with ProviderUnavailable", () =>
    Effect.gen(function*() {
      for (const captureNow of [false, true]) {
        const error = yield* Effect.flip(authorize("4000000000000119", { capture: captureNow }))
        expect(error).toBeInstanceOf(Errors.ProviderUnavailable)
        expect(error.code).toBe("provider_unavailable")
        expect(error.message).toBe("The card authorization service is unreachable")
        expect(error.message).not.toContain("4000000000000119")
      }
    }))

  it.effect("voids an authorization; refuses to capture or void an id it never issued", () =>
    Effect.gen(function*() {
      const id = yield* approvedId("4242424242424242")
      const voided = yield* provider.voidCard({ reference: "txn_void", idempotency_key: newKey(), authorization: id, amount: 1000 })
      expect(voided).toMatchObject({ _tag: "Voided" })
      expect(voided._tag === "Voided" && voided.provider_transaction_id).toMatch(/^sbx_void_/)
      const declined = yield* authorize("4000000000000002")
      for (const foreign of ["ch_123", declined._tag === "Declined" ? declined.provider_transaction_id ?? "" : ""]) {
        expect(yield* capture(foreign)).toEqual({ _tag: "Refused", decline_code: "authorization_not_found" })
        expect(yield* provider.voidCard({ reference: "txn_void", idempotency_key: newKey(), authorization: foreign, amount: 1 }))
          .toEqual({ _tag: "Refused", decline_code: "authorization_not_found" })
      }
    }))

  it.effect("derives ids from the reference alone, so any process can follow up on them", () =>
    Effect.gen(function*() {
      const request = {
        reference: "txn_same",
        card: card("4242424242424242"),
        amount: 1000,
        currency: "USD",
        capture: false,
        authenticated: false
      }
      const first = yield* provider.authorizeCard({ ...request, idempotency_key: newKey() })
      expect(yield* otherProcess.authorizeCard({ ...request, idempotency_key: newKey() })).toEqual(first)
      expect((yield* provider.authorizeCard({ ...request, reference: "txn_other", idempotency_key: newKey() })).provider_transaction_id)
        .not.toBe(first.provider_transaction_id)
      const start = { ...localRequest("boleto", "BRL", 1050), reference: "txn_lpm_same" }
      expect(yield* otherProcess.startPayment({ ...start, idempotency_key: newKey() }))
        .toEqual(yield* provider.startPayment({ ...start, idempotency_key: newKey() }))
    }))

  it.effect("never puts the card number in an id", () =>
    Effect.gen(function*() {
      for (const number of ["4242424242424242", "4000000000000002", "4000000000003220"]) {
        expect((yield* authorize(number)).provider_transaction_id).not.toContain(number)
      }
    }))
})

const localRequest = (method: string, currency: string, amount: number, reference = "txn_local"): LocalPaymentRequest => ({
  reference,
  idempotency_key: newKey(),
  method,
  amount,
  currency,
  country: "BR",
  document_id: "12345678909",
  customer_ip: "203.0.113.7"
})

const NOW = Date.UTC(2026, 2, 1, 9, 30)
const at = (offsetMs: number) => new Date(NOW + offsetMs).toISOString()
const THIRTY_MINUTES = 30 * 60 * 1000
const THREE_DAYS = 3 * 24 * 60 * 60 * 1000

const start = (method: string, currency: string, amount: number, reference?: string) =>
  Effect.andThen(TestClock.setTime(NOW), provider.startPayment(localRequest(method, currency, amount, reference)))

/** CLABE check digit, written out independently of the implementation: weights 3, 7, 1 mod 10. */
const clabeValid = (clabe: string) => {
  const sum = [...clabe.slice(0, 17)].reduce((acc, d, i) => acc + ((Number(d) * [3, 7, 1][i % 3]) % 10), 0)
  return /^\d{18}$/.test(clabe) && (10 - (sum % 10)) % 10 === Number(clabe[17])
}

/** Checks a boleto line's three field digits and the general digit of the barcode it encodes. */
const boletoValid = (line: string) => {
  const fields = [line.slice(0, 10), line.slice(10, 21), line.slice(21, 32)]
  const barcodeWithoutDv = line.slice(0, 4) + line.slice(33) + line.slice(4, 9) + line.slice(10, 20) + line.slice(21, 31)
  return /^\d{47}$/.test(line) &&
    fields.every((f) => LocalDocuments.mod10(f.slice(0, -1)) === Number(f.slice(-1))) &&
    LocalDocuments.mod11(barcodeWithoutDv) === Number(line[32])
}

describe("PaymentProviderSandbox local methods", () => {
  it.effect.each(["paypal", "ideal", "pse"])("%s redirects to the hosted sandbox page", (method) =>
    Effect.gen(function*() {
      const started = yield* start(method, "EUR", 1000)
      expect(started.provider_transaction_id).toMatch(/^sbx_lpm_/)
      expect(started.next_action).toEqual({ type: "redirect", redirect_url: `${PUBLIC_URL}/sandbox/redirect/txn_local` })
    }))

  it.effect("pix shows a BR Code with the amount, its image and the hosted page, for 30 minutes", () =>
    Effect.gen(function*() {
      const { next_action } = yield* start("pix", "BRL", 1050)
      const page = `${PUBLIC_URL}/sandbox/redirect/txn_local`
      expect(next_action).toMatchObject({
        type: "qr",
        redirect_url: page,
        expires_at: at(THIRTY_MINUTES),
        qr: { image_url: `${PUBLIC_URL}/sandbox/qr/txn_local.svg`, redirect_url: page }
      })
      const data = next_action.qr?.data ?? ""
      expect(data.startsWith("000201")).toBe(true)
      expect(data).toContain("br.gov.bcb.pix")
      expect(data).toContain("540510.50")
      expect(data).toContain("5303986")
      expect(data).toContain("txnlocal")
      expect(data.slice(-8, -4)).toBe("6304")
      expect(LocalDocuments.crc16Ccitt(data.slice(0, -4))).toBe(data.slice(-4))
    }))

  it.effect("mach offers an app deep link and a web page", () =>
    Effect.gen(function*() {
      const { next_action } = yield* start("mach", "CLP", 15000)
      expect(next_action).toEqual({
        type: "qr",
        qr: {
          deep_links: [
            { label: expect.any(String), url: "mach://sandbox/pay/txn_local", target: "app" },
            { label: expect.any(String), url: `${PUBLIC_URL}/sandbox/redirect/txn_local`, target: "web" }
          ]
        }
      })
    }))

  it.effect("boleto gives a 47-digit line with valid check digits and the amount, for 3 days", () =>
    Effect.gen(function*() {
      const { next_action } = yield* start("boleto", "BRL", 123456)
      const document = `${PUBLIC_URL}/sandbox/voucher/txn_local`
      expect(next_action).toMatchObject({ type: "voucher", redirect_url: document, expires_at: at(THREE_DAYS), voucher: { document_url: document } })
      const barcode = next_action.voucher?.barcode ?? ""
      expect(boletoValid(barcode)).toBe(true)
      expect(barcode.slice(-10)).toBe("0000123456")
      expect(barcode.slice(33, 37)).toBe(LocalDocuments.dueDateFactor(NOW + THREE_DAYS))
    }))

  it.effect("oxxo gives a 14-digit reference, for 3 days", () =>
    Effect.gen(function*() {
      const { next_action } = yield* start("oxxo", "MXN", 25000)
      const document = `${PUBLIC_URL}/sandbox/voucher/txn_local`
      expect(next_action).toMatchObject({ type: "voucher", redirect_url: document, expires_at: at(THREE_DAYS), voucher: { document_url: document } })
      expect(next_action.voucher?.reference).toMatch(/^\d{14}$/)
    }))

  it.effect("spei gives a CLABE with a valid check digit, for 3 days", () =>
    Effect.gen(function*() {
      for (const reference of ["txn_a", "txn_b", "txn_c", "txn_d"]) {
        const { next_action } = yield* start("spei", "MXN", 25000, reference)
        expect(next_action).toMatchObject({ type: "bank_transfer", expires_at: at(THREE_DAYS) })
        const transfer = next_action.bank_transfer
        expect(clabeValid(transfer?.clabe ?? "")).toBe(true)
        expect(transfer?.clabe.startsWith("646")).toBe(true)
        expect(transfer?.bank_name).not.toBe("")
        expect(transfer?.beneficiary).not.toBe("")
        expect(transfer?.reference).toMatch(/^\d+$/)
      }
    }))

  it.effect("crypto gives a bitcoin URI with a testnet address and the amount in coin at the sandbox price", () =>
    Effect.gen(function*() {
      const { next_action } = yield* start("crypto", "USD", 10000)
      const qr = next_action.qr
      expect(next_action.type).toBe("qr")
      expect(qr?.amount).toBe("0.00166667")
      expect(qr?.address).toMatch(/^tb1q[02-9ac-hj-np-z]{38}$/)
      expect(LocalDocuments.bech32Verify(qr?.address ?? "")).toBe(true)
      expect(qr?.data).toBe(`bitcoin:${qr?.address}?amount=0.00166667`)
      expect(qr?.image_url).toBe(`${PUBLIC_URL}/sandbox/qr/txn_local.svg`)
      expect((yield* start("crypto", "EUR", 5500)).next_action.qr?.amount).toBe("0.00100000")
    }))

  it.effect("escapes the reference in URLs and ignores a trailing slash on the public URL", () =>
    Effect.gen(function*() {
      const slashed = PaymentProviderSandbox.make({ publicUrl: `${PUBLIC_URL}/` }, ledger)
      const { next_action } = yield* slashed.startPayment(localRequest("paypal", "USD", 100, "txn/../x"))
      expect(next_action.redirect_url).toBe(`${PUBLIC_URL}/sandbox/redirect/txn%2F..%2Fx`)
    }))

  it.effect("treats a method it cannot start as a defect", () =>
    Effect.gen(function*() {
      expect(isDefect(yield* Effect.exit(start("card", "USD", 100)))).toBe(true)
    }))
})

describe("LocalDocuments", () => {
  it("computes the published check values", () => {
    expect(LocalDocuments.crc16Ccitt("123456789")).toBe("29B1")
    expect(LocalDocuments.bech32Verify("tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx")).toBe(true)
    expect(LocalDocuments.bech32Verify("tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsy")).toBe(false)
    expect(LocalDocuments.clabeCheckDigit("03218000011835971")).toBe(9)
    expect(boletoValid("00190500954014481606906809350314337370000000100")).toBe(true)
    // Day 10000 after 1997-10-07 wrapped the factor back to 1000.
    expect(LocalDocuments.dueDateFactor(Date.UTC(2025, 1, 21))).toBe("9999")
    expect(LocalDocuments.dueDateFactor(Date.UTC(2025, 1, 22))).toBe("1000")
  })

  it("derives digits deterministically and differently per seed", () => {
    expect(LocalDocuments.digitsOf("a", 40)).toMatch(/^\d{40}$/)
    expect(LocalDocuments.digitsOf("a", 40)).toBe(LocalDocuments.digitsOf("a", 40))
    expect(LocalDocuments.digitsOf("a", 20)).not.toBe(LocalDocuments.digitsOf("b", 20))
  })

  it("rounds coin amounts up to the satoshi", () => {
    expect(LocalDocuments.coinAmount(1, 6_000_000)).toBe("0.00000017")
    expect(LocalDocuments.coinAmount(6_000_000, 6_000_000)).toBe("1.00000000")
  })
})

// --- the ledger: what the sandbox applied, per idempotency key --------------------------------

/** A sandbox over the ledger in context. */
const sandboxOverLedger = Effect.map(Effect.service(SandboxLedger), (ledger) => ({ sandbox: PaymentProviderSandbox.make({ publicUrl: PUBLIC_URL }, ledger) }))

/** Runs `effect` with fault points that only record where they were reached. */
const recordingPoints = <A, E, R>(effect: (points: ReadonlyArray<string>) => Effect.Effect<A, E, R>) => {
  const points: Array<string> = []
  const recorder: FaultPoints = { at: (point) => Effect.sync(() => void points.push(point)) }
  return Effect.provideService(effect(points), Faults, recorder)
}

/** Fresh per test run: the PostgreSQL ledger is shared by every run on the database. */
const runKey = (name: string) => `${name}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2)}`

const authorization = (key: string, number = "4242424242424242") => ({
  reference: `txn_${key}`,
  idempotency_key: key,
  card: card(number),
  amount: 1000,
  currency: "USD",
  capture: false,
  authenticated: false
})

const ledgerContract = (it: Vitest.MethodsNonLive<SandboxLedger>) => {
  it.effect("replays the first answer to a key, even when the retry would be decided otherwise", () =>
    Effect.gen(function*() {
      const { sandbox } = yield* sandboxOverLedger
      const { sandbox: elsewhere } = yield* sandboxOverLedger
      const key = runKey("auth")
      const first = yield* sandbox.authorizeCard(authorization(key))
      expect(first._tag).toBe("Approved")
      // A declining card under the same key still gets the approval: the key, not the request, decides.
      expect(yield* sandbox.authorizeCard(authorization(key, "4000000000000002"))).toEqual(first)
      expect(yield* elsewhere.authorizeCard(authorization(key))).toEqual(first)

      const auth = first._tag === "Approved" ? first.provider_transaction_id : ""
      const captureKey = runKey("cap")
      const captureRequest = { reference: "txn_cap", idempotency_key: captureKey, authorization: auth, amount: 500, currency: "USD", final: false, previousCaptures: 0 }
      const captured = yield* sandbox.captureCard(captureRequest)
      expect(captured._tag).toBe("Settled")
      // Would be refused as a second capture without multicapture bookkeeping; the replay ignores it.
      expect(yield* elsewhere.captureCard({ ...captureRequest, previousCaptures: 7, authorization: "ch_foreign" })).toEqual(captured)
    }))

  it.effect("looks up what it applied, for every kind of call", () =>
    Effect.gen(function*() {
      const { sandbox } = yield* sandboxOverLedger
      const keys = { authorize: runKey("a"), capture: runKey("c"), void: runKey("v"), start: runKey("s") }
      const authorized = yield* sandbox.authorizeCard(authorization(keys.authorize))
      const auth = authorized._tag === "Approved" ? authorized.provider_transaction_id : ""
      const captured = yield* sandbox.captureCard({ reference: "txn_c", idempotency_key: keys.capture, authorization: auth, amount: 100, currency: "USD", final: false, previousCaptures: 0 })
      const voided = yield* sandbox.voidCard({ reference: "txn_v", idempotency_key: keys.void, authorization: auth, amount: 900 })
      const started = yield* sandbox.startPayment({ ...localRequest("pix", "BRL", 1000, "txn_s"), idempotency_key: keys.start })
      expect(started._tag).toBe("Started")

      expect(yield* sandbox.lookup(keys.authorize)).toEqual({ _tag: "Authorize", result: authorized })
      expect(yield* sandbox.lookup(keys.capture)).toEqual({ _tag: "Capture", result: captured })
      expect(yield* sandbox.lookup(keys.void)).toEqual({ _tag: "Void", result: voided })
      expect(yield* sandbox.lookup(keys.start)).toEqual({ _tag: "Start", result: started })
    }))

  it.effect("answers NotReceived for an unused key and fences it: the call can never be applied afterwards", () =>
    Effect.gen(function*() {
      const { sandbox } = yield* sandboxOverLedger
      const key = runKey("fenced")
      expect(yield* sandbox.lookup(key)).toEqual({ _tag: "NotReceived" })
      yield* recordingPoints((points) =>
        Effect.gen(function*() {
          const late = yield* Effect.flip(sandbox.authorizeCard(authorization(key)))
          expect(late).toBeInstanceOf(Errors.ProviderUnavailable)
          // The call arrived but was not applied: no `applied` point.
          expect(points).toEqual(["provider.authorize.received"])
        }))
      expect(yield* sandbox.lookup(key)).toEqual({ _tag: "NotReceived" })
    }))

  it.effect("stores nothing for the unreachable card: a lookup finds the key unused", () =>
    Effect.gen(function*() {
      const { sandbox } = yield* sandboxOverLedger
      const key = runKey("unreachable")
      expect(yield* Effect.flip(sandbox.authorizeCard(authorization(key, "4000000000000119")))).toBeInstanceOf(Errors.ProviderUnavailable)
      expect(yield* sandbox.lookup(key)).toEqual({ _tag: "NotReceived" })
    }))

  it.effect("a simulated outage (TENDER_SANDBOX_UNREACHABLE=payout): payouts fail as unreachable before they arrive, storing nothing; other calls go through", () =>
    Effect.gen(function*() {
      const { sandbox } = yield* sandboxOverLedger
      const key = runKey("outage")
      const payout = { reference: "txn_po", idempotency_key: key, method: "bank_transfer", destination: { id: "pi_x", type: "bank_account" as const, account_number: "000123456789" }, card: undefined, amount: 1000, currency: "USD", country: "US" }
      const outage = SandboxOutage.layer(configFromEnv({ storage: "memory" }, { TENDER_SANDBOX_UNREACHABLE: "payout" }).sandboxUnreachable)
      yield* recordingPoints((points) =>
        Effect.gen(function*() {
          expect(yield* Effect.flip(Effect.provide(sandbox.payout(payout), outage))).toBeInstanceOf(Errors.ProviderUnavailable)
          expect((yield* Effect.provide(sandbox.authorizeCard(authorization(runKey("outage-auth"))), outage))._tag).toBe("Approved")
          // The refused payout never reached the provider.
          expect(points).toEqual(["provider.authorize.received", "provider.authorize.applied"])
        }))
      // Nothing was kept under its key: the same call once the outage ends is applied.
      expect(yield* sandbox.payout(payout)).toMatchObject({ _tag: "Paid" })
    }))

  it.effect("passes the received and applied points of each call, applied only once the answer is kept", () =>
    Effect.gen(function*() {
      const { sandbox } = yield* sandboxOverLedger
      yield* recordingPoints((points) =>
        Effect.gen(function*() {
          const authorized = yield* sandbox.authorizeCard(authorization(runKey("points")))
          const auth = authorized._tag === "Approved" ? authorized.provider_transaction_id : ""
          yield* sandbox.voidCard({ reference: "txn_pv", idempotency_key: runKey("pv"), authorization: auth, amount: 1000 })
          expect(points).toEqual(["provider.authorize.received", "provider.authorize.applied", "provider.void.received", "provider.void.applied"])
        }))
    }))

  it.effect("treats a key reused for another operation as a defect", () =>
    Effect.gen(function*() {
      const { sandbox } = yield* sandboxOverLedger
      const key = runKey("reused")
      const authorized = yield* sandbox.authorizeCard(authorization(key))
      const auth = authorized._tag === "Approved" ? authorized.provider_transaction_id : ""
      const exit = yield* Effect.exit(sandbox.voidCard({ reference: "txn_r", idempotency_key: key, authorization: auth, amount: 1000 }))
      expect(isDefect(exit)).toBe(true)
    }))
}

layer(SandboxLedgerMemory.layer, { excludeTestServices: true })("SandboxLedgerMemory", (it) => {
  ledgerContract(it)
})

const pgLedger = SandboxLedgerPg.layer.pipe(
  Layer.provideMerge(UnitOfWorkPg.layer),
  Layer.provideMerge(Layer.unwrap(Effect.map(sharedConfig, PgDatabase.layer)))
)

layer(pgLedger, { excludeTestServices: true, timeout: "2 minutes" })("SandboxLedgerPg", (it) => {
  ledgerContract(it)

  it.effect("applies one call per key when processes race it: one answer, one row", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // Separate sandboxes stand for separate Tender processes; the pool gives each call its own connection.
      const sandboxes = yield* Effect.all(Array.from({ length: 8 }, () => sandboxOverLedger))
      const key = runKey("race")
      // Half approve, half decline if decided afresh: a double application would show as two answers.
      const answers = yield* Effect.all(
        sandboxes.map(({ sandbox }, i) => sandbox.authorizeCard(authorization(key, i % 2 === 0 ? "4242424242424242" : "4000000000000002"))),
        { concurrency: "unbounded" }
      )
      expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1)
      const rows = yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM sandbox_ledger WHERE idempotency_key = ${key}`
      expect(rows[0]!.n).toBe("1")
      expect(yield* sandboxes[0]!.sandbox.lookup(key)).toEqual({ _tag: "Authorize", result: answers[0] })
    }))

  it.effect("a call racing a lookup either is applied and found, or is fenced and refused", () =>
    Effect.gen(function*() {
      const { sandbox } = yield* sandboxOverLedger
      for (let round = 0; round < 10; round++) {
        const key = runKey(`fence_race_${round}`)
        const [call, lookup] = yield* Effect.all([
          Effect.exit(sandbox.authorizeCard(authorization(key))),
          sandbox.lookup(key)
        ], { concurrency: 2 })
        if (lookup._tag === "NotReceived") expect(Exit.isFailure(call)).toBe(true)
        else expect(call).toEqual(Exit.succeed(lookup._tag === "Authorize" ? lookup.result : undefined))
      }
    }))

  it.effect("commits its row at once, even when Tender's unit of work around the call rolls back", () =>
    Effect.gen(function*() {
      const { sandbox } = yield* sandboxOverLedger
      const uow = yield* UnitOfWork
      const key = runKey("uow")
      const exit = yield* Effect.exit(uow.transaction(Effect.andThen(sandbox.authorizeCard(authorization(key)), Effect.fail("rollback"))))
      expect(Exit.isFailure(exit)).toBe(true)
      expect((yield* sandbox.lookup(key))._tag).toBe("Authorize")
    }))
})

describe("TENDER_SANDBOX_UNREACHABLE", () => {
  it.effect("unset or empty: no outage (the default); an unknown operation fails the layer", () =>
    Effect.gen(function*() {
      for (const value of [undefined, "", " , "]) {
        const outage = yield* Effect.provide(Effect.service(SandboxOutage.SandboxOutage), SandboxOutage.layer(configFromEnv({ storage: "memory" }, { TENDER_SANDBOX_UNREACHABLE: value }).sandboxUnreachable))
        expect(outage).toBe(yield* SandboxOutage.SandboxOutage)
      }
      const named = yield* Effect.provide(Effect.service(SandboxOutage.SandboxOutage), SandboxOutage.layer(["refund", "payout"]))
      expect([named.unreachable("refund"), named.unreachable("payout"), named.unreachable("authorize")]).toEqual([true, true, false])
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(SandboxOutage.layer(["payouts"]))))
      expect(Exit.isFailure(exit)).toBe(true)
    }))
})
