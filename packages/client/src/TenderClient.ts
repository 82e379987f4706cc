/**
 * The merchant API's typed client, derived from the same `Api` value the server routes and the
 * OpenAPI document come from (HttpApiClient), so a renamed field or endpoint breaks the build here.
 *
 * Its transport signs every request (contract.md, Signatures: `X-Signature: t=…, v1=…` over t + the
 * path with query exactly as sent + the body bytes, keyed by the signing secret, beside
 * `Authorization: Bearer sk_…`) and verifies every response's signature before anything decodes
 * the body: a response that does not verify fails with `UnverifiedResponse`, whatever its status.
 * Signing and verifying are Raw.ts's (`requestHeaders`, `responseVerdict`), shared with the raw
 * `signedFetch` for requests the typed API cannot express.
 */
import { Data, Effect } from "effect"
import { HttpClient, HttpClientError, HttpClientResponse } from "effect/http"
import type { HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api } from "@tender/api/Api"
import { SIGNATURE_HEADER } from "@tender/api/Signature"
import { pathAsSent, type RawClientOptions, requestHeaders, responseVerdict, signingTimestamp, type Verdict } from "./Raw.ts"

/** Where Tender is and the account's credentials (the same options as the raw `signedFetch`). */
export type TenderClientOptions = RawClientOptions

/**
 * A response whose `X-Signature` is missing, malformed, stale or wrong: its body was not read as an
 * answer. A request with an unknown or missing secret key gets one of these too (401), since
 * Tender has no secret to sign that answer with.
 */
export class UnverifiedResponse extends Data.TaggedError("UnverifiedResponse")<{
  readonly status: number
  readonly verdict: Exclude<Verdict, "valid">
  readonly requestId: string | undefined
  readonly message: string
}> {}

/** The typed client: one Effect-returning method per endpoint, derived from the API definition. */
export type TenderClient = HttpApiClient.ForApi<typeof Api, UnverifiedResponse>

const transportError = (request: HttpClientRequest.HttpClientRequest, cause: unknown, description?: string) =>
  new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, cause, description }) })

/**
 * The signing transport. It buffers each response so the signature covers exactly the bytes that
 * are then decoded; the verdict is kept beside the request and turned into a typed failure by
 * `signedHttpClient`, since a transport may only fail with an HttpClientError.
 */
const verdicts = new WeakMap<HttpClientRequest.HttpClientRequest, Verdict>()

const transport = (options: TenderClientOptions): HttpClient.HttpClient =>
  HttpClient.make((request, url, signal) =>
    Effect.gen(function*() {
      const body = request.body._tag === "Empty"
        ? new Uint8Array()
        : request.body._tag === "Uint8Array"
        ? request.body.body
        : undefined
      if (body === undefined) return yield* Effect.fail(transportError(request, undefined, "only JSON bodies can be signed"))
      // Exactly the path and query fetch sends: the server verifies against its raw request line.
      const pathWithQuery = pathAsSent(url)
      const headers = new Headers(request.headers as Record<string, string>)
      const timestamp = signingTimestamp(request.method, options.signingSecret, pathWithQuery, body)
      for (const [name, value] of Object.entries(requestHeaders(options, pathWithQuery, body, timestamp))) headers.set(name, value)
      headers.delete("content-length")
      const fetchFn = options.fetch ?? globalThis.fetch
      const response = yield* Effect.tryPromise({
        try: () => fetchFn(url, { method: request.method, headers, body: body.length > 0 ? body as Uint8Array<ArrayBuffer> : undefined, signal }),
        catch: (cause) => transportError(request, cause)
      })
      const bytes = new Uint8Array(yield* Effect.tryPromise({
        try: () => response.arrayBuffer(),
        catch: (cause) => transportError(request, cause)
      }))
      verdicts.set(request, responseVerdict(options.signingSecret, response.headers.get(SIGNATURE_HEADER), pathWithQuery, bytes))
      const copy = new Response(bytes.length > 0 || !noBodyStatus(response.status) ? bytes : null, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers
      })
      return HttpClientResponse.fromWeb(request, copy)
    })
  )

const noBodyStatus = (status: number) => status === 204 || status === 205 || status === 304

/** The signing, verifying HttpClient: fails with `UnverifiedResponse` before any body is decoded. */
export const signedHttpClient = (options: TenderClientOptions): HttpClient.HttpClient.With<
  HttpClientError.HttpClientError | UnverifiedResponse
> =>
  transport(options).pipe(HttpClient.transformResponse(Effect.flatMap((response) => {
    const verdict = verdicts.get(response.request)
    if (verdict === "valid") return Effect.succeed(response)
    return Effect.fail(
      new UnverifiedResponse({
        status: response.status,
        verdict: verdict ?? "missing",
        requestId: response.headers["x-request-id"],
        message: `The response (HTTP ${response.status}) is not signed by this account's signing secret (${verdict ?? "missing"})`
      })
    )
  })))

/** The typed client: `client.payments.create({ payload })`, `client.orders.get({ params: { id } })`… */
export const make = (options: TenderClientOptions): Effect.Effect<TenderClient> =>
  HttpApiClient.makeWith(Api, { httpClient: signedHttpClient(options), baseUrl: options.baseUrl }) as Effect.Effect<TenderClient>
