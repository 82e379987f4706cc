/**
 * The steps every provider adapter's tests play against that provider's fake (Stripe's, Adyen's):
 * run an effect, take the failure of one that must fail, authorize and capture with the defaults a
 * test varies, ask a card-only channel what it cannot do. One home, so that the adapters' suites
 * read alike and a new provider's suite starts from the same scenarios. Test support only: it
 * asserts nothing itself (the suites do, with their own expectations).
 */
import type { AuthorizeResult, CardDetails, PaymentProvider, Unknown } from "@tender/domain"
import { Cause, Effect, Exit } from "effect"

type Port = PaymentProvider["Service"]

export const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

/** The failure of an effect that must fail. */
export const failureOf = async <A, E>(effect: Effect.Effect<A, E>) => {
  const exit = await Effect.runPromise(Effect.exit(effect))
  if (Exit.isSuccess(exit)) throw new Error(`Expected a failure, got ${JSON.stringify(exit.value)}`)
  return Cause.squash(exit.cause) as E
}

export const approved = (result: AuthorizeResult | Unknown) => {
  if (result._tag !== "Approved") throw new Error(`Expected an approval, got ${JSON.stringify(result)}`)
  return result
}

export interface AuthorizeOptions<P> {
  readonly capture?: boolean
  readonly reference?: string
  readonly key?: string
  readonly authenticated?: boolean
  readonly via?: P
  readonly card?: CardDetails
}

/**
 * Steps against one provider (`provider()` is read per call: suites connect it in `beforeAll`).
 * References are unique per run, so suites sharing a fake never see each other's payments.
 */
export const scenarios = <P extends Port>(defaults: {
  readonly provider: () => P
  readonly card: (number: string) => CardDetails
  /** The provider ids of the payments the fake holds for a reference (what "never charged twice" counts). */
  readonly held: (reference: string) => ReadonlyArray<string>
}) => {
  let references = 0
  const newReference = () => `txn_${Date.now().toString(36)}_${++references}`

  /** 10.00 EUR on the card `number`, manual capture unless asked, under `<reference>:authorize`. */
  const authorize = (number: string, options: AuthorizeOptions<P> = {}) => {
    const reference = options.reference ?? newReference()
    return (options.via ?? defaults.provider()).authorizeCard({
      reference,
      idempotency_key: options.key ?? `${reference}:authorize`,
      card: options.card ?? defaults.card(number),
      amount: 1000,
      currency: "EUR",
      capture: options.capture ?? false,
      authenticated: options.authenticated ?? false
    })
  }

  /** A capture under a fresh key; the key is returned too, for the lookup a lost answer calls for. */
  const capture = (authorization: string, amount: number, final: boolean, via: P = defaults.provider(), previousCaptures = 0) => {
    const reference = newReference()
    const key = `${reference}:capture`
    return { key, answer: via.captureCard({ reference, idempotency_key: key, authorization, amount, currency: "EUR", final, previousCaptures }) }
  }

  /**
   * An authorization whose answer is lost (the suite set the fake's fault: `timeout` with an
   * impatient `via`, or `applyThenDrop`), then reconciliation's lookup of its key.
   */
  const lostAuthorization = async (number: string, options: { readonly via?: P; readonly lookupVia?: P } = {}) => {
    const reference = newReference()
    const lost = await run(authorize(number, { reference, ...(options.via === undefined ? {} : { via: options.via }) }))
    const found = await run((options.lookupVia ?? defaults.provider()).lookup(`${reference}:authorize`))
    return { reference, lost, found }
  }

  /** `lostAuthorization`, then a retry under the same key: what the fake holds after all three. */
  const lostAndRetried = async (number: string, options: { readonly via?: P; readonly lookupVia?: P } = {}) => {
    const { found, lost, reference } = await lostAuthorization(number, options)
    const retried = await run(authorize(number, { reference }))
    return { lost: lost._tag, found, retried, held: defaults.held(reference) }
  }

  /**
   * An authorization and a lookup through `via` while `down` refuses connections (their failures),
   * then an authorization once it accepts again; `down` is closed after.
   */
  const acrossRefusal = async (down: Refusable, via: P, number: string) => {
    try {
      await down.refuse()
      const refused = [await failureOf(authorize(number, { via })), await failureOf(via.lookup("txn_x:authorize"))]
      await down.accept()
      return { refused, after: await run(authorize(number, { via })) }
    } finally {
      await down.close()
    }
  }

  return { newReference, authorize, capture, lostAuthorization, lostAndRetried, acrossRefusal }
}

/** The part of a fake's controls (FakeServer.ts `controls`) that makes its provider unreachable. */
export interface Refusable {
  readonly refuse: () => Promise<void>
  readonly accept: () => Promise<void>
  readonly close: () => Promise<void>
}

/**
 * What a card-only channel is asked that it cannot do: a card payout (its answer) and a payment by
 * the local method `local` (its failure).
 */
export const unsupportedCalls = (
  provider: Port,
  card: CardDetails,
  local: { readonly method: string; readonly currency: string; readonly country: string }
) =>
  Effect.all({
    payout: provider.payout({
      reference: "txn_p",
      idempotency_key: "txn_p:payout",
      method: "card",
      destination: { type: "card" } as never,
      card,
      amount: 100,
      currency: "EUR",
      country: local.country
    }),
    start: Effect.flip(provider.startPayment({
      reference: "txn_s",
      idempotency_key: "txn_s:start",
      method: local.method,
      amount: 100,
      currency: local.currency,
      country: local.country,
      document_id: undefined,
      customer_ip: undefined
    }))
  })
