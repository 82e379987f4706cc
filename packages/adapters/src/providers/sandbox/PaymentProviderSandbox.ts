/**
 * The built-in sandbox provider (contract.md, "Sandbox (test mode) provider"): a deterministic
 * simulator. Card outcomes are decided by the card number; local methods answer with hosted sandbox
 * pages under `publicUrl`. What a follow-up call needs travels inside the ids it returns (see
 * SandboxIds.ts), and every id and document derives from our reference.
 *
 * Like a real provider it keeps a log of what it applied (SandboxLedger), keyed by the call's
 * idempotency key: a retry gets the first answer back, and `lookup` tells what became of a call
 * whose answer Tender lost. A key `lookup` found unused is fenced, so a late copy of that call can
 * never be applied after Tender was told it was not.
 */
import { Card, Errors, Faults, Money, type Payment, PaymentProvider } from "@tender/domain"
import type { AuthorizeResult, BinFacts, CaptureResult, LocalPaymentRequest, LookupResult, PayoutResult, StartResult, VoidResult } from "@tender/domain"
import { Clock, DateTime, Effect, Layer } from "effect"
import * as LocalDocuments from "./LocalDocuments.ts"
import { type Applied, FENCED, type Operation, type Results, SandboxLedger } from "./SandboxLedger.ts"
import { SandboxOutage } from "./SandboxOutage.ts"
import { type SandboxUrls, sandboxUrls } from "./SandboxPaths.ts"
import * as SandboxIds from "./SandboxIds.ts"

export interface SandboxOptions {
  /** The server's public origin, e.g. `https://pay.example.com`; hosted sandbox pages live under it. */
  readonly publicUrl: string
  /**
   * Simulated network latency of every call, in milliseconds (default 0). Real providers answer in
   * tens to hundreds of milliseconds; benchmarks and race tests use this to keep calls in flight.
   */
  readonly latencyMs?: number | undefined
}

interface Approval {
  readonly _tag: "Approve"
  readonly multicapture: boolean
  readonly captures: "settle" | "settle_later" | "refused"
}

type Behaviour =
  | Approval
  | { readonly _tag: "Decline"; readonly code: string }
  | { readonly _tag: "Challenge" }
  | { readonly _tag: "Unreachable" }

const APPROVE: Approval = { _tag: "Approve", multicapture: true, captures: "settle" }
const decline = (code: string): Behaviour => ({ _tag: "Decline", code })

/** contract.md's card table, number for number (Card.TEST_CARDS: the compiler holds them together). */
const CARDS: Readonly<Record<Card.TestCard, Behaviour>> = {
  "4242424242424242": APPROVE,
  "5555555555554444": APPROVE,
  "378282246310005": APPROVE,
  "4000056655665556": APPROVE,
  "4000000000000044": { _tag: "Approve", multicapture: false, captures: "settle" },
  "4000000000000002": decline("card_declined"),
  "4000000000009995": decline("insufficient_funds"),
  "4000000000000069": decline("expired_card"),
  "4000000000003220": { _tag: "Challenge" },
  "4000000000000259": { _tag: "Approve", multicapture: true, captures: "refused" },
  "4000000000000341": { _tag: "Approve", multicapture: true, captures: "settle_later" },
  "4000000000000119": { _tag: "Unreachable" }
}

// The vault refuses numbers failing Luhn; a number that slips through is declined as a real
// issuer would, rather than approved. Test mode takes the table's numbers only (CardTokens), and a
// card vaulted before that rule is refused where a payment, transfer or payout uses it
// (Cards.usableCard); one already on its way then (a challenge answered since) is approved like 4242….
const behaviourOf = (number: string): Behaviour =>
  Card.isTestCard(number) ? CARDS[number] : Card.luhnValid(number) ? APPROVE : decline("invalid_number")

/** How long a capture of the settle-later card stays `Settling`. */
export const SETTLE_AFTER_MS = 2_000

const PIX_EXPIRY_MS = 30 * 60 * 1000
const VOUCHER_EXPIRY_MS = 3 * 24 * 60 * 60 * 1000

/** Fixed sandbox prices of one bitcoin, in major units, so crypto amounts are reproducible. */
export const COIN_PRICES: Readonly<Record<string, number>> = { USD: 60_000, EUR: 55_000 }

const iso = (millis: number) => DateTime.formatIso(DateTime.makeUnsafe(millis))

interface StartContext {
  readonly request: LocalPaymentRequest
  readonly now: number
  readonly urls: SandboxUrls
}

const redirect = ({ request, urls }: StartContext): Payment.NextAction => ({
  type: "redirect",
  redirect_url: urls.redirect(request.reference)
})

const voucherDocument = ({ request, now, urls }: StartContext, fields: { barcode: string } | { reference: string }): Payment.NextAction => {
  const documentUrl = urls.voucher(request.reference)
  return {
    type: "voucher",
    redirect_url: documentUrl,
    expires_at: iso(now + VOUCHER_EXPIRY_MS),
    voucher: { document_url: documentUrl, ...fields }
  }
}

/** The next action each local method starts with (contract.md, Methods). */
const START: Readonly<Record<string, (context: StartContext) => Payment.NextAction>> = {
  paypal: redirect,
  ideal: redirect,
  pse: redirect,
  pix: ({ request, now, urls }) => {
    const page = urls.redirect(request.reference)
    return {
      type: "qr",
      redirect_url: page,
      expires_at: iso(now + PIX_EXPIRY_MS),
      qr: {
        data: LocalDocuments.pixCopyPaste({
          key: "pix@sandbox.tender.invalid",
          amount: Money.toDecimalString(request.amount, request.currency),
          merchantName: "TENDER SANDBOX",
          merchantCity: "SAO PAULO",
          txid: request.reference
        }),
        image_url: urls.qrImage(request.reference),
        redirect_url: page
      }
    }
  },
  mach: ({ request, urls }) => ({
    type: "qr",
    qr: {
      deep_links: [
        { label: "Pay with the MACH app", url: `mach://sandbox/pay/${encodeURIComponent(request.reference)}`, target: "app" },
        { label: "Pay in the browser", url: urls.redirect(request.reference), target: "web" }
      ]
    }
  }),
  boleto: (context) =>
    voucherDocument(context, {
      barcode: LocalDocuments.boletoLine({
        // Not a registered bank code, so the line can never be paid at a real bank.
        bank: "999",
        amount: context.request.amount,
        dueMillis: context.now + VOUCHER_EXPIRY_MS,
        freeField: LocalDocuments.digitsOf(`boleto:${context.request.reference}`, 25)
      })
    }),
  oxxo: (context) => voucherDocument(context, { reference: LocalDocuments.digitsOf(`oxxo:${context.request.reference}`, 14) }),
  spei: ({ request, now }) => ({
    type: "bank_transfer",
    expires_at: iso(now + VOUCHER_EXPIRY_MS),
    bank_transfer: {
      // 646 (STP) and plaza 180 are where SPEI collection accounts usually live.
      clabe: LocalDocuments.clabe("646", "180", LocalDocuments.digitsOf(`spei:${request.reference}`, 11)),
      bank_name: "STP (Tender sandbox)",
      reference: LocalDocuments.digitsOf(`spei-ref:${request.reference}`, 7),
      beneficiary: "Tender Sandbox"
    }
  }),
  crypto: ({ request, urls }) => {
    const price = COIN_PRICES[request.currency]
    if (price === undefined) throw new Error(`The sandbox has no coin price in ${request.currency}`)
    const address = LocalDocuments.testnetAddress(`crypto:${request.reference}`)
    const amount = LocalDocuments.coinAmount(request.amount, price * 10 ** Money.exponent(request.currency))
    return {
      type: "qr",
      qr: { data: `bitcoin:${address}?amount=${amount}`, address, amount, image_url: urls.qrImage(request.reference) }
    }
  }
}

const approve = (
  request: { readonly reference: string; readonly capture: boolean },
  behaviour: Approval
): AuthorizeResult => {
  if (!request.capture) {
    return {
      _tag: "Approved",
      provider_transaction_id: SandboxIds.make("auth", request.reference, {
        multicapture: behaviour.multicapture,
        capturesRefused: behaviour.captures === "refused",
        settlesLater: behaviour.captures === "settle_later"
      }),
      multicapture: behaviour.multicapture
    }
  }
  // Automatic capture is one call: a card that refuses every capture fails the whole charge,
  // and the settle-later card settles at once (only captures of manual authorizations settle
  // later, which keeps a sale's outcome final in its response).
  if (behaviour.captures === "refused") {
    return { _tag: "Declined", decline_code: "capture_refused", provider_transaction_id: SandboxIds.make("dec", request.reference) }
  }
  return {
    _tag: "Approved",
    provider_transaction_id: SandboxIds.make("pay", request.reference, { settlesLater: behaviour.captures === "settle_later" }),
    multicapture: behaviour.multicapture
  }
}

/** contract.md, Sandbox: a bank destination whose account number or IBAN ends in 0000 is not registered. */
const unregistered = (destination: Payment.PaymentInstrument) =>
  destination.type === "bank_account" &&
  [destination.account_number, destination.iban].some((n) => n !== undefined && n.replace(/\s/g, "").endsWith("0000"))

/** contract.md, Sandbox: a BIN 400000 card has no known issuer country; the sandbox's other cards are US-issued. */
const binFacts = (bin: string): BinFacts =>
  bin.startsWith("400000") ? {} : { country_code: "US", issuer_name: "tender sandbox bank" }

/** What a lookup reports for each kind of applied call. */
const lookupResult = (applied: Applied): LookupResult => {
  switch (applied.operation) {
    case "authorize":
      return { _tag: "Authorize", result: applied.result }
    case "capture":
      return { _tag: "Capture", result: applied.result }
    case "void":
      return { _tag: "Void", result: applied.result }
    case "start":
      return { _tag: "Start", result: applied.result }
    case "refund":
      return { _tag: "Refund", result: applied.result }
    case "payout":
      return { _tag: "Payout", result: applied.result }
  }
}

type Port = PaymentProvider["Service"]

/**
 * The sandbox as its callers see it: it answers every call it receives, so it never reports
 * `Unknown` (in the sandbox only a crash of Tender loses an answer).
 */
export interface Sandbox extends Port {
  authorizeCard(request: Parameters<Port["authorizeCard"]>[0]): Effect.Effect<AuthorizeResult, Errors.ProviderUnavailable>
  captureCard(request: Parameters<Port["captureCard"]>[0]): Effect.Effect<CaptureResult, Errors.ProviderUnavailable>
  voidCard(request: Parameters<Port["voidCard"]>[0]): Effect.Effect<VoidResult, Errors.ProviderUnavailable>
  startPayment(request: LocalPaymentRequest): Effect.Effect<StartResult, Errors.ProviderUnavailable>
  refund(request: Parameters<Port["refund"]>[0]): Effect.Effect<PayoutResult, Errors.ProviderUnavailable>
  payout(request: Parameters<Port["payout"]>[0]): Effect.Effect<PayoutResult, Errors.ProviderUnavailable>
}

export const make = (options: SandboxOptions, ledger: SandboxLedger["Service"]): Sandbox => {
  const urls = sandboxUrls(options.publicUrl)

  /**
   * One mutating call: decide the answer, then keep whichever answer the ledger holds for the key
   * (ours, or the one a racing or earlier call stored). A decision that fails (the unreachable
   * card) stores nothing: nothing was applied.
   */
  const applyOnce = <K extends Operation>(
    operation: K,
    request: { readonly reference: string; readonly idempotency_key: string },
    decide: Effect.Effect<Results[K], Errors.ProviderUnavailable>
  ): Effect.Effect<Results[K], Errors.ProviderUnavailable> =>
    Effect.gen(function*() {
      // Read per call, like the operations' checkpoints: whoever runs the call decides the faults.
      if ((yield* SandboxOutage).unreachable(operation)) {
        return yield* new Errors.ProviderUnavailable({ message: `The sandbox's ${operation} service is unreachable (a simulated outage)` })
      }
      const faults = yield* Faults
      yield* faults.at(`provider.${operation}.received`)
      const result = yield* decide
      const held = yield* ledger.claim(request.idempotency_key, {
        _tag: "Applied",
        operation,
        order_reference: request.reference,
        result
      } as Applied)
      if (held._tag === "Fenced") {
        return yield* new Errors.ProviderUnavailable({
          message: `The idempotency key ${request.idempotency_key} was reported as never received; the call was not applied`
        })
      }
      if (held.operation !== operation) {
        return yield* Effect.die(
          new Error(`Idempotency key ${request.idempotency_key} was used for ${held.operation}, not ${operation}`)
        )
      }
      yield* faults.at(`provider.${operation}.applied`)
      return held.result as Results[K]
    })

  const decideAuthorization = Effect.fn("PaymentProviderSandbox.authorizeCard")(
    function*(request: Parameters<Port["authorizeCard"]>[0]): Effect.fn.Return<AuthorizeResult, Errors.ProviderUnavailable> {
      const behaviour = behaviourOf(request.card.number)
      switch (behaviour._tag) {
        case "Unreachable":
          return yield* new Errors.ProviderUnavailable({ message: "The card authorization service is unreachable" })
        case "Decline":
          return {
            _tag: "Declined",
            decline_code: behaviour.code,
            provider_transaction_id: SandboxIds.make("dec", request.reference)
          }
        case "Challenge":
          if (!request.authenticated && request.merchant_initiated !== true) {
            return {
              _tag: "ChallengeRequired",
              provider_transaction_id: SandboxIds.make("3ds", request.reference),
              challenge_url: urls.challenge(request.reference)
            }
          }
          return approve(request, APPROVE)
        case "Approve":
          return approve(request, behaviour)
      }
    }
  )

  const decideCapture = Effect.fn("PaymentProviderSandbox.captureCard")(
    function*(request: Parameters<Port["captureCard"]>[0]): Effect.fn.Return<CaptureResult> {
      const authorization = SandboxIds.parse(request.authorization)
      if (authorization?.kind !== "auth") return { _tag: "Refused", decline_code: "authorization_not_found" }
      const { flags } = authorization
      if (flags.capturesRefused) return { _tag: "Refused", decline_code: "capture_refused" }
      if (request.previousCaptures >= 1 && !flags.multicapture) {
        return { _tag: "Refused", decline_code: "multicapture_not_supported" }
      }
      if (flags.settlesLater) {
        // The acceptance time rides in the id, so `settlement` needs no ledger; a retry with the
        // same key gets the first id back (the ledger), and with it the first acceptance time.
        const since = yield* Clock.currentTimeMillis
        return { _tag: "Settling", provider_transaction_id: SandboxIds.make("cap", request.reference, { settlesLater: true, since }) }
      }
      return { _tag: "Settled", provider_transaction_id: SandboxIds.make("cap", request.reference) }
    }
  )

  const decideVoid = Effect.fn("PaymentProviderSandbox.voidCard")(
    function*(request: Parameters<Port["voidCard"]>[0]): Effect.fn.Return<VoidResult> {
      if (SandboxIds.parse(request.authorization)?.kind !== "auth") {
        return { _tag: "Refused", decline_code: "authorization_not_found" }
      }
      return { _tag: "Voided", provider_transaction_id: SandboxIds.make("void", request.reference) }
    }
  )

  /** Settling ones carry their acceptance time in the id, so any process can tell. */
  const settling = (kind: "cap" | "ref" | "po", reference: string) =>
    Effect.map(Clock.currentTimeMillis, (since) => SandboxIds.make(kind, reference, { settlesLater: true, since }))

  const decideRefund = Effect.fn("PaymentProviderSandbox.refund")(
    function*(request: Parameters<Port["refund"]>[0]): Effect.fn.Return<PayoutResult> {
      const payment = SandboxIds.parse(request.payment)
      // A settlement: a card charge, a capture, or a local-method payment (redirect, QR, voucher, crypto).
      if (payment?.kind !== "pay" && payment?.kind !== "cap" && payment?.kind !== "lpm") return { _tag: "Refused", decline_code: "payment_not_found" }
      // contract.md, Sandbox: refunds of the card ending 0341 are pending, then settled by the worker.
      if (payment.flags.settlesLater) return { _tag: "Pending", provider_transaction_id: yield* settling("ref", request.reference) }
      return { _tag: "Paid", provider_transaction_id: SandboxIds.make("ref", request.reference) }
    }
  )

  const decidePayout = Effect.fn("PaymentProviderSandbox.payout")(
    function*(request: Parameters<Port["payout"]>[0]): Effect.fn.Return<PayoutResult, Errors.ProviderUnavailable> {
      if (unregistered(request.destination)) return { _tag: "Refused", decline_code: "transfer_destination_not_registered" }
      if (request.card !== undefined) {
        const behaviour = behaviourOf(request.card.number)
        switch (behaviour._tag) {
          case "Unreachable":
            return yield* new Errors.ProviderUnavailable({ message: "The card payout service is unreachable" })
          case "Decline":
            return { _tag: "Refused", decline_code: behaviour.code }
          case "Approve":
            if (behaviour.captures === "settle_later") return { _tag: "Pending", provider_transaction_id: yield* settling("po", request.reference) }
        }
      }
      return { _tag: "Paid", provider_transaction_id: SandboxIds.make("po", request.reference) }
    }
  )

  const settlement = Effect.fn("PaymentProviderSandbox.settlement")(
    function*(providerTransactionId: string): Effect.fn.Return<"settled" | "pending"> {
      const capture = SandboxIds.parse(providerTransactionId)
      if (capture?.kind !== "cap" && capture?.kind !== "ref" && capture?.kind !== "po") {
        return yield* Effect.die(new Error(`Not a sandbox capture, refund or payout: ${providerTransactionId}`))
      }
      const since = capture.flags.since
      if (!capture.flags.settlesLater || since === undefined) return "settled"
      return (yield* Clock.currentTimeMillis) - since >= SETTLE_AFTER_MS ? "settled" : "pending"
    }
  )

  const decideStart = Effect.fn("PaymentProviderSandbox.startPayment")(function*(request: LocalPaymentRequest): Effect.fn.Return<StartResult> {
    const start = START[request.method]
    if (start === undefined) {
      return yield* Effect.die(new Error(`The sandbox starts no local payment with method ${request.method}`))
    }
    const now = yield* Clock.currentTimeMillis
    return {
      _tag: "Started",
      provider_transaction_id: SandboxIds.make("lpm", request.reference),
      next_action: start({ request, now, urls })
    }
  })

  const latency = options.latencyMs ?? 0
  const slow = <A extends ReadonlyArray<any>, B, E>(call: (...args: A) => Effect.Effect<B, E>) =>
    latency <= 0 ? call : (...args: A) => Effect.andThen(Effect.sleep(latency), call(...args))

  return {
    name: "sandbox",
    // A simulator: it serves test mode only (contract.md, Sandbox: "live mode never accepts them").
    mode: "test",
    // What the test helper types for the customer: the table's plainest approval and decline.
    testCards: { succeed: "4242424242424242", fail: "4000000000000002" },
    // In-process and, over PostgreSQL, recorded in Tender's own transaction; a simulated latency is
    // a network's stand-in, and no transaction is held open across it.
    answersInUnitOfWork: latency <= 0 && ledger.joinsUnitOfWork,
    authorizeCard: slow((request) => applyOnce("authorize", request, decideAuthorization(request))),
    captureCard: slow((request) => applyOnce("capture", request, decideCapture(request))),
    voidCard: slow((request) => applyOnce("void", request, decideVoid(request))),
    settlement,
    startPayment: slow((request) => applyOnce("start", request, decideStart(request))),
    refund: slow((request) => applyOnce("refund", request, decideRefund(request))),
    payout: slow((request) => applyOnce("payout", request, decidePayout(request))),
    binLookup: (bin: string) => Effect.succeed(binFacts(bin)),
    lookup: slow((key: string) =>
      Effect.map(ledger.claim(key, FENCED), (held): LookupResult =>
        held._tag === "Fenced" ? { _tag: "NotReceived" } : lookupResult(held)))
  }
}

/** The sandbox over the ledger of the configured storage. */
export const layer = (options: SandboxOptions): Layer.Layer<PaymentProvider, never, SandboxLedger> =>
  Layer.effect(PaymentProvider, Effect.map(Effect.service(SandboxLedger), (ledger) => make(options, ledger)))
