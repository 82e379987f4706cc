/**
 * The webhook transport over Node's fetch: one POST per attempt, with the signed headers and the
 * exact body bytes. Whatever happens is an outcome, never a failure: any HTTP answer is `Answered`
 * (the domain decides that only a 2xx succeeds), and a timeout, a refused connection or a name
 * that does not resolve is `Failed` with a reason the delivery log can show.
 */
import { type DeliveryOutcome, WebhookTransport } from "@tender/domain"
import { Clock, Effect, Layer } from "effect"

/** Read at most this much of a response before dropping the connection: nobody reads it. */
export const DRAIN_LIMIT_BYTES = 64 * 1024

/**
 * Reads and discards the body, so a keep-alive connection can serve the next attempt; past the
 * limit the stream is cancelled instead, which closes the connection rather than read on.
 */
const drain = async (response: Response): Promise<void> => {
  if (response.body === null) return
  const reader = response.body.getReader()
  try {
    let read = 0
    while (read <= DRAIN_LIMIT_BYTES) {
      const chunk = await reader.read()
      if (chunk.done) return
      read += chunk.value.byteLength
    }
    await reader.cancel()
  } catch {
    // The status has arrived: a body cut short by the timeout or a reset does not change the answer.
  }
}

/** fetch reports network failures as `TypeError: fetch failed`; the reason is in its cause. */
const reasonOf = (error: unknown): string => {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
  // Several addresses tried in turn (Happy Eyeballs): each one's reason, once.
  if (cause instanceof AggregateError && cause.errors.length > 0) {
    return [...new Set(cause.errors.map(reasonOf))].join("; ")
  }
  if (!(cause instanceof Error)) return String(cause)
  if (cause.message !== "") return cause.message
  const code = (cause as { readonly code?: unknown }).code
  return typeof code === "string" ? code : cause.name
}

type PostRequest = Parameters<WebhookTransport["Service"]["post"]>[0]
type Reply = { readonly status: number } | { readonly error: string }

const exchange = async (request: PostRequest, interrupted: AbortSignal): Promise<Reply> => {
  const timeout = AbortSignal.timeout(request.timeoutMs)
  try {
    const response = await fetch(request.url, {
      method: "POST",
      headers: request.headers,
      // Any byte view is a body to fetch; the DOM typings only name ArrayBuffer-backed ones.
      body: request.body as Uint8Array<ArrayBuffer>,
      // A redirect is the endpoint's answer, not a new target: following it could lead the POST anywhere.
      redirect: "manual",
      signal: AbortSignal.any([timeout, interrupted])
    })
    await drain(response)
    return { status: response.status }
  } catch (error) {
    return { error: timeout.aborted ? `timed out after ${request.timeoutMs} ms` : reasonOf(error) }
  }
}

export const layer: Layer.Layer<WebhookTransport> = Layer.succeed(
  WebhookTransport,
  WebhookTransport.of({
    post: (request) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const result = yield* Effect.promise((interrupted) => exchange(request, interrupted))
        const duration_ms = Math.max(0, (yield* Clock.currentTimeMillis) - started)
        const outcome: DeliveryOutcome = "status" in result
          ? { _tag: "Answered", status: result.status, duration_ms }
          : { _tag: "Failed", error: result.error, duration_ms }
        return outcome
      }).pipe(Effect.withSpan("WebhookTransportHttp.post"))
  })
)
