/**
 * The raw Adyen client: the official `@adyen/api-library` (Checkout API), pointed at Adyen or at a
 * fake. The library has no endpoint option for Checkout (its URLs are fixed, with a live prefix),
 * so a fake is reached by setting the services' base URL, and the fake's self-signed certificate
 * is trusted through the library's own HTTP client (its agent options): the request code that
 * runs is the library's. The library does not retry; a timeout aborts the request (an unknown
 * outcome). Every call is an Effect whose failure says what the caller may conclude about money.
 */
import Adyen from "@adyen/api-library"
import { Effect } from "effect"
import { type CallFailure, NOT_SENT_CODES } from "../shared/CallFailure.ts"

export interface AdyenClientConfig {
  /** The web service user's API key (X-API-Key); never logged. */
  readonly apiKey: string
  readonly merchantAccount: string
  /** Adyen's test or live platform; live needs the account's `liveEndpointUrlPrefix`. */
  readonly environment: "test" | "live"
  readonly liveEndpointUrlPrefix?: string | undefined
  /** Overrides the Checkout base URL (a fake: `https://127.0.0.1:<port>/v72`). */
  readonly endpoint?: string | undefined
  /** A PEM certificate to trust besides the system's (the fake's self-signed one). */
  readonly caCertificate?: string | undefined
  /** How long one call may take before its answer is given up as unknown (default 20 s). */
  readonly timeoutMs?: number | undefined
}

/** Adyen's error body, as far as the mapping reads it. */
export interface AdyenRawError {
  readonly status: number
  readonly errorCode: string
  readonly message: string
  readonly errorType: string
}

/**
 * What a failed call means on Adyen: `NotSent` also when Adyen refused it unapplied (401, 403);
 * `Unknown` also for 704 (a key still in progress); `Rejected` for a validation error body.
 */
export type AdyenFailure = CallFailure<AdyenRawError>

/** The library reports socket errors only in a message: the codes are found in its text. */
const NOT_SENT = new RegExp(`\\b(${NOT_SENT_CODES.join("|")})\\b`)

export const classify = (error: unknown): AdyenFailure => {
  if (error instanceof Adyen.HttpClientException) {
    const status = error.statusCode
    if (status === 0 || status === undefined) return { _tag: "Unknown", reason: `Adyen answered ${status}` }
    if (status >= 500) {
      const api = error.apiError
      return { _tag: "Unknown", reason: `Adyen answered ${status}`, report: `${status} ${api?.errorCode ?? error.errorCode ?? ""}: ${api?.message ?? error.message}` }
    }
    if (status === 401 || status === 403) return { _tag: "NotSent", reason: `Adyen refused the call (${status} ${error.errorCode ?? ""})` }
    // 704: a request with this key is still being processed; its outcome is not known yet.
    if (error.errorCode === "704") return { _tag: "Unknown", reason: "a request with this idempotency key is still in progress" }
    const api = error.apiError
    return {
      _tag: "Rejected",
      error: { status, errorCode: api?.errorCode ?? error.errorCode ?? "", message: api?.message ?? error.message, errorType: api?.errorType ?? "" }
    }
  }
  // Socket errors come as the library's ApiException, which is no Error but carries the message.
  const message = typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string"
    ? (error as { message: string }).message
    : String(error)
  return NOT_SENT.test(message) ? { _tag: "NotSent", reason: `connection failed (${message})` } : { _tag: "Unknown", reason: `connection lost (${message})` }
}

export const make = (config: AdyenClientConfig) => {
  const client = new Adyen.Client({
    apiKey: config.apiKey,
    environment: config.environment === "live" ? Adyen.EnvironmentEnum.LIVE : Adyen.EnvironmentEnum.TEST,
    ...(config.liveEndpointUrlPrefix === undefined ? {} : { liveEndpointUrlPrefix: config.liveEndpointUrlPrefix }),
    connectionTimeoutMillis: config.timeoutMs ?? 20_000
  })
  const transport = new Adyen.HttpURLConnectionClient()
  if (config.caCertificate !== undefined) {
    // The library keeps its https.Agent options private; trusting an extra CA is all that is set.
    ;(transport as unknown as { agentOptions: { ca: Array<string> } }).agentOptions = { ca: [config.caCertificate] }
  }
  client.httpClient = transport
  const checkout = new Adyen.CheckoutAPI(client)
  // The getters build a new service each time: keep one of each, so the base URL set here sticks.
  const payments = checkout.PaymentsApi
  const modifications = checkout.ModificationsApi
  const endpoint = config.endpoint
  if (endpoint !== undefined) {
    for (const service of [payments, modifications]) (service as unknown as { baseUrl: string }).baseUrl = endpoint
  }
  const baseUrl = (payments as unknown as { baseUrl: string }).baseUrl
  return {
    payments,
    modifications,
    /**
     * POST through the library's transport, answering the raw JSON: for lookup's probe, whose
     * answer may be any earlier call's response (the typed methods keep only their own type's fields).
     */
    post: (path: string, body: unknown, idempotencyKey: string): Promise<unknown> =>
      transport.request(`${baseUrl}${path}`, JSON.stringify(body), client.config, true, { method: "POST", idempotencyKey })
        .then((text) => JSON.parse(text) as unknown)
  }
}

export type AdyenSdk = ReturnType<typeof make>

/** One library call as an Effect; its failure classified. A call the library never settles is Unknown after its timeout. */
export const call = <A>(run: () => Promise<A>, timeoutMs = 20_000): Effect.Effect<A, AdyenFailure> =>
  Effect.tryPromise({ try: run, catch: classify }).pipe(
    Effect.timeoutOrElse({
      duration: timeoutMs + 1_000,
      orElse: () => Effect.fail<AdyenFailure>({ _tag: "Unknown", reason: "no answer in time" })
    })
  )
