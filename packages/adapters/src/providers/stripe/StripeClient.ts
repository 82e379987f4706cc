/**
 * The raw Stripe client: the official SDK, pointed at Stripe or at a fake (host/port/protocol),
 * with its own retries off (maxNetworkRetries 0): whether a call is retried, or asked about later
 * by its idempotency key, is Tender's policy (ProviderStep, Reconcile), not the SDK's. Every call
 * is an Effect whose failure says what the caller may conclude about the money.
 */
import { Effect } from "effect"
import Stripe from "stripe"
import { type CallFailure, NOT_SENT_CODES } from "../shared/CallFailure.ts"

export interface StripeClientConfig {
  /** The account's secret key (`sk_live_…`, `sk_test_…`); never logged. */
  readonly secretKey: string
  /** Where the API lives; defaults to Stripe's own (api.stripe.com, 443, https). */
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly protocol?: "http" | "https" | undefined
  /** How long one call may take before its answer is given up as unknown (default 20 s). */
  readonly timeoutMs?: number | undefined
}

/** Stripe's error body (`{error: {...}}`), as far as the mapping reads it. */
export interface StripeRawError {
  readonly type: string
  readonly code?: string | undefined
  readonly decline_code?: string | undefined
  readonly message?: string | undefined
  readonly param?: string | undefined
  readonly statusCode?: number | undefined
  readonly payment_intent?: Stripe.PaymentIntent | undefined
}

/**
 * What a failed call means on Stripe: `NotSent` also when Stripe refused it unapplied (429,
 * authentication); `Unknown` also for a 409 (a key still executing); `Rejected` for a 4xx error
 * body (applied as an error, nothing moved).
 */
export type StripeFailure = CallFailure<StripeRawError>

const NOT_SENT = new Set(NOT_SENT_CODES)

const codeOf = (detail: unknown): string | undefined =>
  typeof detail === "object" && detail !== null && typeof (detail as { code?: unknown }).code === "string"
    ? (detail as { code: string }).code
    : undefined

export const classify = (error: unknown): StripeFailure => {
  if (error instanceof Stripe.errors.StripeConnectionError) {
    const code = codeOf(error.detail)
    return code !== undefined && NOT_SENT.has(code)
      ? { _tag: "NotSent", reason: `connection failed (${code})` }
      : { _tag: "Unknown", reason: `connection lost (${code ?? error.message})` }
  }
  if (error instanceof Stripe.errors.StripeError) {
    const status = error.statusCode ?? 0
    if (status === 0) return { _tag: "Unknown", reason: `Stripe answered ${status} ${error.type}` }
    if (status >= 500) {
      // Stripe's own words: its error type (`api_error`), not the SDK's class name, and its message.
      const raw = error.raw as Partial<StripeRawError> | undefined
      return { _tag: "Unknown", reason: `Stripe answered ${status} ${error.type}`, report: `${status} ${raw?.type ?? error.type}: ${raw?.message ?? error.message}` }
    }
    if (status === 409) return { _tag: "Unknown", reason: "another request with this idempotency key is still executing" }
    if (status === 401 || status === 403 || status === 429) return { _tag: "NotSent", reason: `Stripe refused the call (${status})` }
    return { _tag: "Rejected", error: error.raw as StripeRawError }
  }
  return { _tag: "Unknown", reason: error instanceof Error ? error.message : String(error) }
}

export const make = (config: StripeClientConfig) =>
  new Stripe(config.secretKey, {
    ...(config.host === undefined ? {} : { host: config.host }),
    ...(config.port === undefined ? {} : { port: config.port }),
    ...(config.protocol === undefined ? {} : { protocol: config.protocol }),
    timeout: config.timeoutMs ?? 20_000,
    maxNetworkRetries: 0,
    telemetry: false
  })

export type StripeSdk = ReturnType<typeof make>

/** One SDK call as an Effect; its failure classified. */
export const call = <A>(run: () => Promise<A>): Effect.Effect<A, StripeFailure> =>
  Effect.tryPromise({ try: run, catch: classify })
