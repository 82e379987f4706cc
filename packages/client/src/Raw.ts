/**
 * The client's wire layer, and its raw entry point for requests the typed API cannot express.
 *
 * `requestHeaders` is the one place a merchant request is signed (contract.md, Signatures:
 * `X-Signature: t=…, v1=…` over t + the path with query exactly as sent + the body bytes, keyed by the
 * signing secret, beside `Authorization: Bearer sk_…`), and `responseVerdict` the one place an answer
 * is verified; the typed client's transport (TenderClient.ts) and `signedFetch` below both use them.
 *
 * `signedFetch` sends any method, path and body (malformed JSON, unknown fields, another content
 * type, a deliberately wrong or absent signature) and reports the response's verdict instead of
 * failing on it, so a caller that sends such requests on purpose can still see what came back.
 */
import {
  computeSignature,
  REPLAY_WINDOW_SECONDS,
  SIGNATURE_HEADER,
  signatureHeader,
  type VerifyResult,
  verifySignature
} from "@tender/api/Signature"

/** An account's API credentials: its secret key and its signing secret. */
export interface SigningCredentials {
  /** The account's secret key (`sk_test_…` / `sk_live_…`). */
  readonly secretKey: string
  /** The account's signing secret: signs requests and verifies responses. */
  readonly signingSecret: string
}

/** Where the Tender instance is and the account's keys, for `signedFetch`. */
export interface RawClientOptions extends SigningCredentials {
  /** Scheme, host and port of the Tender instance, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string
  /** The fetch to send with (default `globalThis.fetch`): a proxy, an agent, a test's interceptor. */
  readonly fetch?: typeof globalThis.fetch | undefined
}

/** Whether a response's `X-Signature` verifies under the signing secret; `missing` when it has none. */
export type Verdict = VerifyResult | "missing"

export const nowSeconds = () => Math.floor(Date.now() / 1000)

/** Signatures this process sent, with their timestamps, while the server may still hold them (bounded). */
const sent = new Map<string, number>()
const MAX_REMEMBERED = 10_000

/** Reads (GET, HEAD) may be sent again with the same signature; every other method is signed once. */
export const isRead = (method: string) => method === "GET" || method === "HEAD"

/**
 * The timestamp to sign a request with: now, or for a write the first later second whose signature
 * this process has not sent yet. Tender accepts a signed write once (a second arrival is 409
 * `conflict`), and holds reads' signatures on paths that take writes (a GET's signature is a
 * bodiless DELETE's), so a write repeated on purpose — a retry after a 500 or a timeout, the same
 * create sent again, a DELETE just after a GET of its path — is signed anew rather than sent as a
 * replay. The server accepts timestamps up to the window ahead of its clock.
 */
export const signingTimestamp = (
  method: string,
  signingSecret: string,
  pathWithQuery: string,
  body: Uint8Array | string = ""
): number => {
  const now = nowSeconds()
  // Insertion order is nearly timestamp order; stop at the first entry still inside the window.
  for (const [signature, t] of sent) {
    if (t >= now - REPLAY_WINDOW_SECONDS && sent.size < MAX_REMEMBERED) break
    sent.delete(signature)
  }
  let t = now
  let signature = computeSignature(signingSecret, t, pathWithQuery, body)
  if (!isRead(method)) {
    while (sent.has(signature)) signature = computeSignature(signingSecret, ++t, pathWithQuery, body)
  }
  sent.set(signature, t)
  return t
}

/**
 * The headers that authenticate one request: the secret key and the signature of exactly this
 * path (with its query, as sent) and these body bytes at `timestampSeconds`.
 */
export const requestHeaders = (
  credentials: SigningCredentials,
  pathWithQuery: string,
  body: Uint8Array | string = "",
  timestampSeconds: number = nowSeconds()
): { readonly authorization: string; readonly "x-signature": string } => ({
  authorization: `Bearer ${credentials.secretKey}`,
  [SIGNATURE_HEADER]: signatureHeader(credentials.signingSecret, timestampSeconds, pathWithQuery, body)
} as { readonly authorization: string; readonly "x-signature": string })

/** The verdict on an answer's bytes, as Tender signed them over the request's path and query. */
export const responseVerdict = (
  signingSecret: string,
  header: string | null | undefined,
  pathWithQuery: string,
  body: Uint8Array | string
): Verdict => header === null || header === undefined ? "missing" : verifySignature(signingSecret, header, pathWithQuery, body, nowSeconds())

/**
 * The path and query a fetch of `pathWithQuery` puts on the request line: the URL parser resolves
 * dot segments (`/a/../b`), and the server signs and verifies what it received, so both sides must
 * use the resolved form.
 */
export const pathAsSent = (url: URL) => url.pathname + url.search

/** What `signedFetch` sends beside method and path: the body and headers as given, and signing overrides (to test the scheme). */
export interface RawRequest {
  /** The body, sent as given (no JSON encoding here). With a body, Content-Type is JSON unless `headers` say otherwise. */
  readonly body?: string | Uint8Array | undefined
  /** Headers set last: they replace any computed one (an authorization or content type on purpose); `null` removes one. */
  readonly headers?: Record<string, string | null> | undefined
  /** Replace the X-Signature header entirely (`null`: send none). */
  readonly signature?: string | null | undefined
  /** Sign at this unix time instead of now (instead of `signingTimestamp`'s). */
  readonly timestamp?: number | undefined
  /** Sign with this secret instead of the account's (the answer is still verified with the account's). */
  readonly signingSecret?: string | undefined
  /** Sign these bytes instead of the body sent (tampering). */
  readonly signedBody?: string | Uint8Array | undefined
  readonly signal?: AbortSignal | undefined
}

/** An HTTP answer, read whole. */
export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The body parsed as JSON; `undefined` when it is empty or not JSON. */
  readonly json: any
}

/** `signedFetch`'s answer: status, headers, body, and the response signature's verdict. */
export interface RawReply extends Answer {
  /** The response signature's verdict under the account's signing secret. */
  readonly verdict: Verdict
  /** `verdict === "valid"`: only then is the body Tender's answer. */
  readonly verified: boolean
}

/**
 * Sends one request signed like the typed client signs (unless `request` says otherwise) and reads
 * the whole answer with its signature's verdict. It does not reject an unverified answer: the
 * caller decides (check `verified` before trusting `json`).
 */
export const signedFetch = async (
  options: RawClientOptions,
  method: string,
  pathWithQuery: string,
  request: RawRequest = {}
): Promise<RawReply> => {
  const url = new URL(pathWithQuery, options.baseUrl)
  const path = pathAsSent(url)
  const headers = new Headers(requestHeaders(
    { secretKey: options.secretKey, signingSecret: request.signingSecret ?? options.signingSecret },
    path,
    request.signedBody ?? request.body ?? "",
    request.timestamp ?? signingTimestamp(method, request.signingSecret ?? options.signingSecret, path, request.signedBody ?? request.body ?? "")
  ))
  if (request.signature === null) headers.delete(SIGNATURE_HEADER)
  else if (request.signature !== undefined) headers.set(SIGNATURE_HEADER, request.signature)
  if (request.body !== undefined) headers.set("content-type", "application/json")
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (value === null) headers.delete(name)
    else headers.set(name, value)
  }
  const response = await (options.fetch ?? globalThis.fetch)(url, {
    method,
    headers,
    ...(request.body !== undefined ? { body: request.body as string | Uint8Array<ArrayBuffer> } : {}),
    ...(request.signal !== undefined ? { signal: request.signal } : {})
  })
  const bytes = new Uint8Array(await response.arrayBuffer())
  const text = new TextDecoder().decode(bytes)
  const verdict = responseVerdict(options.signingSecret, response.headers.get(SIGNATURE_HEADER), path, bytes)
  return { status: response.status, headers: response.headers, text, json: parseJson(text), verdict, verified: verdict === "valid" }
}

const parseJson = (text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
