/**
 * Calls to the SDK's server routes (`/v1/client/…`): a publishable key, a client secret in the body,
 * and the API's `{error}` body relayed as the SDK's error object (spec, SDK errors).
 */
import type { TenderErrorBody } from "./protocol.ts"

const ERROR_TYPES = new Set(["validation_error", "authentication_error", "api_error", "network_error", "integration_error"])

const relayed = (body: unknown, status: number, correlationId: string | null): TenderErrorBody => {
  const error = typeof body === "object" && body !== null ? (body as { error?: unknown }).error : undefined
  if (typeof error === "object" && error !== null) {
    const e = error as Record<string, unknown>
    return {
      type: typeof e.type === "string" && ERROR_TYPES.has(e.type) ? e.type as TenderErrorBody["type"] : "api_error",
      code: typeof e.code === "string" ? e.code : `http_${status}`,
      message: typeof e.message === "string" ? e.message : `The request failed with HTTP ${status}.`,
      correlationId: typeof e.correlationId === "string" ? e.correlationId : correlationId
    }
  }
  return { type: "api_error", code: `http_${status}`, message: `The request failed with HTTP ${status}.`, correlationId }
}

/**
 * A failure also carries the HTTP status (null when nothing came back) and the server's Retry-After:
 * callers decide from them whether the request was refused or may be retried.
 */
export type ApiResult<A> =
  | { readonly ok: true; readonly body: A }
  | { readonly ok: false; readonly error: TenderErrorBody; readonly httpStatus: number | null; readonly retryAfterMs?: number }

/** Retry-After in seconds (the form Tender sends); an HTTP date or nonsense counts as absent. */
const retryAfterOf = (header: string | null): number | undefined => {
  const seconds = header === null ? NaN : Number(header)
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined
}

export const callApi = async <A>(
  apiUrl: string,
  path: string,
  publishableKey: string,
  body: Record<string, unknown>
): Promise<ApiResult<A>> => {
  let response: Response
  try {
    response = await fetch(`${apiUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${publishableKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      credentials: "omit",
      cache: "no-store"
    })
  } catch {
    return {
      ok: false,
      error: { type: "network_error", code: "network_error", message: "Tender could not be reached.", correlationId: null },
      httpStatus: null
    }
  }
  const correlationId = response.headers.get("x-request-id")
  let parsed: unknown = undefined
  try {
    parsed = await response.json()
  } catch {
    // A body that is not JSON is reported by its status below.
  }
  if (response.ok && typeof parsed === "object" && parsed !== null) return { ok: true, body: parsed as A }
  const retryAfterMs = retryAfterOf(response.headers.get("retry-after"))
  return {
    ok: false,
    error: relayed(parsed, response.status, correlationId),
    httpStatus: response.status,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs })
  }
}

/** A status read that failed transiently is tried again after 0.5, 1, 2, 4 s (or the server's Retry-After). */
const STATUS_RETRIES = 4
const STATUS_BACKOFF_MS = 500
/** The longest Retry-After honoured: a wait beyond it is cut short rather than freezing the page's answer. */
const MAX_RETRY_AFTER_MS = 10_000

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

/** `/v1/client/payment_status`, tried again on a network error, a 429 (after its Retry-After) or a 5xx. */
export const readPaymentStatus = async <A>(apiUrl: string, publishableKey: string, clientSecret: string): Promise<ApiResult<A>> => {
  for (let attempt = 0; ; attempt++) {
    const status = await callApi<A>(apiUrl, "/v1/client/payment_status", publishableKey, { client_secret: clientSecret })
    if (status.ok) return status
    const transient = status.httpStatus === null || status.httpStatus === 429 || status.httpStatus >= 500
    if (!transient || attempt >= STATUS_RETRIES) return status
    await sleep(Math.min(status.retryAfterMs ?? STATUS_BACKOFF_MS * 2 ** attempt, MAX_RETRY_AFTER_MS))
  }
}
