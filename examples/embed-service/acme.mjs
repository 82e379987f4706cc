/**
 * Acme: a payment provider of the team's own, written against Tender's `PaymentProvider` port
 * (@tender/domain) the way a team writes an adapter for its acquirer. This one is a toy: it answers
 * in this process from a small in-memory ledger. Cards ending in an even digit are approved, those
 * ending in an odd digit declined (`do_not_honor`). Holds capture in full or in parts (multicapture),
 * void, and refund up to what was captured; every call is applied once per idempotency key (a retry
 * gets the first answer back), and `lookup` tells what became of a key, fencing one never received.
 *
 * acme.contract.test.mjs proves it with the contract Tender exports (`@tender/adapters/testing`).
 * Plain JavaScript: runs on Node 22 without type stripping.
 */
import { Errors, PaymentProvider } from "@tender/domain"
import { Effect, Layer } from "effect"

/** The cards the contract runs with: what acme approves and declines, and the decline's code. */
export const CARDS = { approve: "4242424242424242", decline: "4000000000009995", declineCode: "do_not_honor" }

const LOOKUP_TAGS = { authorize: "Authorize", capture: "Capture", void: "Void", refund: "Refund", payout: "Payout", start: "Start" }

/** A fresh acme: its own ledger of calls and of the money it holds. */
export const make = () => {
  /** Idempotency key → `{ operation, result }`, or FENCED for a key `lookup` reported never received. */
  const calls = new Map()
  const FENCED = "fenced"
  /** Provider id → what it holds: an authorization (`held`, `captures`) or a settlement (`settled`, `refunded`). */
  const records = new Map()
  let seq = 0
  const newId = (kind) => `acme_${kind}_${(++seq).toString().padStart(6, "0")}`

  /** Applies `decide` once per key; a retry gets the first answer back. */
  const once = (operation, key, decide) =>
    Effect.suspend(() => {
      const held = calls.get(key)
      if (held === FENCED) {
        return Effect.fail(new Errors.ProviderUnavailable({ message: `acme: the key ${key} was reported as never received` }))
      }
      if (held !== undefined) {
        if (held.operation !== operation) return Effect.die(new Error(`acme: the key ${key} was used for ${held.operation}, not ${operation}`))
        return Effect.succeed(held.result)
      }
      const result = decide()
      calls.set(key, { operation, result })
      return Effect.succeed(result)
    })

  const settle = (amount) => {
    const id = newId("pay")
    records.set(id, { kind: "settlement", settled: amount, refunded: 0 })
    return id
  }

  return {
    name: "acme",
    mode: "test",
    testCards: { succeed: CARDS.approve, fail: CARDS.decline },

    authorizeCard: (request) =>
      once("authorize", request.idempotency_key, () => {
        if (Number(request.card.number.at(-1)) % 2 === 1) {
          return { _tag: "Declined", decline_code: CARDS.declineCode, provider_transaction_id: newId("dec") }
        }
        if (request.capture) return { _tag: "Approved", provider_transaction_id: settle(request.amount), multicapture: true }
        const id = newId("auth")
        records.set(id, { kind: "authorization", held: request.amount })
        return { _tag: "Approved", provider_transaction_id: id, multicapture: true }
      }),

    captureCard: (request) =>
      once("capture", request.idempotency_key, () => {
        const authorization = records.get(request.authorization)
        if (authorization?.kind !== "authorization") return { _tag: "Refused", decline_code: "authorization_not_found" }
        if (request.amount > authorization.held) return { _tag: "Refused", decline_code: "amount_exceeds_authorization" }
        authorization.held = request.final ? 0 : authorization.held - request.amount
        return { _tag: "Settled", provider_transaction_id: settle(request.amount) }
      }),

    // Releases the amount asked (no `voidReleasesRemainder`).
    voidCard: (request) =>
      once("void", request.idempotency_key, () => {
        const authorization = records.get(request.authorization)
        if (authorization?.kind !== "authorization") return { _tag: "Refused", decline_code: "authorization_not_found" }
        authorization.held = Math.max(0, authorization.held - request.amount)
        return { _tag: "Voided", provider_transaction_id: newId("void") }
      }),

    refund: (request) =>
      once("refund", request.idempotency_key, () => {
        const payment = records.get(request.payment)
        if (payment?.kind !== "settlement") return { _tag: "Refused", decline_code: "payment_not_found" }
        if (payment.refunded + request.amount > payment.settled) return { _tag: "Refused", decline_code: "amount_exceeds_payment" }
        payment.refunded += request.amount
        return { _tag: "Paid", provider_transaction_id: newId("ref") }
      }),

    payout: (request) => once("payout", request.idempotency_key, () => ({ _tag: "Refused", decline_code: "payouts_not_supported" })),

    // Everything acme accepts settles in its answer.
    settlement: () => Effect.succeed("settled"),

    startPayment: (request) => Effect.die(new Error(`acme takes cards only, not ${request.method}`)),

    binLookup: () => Effect.succeed({}),

    lookup: (key) =>
      Effect.sync(() => {
        const held = calls.get(key)
        if (held === undefined || held === FENCED) {
          calls.set(key, FENCED)
          return { _tag: "NotReceived" }
        }
        return { _tag: LOOKUP_TAGS[held.operation], result: held.result }
      })
  }
}

/** Acme as Tender's `PaymentProvider`: a fresh ledger each time the layer is built. */
export const layer = Layer.effect(PaymentProvider, Effect.sync(make))
