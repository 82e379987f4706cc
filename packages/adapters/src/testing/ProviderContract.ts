/**
 * The payment provider contract: what the domain's `PaymentProvider` port (ProviderPorts.ts in
 * @tender/domain) promises, checked at the port, with no HTTP server and no storage. A team that
 * writes its own provider adapter calls `providerContract(name, layer, cards)` in a test file of
 * its own; the repository runs it against the sandbox (test/ProviderPort.test.ts).
 *
 * Only the port's own claims: an approving card is approved with a provider id and a declining one
 * declined with a decline code; an approval holds (manual capture) or settles (automatic); a hold
 * captures in full, in part (and the rest, when the approval granted multicapture) and voids; a
 * settlement refunds, in part and the rest; the same idempotency key twice is one call at the
 * provider (the same answer both times); `lookup` tells what became of a key, and fences one it
 * never received. Not checked: 3-D Secure, local payment methods (`startPayment`), payouts,
 * notifications and failures (`Unknown`, `ProviderUnavailable` on a reachable provider) — the suite
 * needs a provider that answers every call, and fails one that answers `Unknown`.
 */
import { randomUUID } from "node:crypto"
import { expect, layer as layerTests } from "@effect/vitest"
import { type CardDetails, PaymentProvider, type Unknown } from "@tender/domain"
import { type Duration, Effect, type Layer } from "effect"

export interface ProviderContractCards {
  /** A card number the provider approves. */
  readonly approve: string
  /** A card number the provider declines. */
  readonly decline: string
  /** The decline code the declining card answers, when the provider promises one (any non-empty code otherwise). */
  readonly declineCode?: string | undefined
}

export interface ProviderContractOptions {
  /** Minor units of each payment the suite makes (default 1000: 10.00). Must split in two. */
  readonly amount?: number | undefined
  /** ISO currency of the payments (default USD). */
  readonly currency?: string | undefined
  /** Per test (default 30 seconds). */
  readonly timeout?: Duration.Input | undefined
}

type Port = PaymentProvider["Service"]

/** The answer itself: a provider under contract answers every call (`Unknown` fails the claim). */
const answered = <A extends { readonly _tag: string }, E>(what: string, call: Effect.Effect<A, E>) =>
  Effect.flatMap(call, (result) =>
    result._tag === "Unknown"
      ? Effect.die(new Error(`${what} answered Unknown (${(result as unknown as Unknown).reason}): the contract needs a provider that answers`))
      : Effect.succeed(result as Exclude<A, Unknown>))

const providerId = expect.stringMatching(/\S/)

/**
 * Registers the contract's tests over `layer` (a `PaymentProvider`, nothing left to provide) in a
 * `describe` block named `name`. Each run uses fresh references and idempotency keys.
 */
export const providerContract = <E>(
  name: string,
  layer: Layer.Layer<PaymentProvider, E>,
  cards: ProviderContractCards,
  options: ProviderContractOptions = {}
): void => {
  const amount = options.amount ?? 1000
  const currency = options.currency ?? "USD"
  const half = Math.floor(amount / 2)
  const run = randomUUID().slice(0, 8)
  let seq = 0
  /** A reference or key never used before, by this run or another. */
  const fresh = (label: string) => `contract_${run}_${label}_${++seq}`
  const card = (number: string): CardDetails => ({ number, exp_month: 12, exp_year: new Date().getFullYear() + 3, cvc: "123" })

  const authorize = (provider: Port, number: string, options: { capture?: boolean; key?: string; reference?: string } = {}) =>
    answered(
      "authorizeCard",
      provider.authorizeCard({
        reference: options.reference ?? fresh("txn"),
        idempotency_key: options.key ?? fresh("auth"),
        card: card(number),
        amount,
        currency,
        capture: options.capture ?? false,
        authenticated: false
      })
    )

  /** A hold on the approving card: its provider id and whether it granted multicapture. */
  const hold = (provider: Port) =>
    Effect.gen(function*() {
      const result = yield* authorize(provider, cards.approve)
      if (result._tag !== "Approved") throw new Error(`${cards.approve} was not approved: ${JSON.stringify(result)}`)
      return result
    })

  const capture = (provider: Port, authorization: string, part: number, rest: { final?: boolean; previousCaptures?: number; key?: string } = {}) =>
    answered(
      "captureCard",
      provider.captureCard({
        reference: fresh("cap"),
        idempotency_key: rest.key ?? fresh("capture"),
        authorization,
        amount: part,
        currency,
        final: rest.final ?? true,
        previousCaptures: rest.previousCaptures ?? 0
      })
    )

  const refund = (provider: Port, payment: string, part: number, key = fresh("refund")) =>
    answered("refund", provider.refund({ reference: fresh("ref"), idempotency_key: key, payment, amount: part, currency }))

  const voidHold = (provider: Port, authorization: string, key = fresh("void")) =>
    answered("voidCard", provider.voidCard({ reference: fresh("void"), idempotency_key: key, authorization, amount }))

  /** Settled, or settling with a settlement the provider can be asked about. */
  const settles = (provider: Port, result: { readonly _tag: string; readonly provider_transaction_id?: string }, accepted: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      expect(accepted).toContain(result._tag)
      expect(result).toMatchObject({ provider_transaction_id: providerId })
      if (result._tag === "Settling" || result._tag === "Pending") {
        expect(["settled", "pending", "failed"]).toContain(yield* provider.settlement(result.provider_transaction_id!))
      }
    })

  const settledCapture = (provider: Port) =>
    Effect.gen(function*() {
      const approved = yield* hold(provider)
      const captured = yield* capture(provider, approved.provider_transaction_id, amount)
      if (captured._tag === "Refused") throw new Error(`capturing ${cards.approve} was refused: ${captured.decline_code}`)
      return captured
    })

  layerTests(layer, { excludeTestServices: true, timeout: options.timeout ?? "30 seconds" })(name, (it) => {
    it.effect("names itself and the mode whose money it moves", () =>
      Effect.gen(function*() {
        const provider = yield* PaymentProvider
        expect(provider.name).toMatch(/\S/)
        expect(["test", "live"]).toContain(provider.mode)
        // Test cards are a test-mode provider's alone.
        if (provider.testCards !== undefined) expect(provider.mode).toBe("test")
      }))

    it.effect("authorizes the approving card (manual capture): Approved, with a provider id", () =>
      Effect.gen(function*() {
        const result = yield* authorize(yield* PaymentProvider, cards.approve)
        expect(result).toEqual({ _tag: "Approved", provider_transaction_id: providerId, multicapture: expect.any(Boolean) })
      }))

    it.effect("declines the declining card: Declined, with a decline code", () =>
      Effect.gen(function*() {
        const result = yield* authorize(yield* PaymentProvider, cards.decline)
        expect(result).toMatchObject({ _tag: "Declined", decline_code: cards.declineCode ?? expect.stringMatching(/\S/) })
      }))

    it.effect("its own test cards, when it names them: `succeed` is approved, `fail` declined", () =>
      Effect.gen(function*() {
        const provider = yield* PaymentProvider
        if (provider.testCards === undefined) return
        expect(yield* authorize(provider, provider.testCards.succeed)).toMatchObject({ _tag: "Approved" })
        expect(yield* authorize(provider, provider.testCards.fail)).toMatchObject({ _tag: "Declined" })
      }))

    it.effect("an authorization with automatic capture settles at once: Approved, and refundable in full", () =>
      Effect.gen(function*() {
        const provider = yield* PaymentProvider
        const result = yield* authorize(provider, cards.approve, { capture: true })
        expect(result).toMatchObject({ _tag: "Approved", provider_transaction_id: providerId })
        if (result._tag !== "Approved") return
        yield* settles(provider, yield* refund(provider, result.provider_transaction_id, amount), ["Paid", "Pending"])
      }))

    it.effect("captures a hold in full: Settled or Settling, with a provider id", () =>
      Effect.gen(function*() {
        const provider = yield* PaymentProvider
        const approved = yield* hold(provider)
        yield* settles(provider, yield* capture(provider, approved.provider_transaction_id, amount), ["Settled", "Settling"])
      }))

    it.effect("captures part of a hold; with multicapture granted, then the rest", () =>
      Effect.gen(function*() {
        const provider = yield* PaymentProvider
        const approved = yield* hold(provider)
        const first = yield* capture(provider, approved.provider_transaction_id, half, { final: !approved.multicapture })
        yield* settles(provider, first, ["Settled", "Settling"])
        if (!approved.multicapture) return
        const second = yield* capture(provider, approved.provider_transaction_id, amount - half, { final: true, previousCaptures: 1 })
        yield* settles(provider, second, ["Settled", "Settling"])
        expect(second).not.toMatchObject({ provider_transaction_id: (first as { provider_transaction_id: string }).provider_transaction_id })
      }))

    it.effect("voids a hold: Voided, with a provider id", () =>
      Effect.gen(function*() {
        const provider = yield* PaymentProvider
        const approved = yield* hold(provider)
        expect(yield* voidHold(provider, approved.provider_transaction_id)).toEqual({ _tag: "Voided", provider_transaction_id: providerId })
      }))

    it.effect("refunds a captured payment, part then the rest: Paid or Pending, each with its provider id", () =>
      Effect.gen(function*() {
        const provider = yield* PaymentProvider
        const captured = yield* settledCapture(provider)
        const first = yield* refund(provider, captured.provider_transaction_id, half)
        yield* settles(provider, first, ["Paid", "Pending"])
        const second = yield* refund(provider, captured.provider_transaction_id, amount - half)
        yield* settles(provider, second, ["Paid", "Pending"])
        expect(second).not.toMatchObject({ provider_transaction_id: (first as { provider_transaction_id: string }).provider_transaction_id })
      }))

    it.effect("an authorization sent twice with one idempotency key is one call: the same answer, approved or declined", () =>
      Effect.gen(function*() {
        const provider = yield* PaymentProvider
        for (const number of [cards.approve, cards.decline]) {
          const key = fresh("auth")
          const reference = fresh("txn")
          const first = yield* authorize(provider, number, { key, reference })
          expect(yield* authorize(provider, number, { key, reference })).toEqual(first)
        }
      }))

    it.effect("a capture, a void and a refund sent twice with one idempotency key: the same answer, one effect", () =>
      Effect.gen(function*() {
        const provider = yield* PaymentProvider
        const approved = yield* hold(provider)
        const captureKey = fresh("capture")
        const captured = yield* capture(provider, approved.provider_transaction_id, amount, { key: captureKey })
        expect(yield* capture(provider, approved.provider_transaction_id, amount, { key: captureKey })).toEqual(captured)
        if (captured._tag === "Refused") throw new Error(`capturing ${cards.approve} was refused: ${captured.decline_code}`)
        const refundKey = fresh("refund")
        const refunded = yield* refund(provider, captured.provider_transaction_id, half, refundKey)
        expect(yield* refund(provider, captured.provider_transaction_id, half, refundKey)).toEqual(refunded)
        // Had the retry refunded again, the rest would be more than what is left: it is refundable in full.
        yield* settles(provider, yield* refund(provider, captured.provider_transaction_id, amount - half), ["Paid", "Pending"])

        const other = yield* hold(provider)
        const voidKey = fresh("void")
        const voided = yield* voidHold(provider, other.provider_transaction_id, voidKey)
        expect(yield* voidHold(provider, other.provider_transaction_id, voidKey)).toEqual(voided)
      }))

    it.effect("lookup tells what became of each call by its key: authorize, capture, void, refund", () =>
      Effect.gen(function*() {
        const provider = yield* PaymentProvider
        const [approveKey, declineKey, captureKey, voidKey, refundKey] = ["auth", "auth", "capture", "void", "refund"].map(fresh)
        const approved = yield* authorize(provider, cards.approve, { key: approveKey })
        const declined = yield* authorize(provider, cards.decline, { key: declineKey })
        if (approved._tag !== "Approved") throw new Error(`${cards.approve} was not approved: ${JSON.stringify(approved)}`)
        const captured = yield* capture(provider, approved.provider_transaction_id, amount, { key: captureKey })
        if (captured._tag === "Refused") throw new Error(`capturing ${cards.approve} was refused: ${captured.decline_code}`)
        const refunded = yield* refund(provider, captured.provider_transaction_id, half, refundKey)
        const other = yield* hold(provider)
        const voided = yield* voidHold(provider, other.provider_transaction_id, voidKey)

        expect(yield* provider.lookup(approveKey!)).toEqual({ _tag: "Authorize", result: approved })
        expect(yield* provider.lookup(declineKey!)).toEqual({ _tag: "Authorize", result: declined })
        expect(yield* provider.lookup(captureKey!)).toEqual({ _tag: "Capture", result: captured })
        expect(yield* provider.lookup(voidKey!)).toEqual({ _tag: "Void", result: voided })
        expect(yield* provider.lookup(refundKey!)).toEqual({ _tag: "Refund", result: refunded })
      }))

    it.effect("lookup of a key it never received: NotReceived, and the key is fenced (a later call with it is ProviderUnavailable)", () =>
      Effect.gen(function*() {
        const provider = yield* PaymentProvider
        const key = fresh("auth")
        expect(yield* provider.lookup(key)).toEqual({ _tag: "NotReceived" })
        const late = yield* Effect.result(authorize(provider, cards.approve, { key }))
        expect(late).toMatchObject({ _tag: "Failure", failure: { _tag: "ProviderUnavailable" } })
        expect(yield* provider.lookup(key)).toEqual({ _tag: "NotReceived" })
      }))

    it.effect("binLookup answers what it knows of the approving card's BIN (each fact a string, or absent)", () =>
      Effect.gen(function*() {
        const facts = yield* (yield* PaymentProvider).binLookup(cards.approve.slice(0, 6))
        for (const field of ["country_code", "issuer_name", "card_product"] as const) {
          expect(facts[field] === undefined || typeof facts[field] === "string").toBe(true)
        }
      }))
  })
}
