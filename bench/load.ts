/**
 * Load generation for the payments bench: autocannon for single requests, a small bounded loop of
 * concurrent workers over an undici pool for operations of two requests (authorize, then capture).
 * Both count 2xx and non-2xx responses, check each 2xx body for the expected payment status, and
 * keep every latency (milliseconds, sub-millisecond precision) for the percentiles.
 */
import { randomBytes } from "node:crypto"
import { performance } from "node:perf_hooks"
import autocannon from "autocannon"
import { Pool } from "undici"
import { requestHeaders } from "@tender/client/Raw"

export interface Target {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly secretKey: string
  readonly signingSecret: string
}

export interface Measurement {
  readonly seconds: number
  /** Operations whose every response was 2xx with the expected status in its body. */
  readonly ok: number
  readonly non2xx: number
  /** 2xx with an unexpected body (e.g. status failed), counted apart from non-2xx. */
  readonly wrongBody: number
  /** Socket errors and timeouts. */
  readonly errors: number
  /** Latencies of the ok operations, sorted, in ms. */
  readonly latencies: Float64Array
  /** A few distinct non-2xx/wrong bodies, to say what went wrong. */
  readonly samples: ReadonlyArray<string>
}

export const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]

export const throughput = (m: Measurement) => m.ok / m.seconds

/** A merchant_reference unique across runs and connections. */
const runTag = randomBytes(4).toString("hex")
let sequence = 0
const reference = (prefix: string) => `${prefix}-${runTag}-${(sequence++).toString(36)}`

export const paymentBody = (cardToken: string, ref: string, manual: boolean) =>
  JSON.stringify({
    amount: "10.00",
    currency: "USD",
    country: "US",
    merchant_reference: ref,
    ...(manual ? { capture_method: "manual" } : {}),
    payment_method: {
      code: "card",
      details: { card_token: cardToken, stored_credential: { initiator: "merchant", reason: "unscheduled" } }
    }
  })

/**
 * A merchant's signed request headers, signed as the typed client signs (`requestHeaders`), built
 * ahead of the load so the measured loop only sends: the secret key, the signature, JSON.
 */
export const signedHeaders = (target: Target, pathWithQuery: string, body: string): Record<string, string> => ({
  ...requestHeaders(target, pathWithQuery, body),
  ...(body !== "" ? { "content-type": "application/json" } : {})
})

class Recorder {
  readonly latencies: Array<number> = []
  ok = 0
  non2xx = 0
  wrongBody = 0
  errors = 0
  readonly samples = new Set<string>()

  sample(status: number | string, body: string) {
    if (this.samples.size < 5) this.samples.add(`${status} ${body.slice(0, 300)}`)
  }

  result(seconds: number): Measurement {
    const latencies = Float64Array.from(this.latencies).sort()
    return {
      seconds,
      ok: this.ok,
      non2xx: this.non2xx,
      wrongBody: this.wrongBody,
      errors: this.errors,
      latencies,
      samples: [...this.samples]
    }
  }
}

/**
 * (a) POST /v1/payments, a merchant-initiated card charge, under autocannon: `connections` keep one
 * request each in flight for `seconds`. Every request gets a fresh merchant_reference and signature
 * from `setupRequest`; `onResponse` checks the body says `completed`.
 */
export const chargeWithAutocannon = async (
  target: Target,
  cardToken: string,
  options: { readonly connections: number; readonly seconds: number }
): Promise<Measurement> => {
  const recorder = new Recorder()
  // onResponse (body checks) and the instance's "response" event (timing) fire one after the
  // other, synchronously, for the same response: this carries the verdict from one to the other.
  let lastOk = false
  const started = performance.now()
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({
      url: target.origin,
      connections: options.connections,
      duration: options.seconds,
      timeout: 30,
      requests: [
        {
          method: "POST",
          path: "/v1/payments",
          setupRequest: (request) => {
            const body = paymentBody(cardToken, reference("mit"), false)
            return { ...request, body, headers: signedHeaders(target, "/v1/payments", body) }
          },
          onResponse: (status, body) => {
            lastOk = false
            if (status < 200 || status > 299) {
              recorder.non2xx++
              recorder.sample(status, body)
            } else if (!body.includes(`"status":"completed"`)) {
              recorder.wrongBody++
              recorder.sample(status, body)
            } else {
              recorder.ok++
              lastOk = true
            }
          }
        }
      ]
    }, (error: unknown, result) => (error ? reject(error) : resolve(result)))
    // The client's own response time (hrtime from write to last byte): autocannon's histogram
    // rounds to whole milliseconds, this does not.
    instance.on("response", (_client, _status, _bytes, responseTime) => {
      if (lastOk) recorder.latencies.push(responseTime)
      lastOk = false
    })
  })
  const seconds = (performance.now() - started) / 1000
  recorder.errors += result.errors // includes timeouts
  // autocannon's own count must agree with ours: a mismatch means the bench itself is wrong.
  if (result["2xx"] !== recorder.ok + recorder.wrongBody || result.non2xx !== recorder.non2xx) {
    recorder.sample("bench", `autocannon counted ${result["2xx"]} 2xx / ${result.non2xx} non-2xx, onResponse ${recorder.ok + recorder.wrongBody} / ${recorder.non2xx}`)
  }
  return recorder.result(seconds)
}

type Post = (path: string, body: string) => Promise<{ readonly status: number; readonly text: string }>
/** Any signed request (a read is a GET without a body). */
type Send = (method: "GET" | "POST", path: string, body: string) => Promise<{ readonly status: number; readonly text: string }>

/**
 * `connections` workers, each over its own keep-alive connection of an undici pool, run
 * `operation` one at a time until `seconds` are up (or `operations` have started). An operation
 * records its own verdict; one that throws counts as a socket error. With `ratePerSecond` the
 * operations start on a fixed schedule instead (open loop, as long as a worker is free for each).
 */
const closedLoop = async (
  target: Target,
  options: { readonly connections: number; readonly seconds: number; readonly operations?: number; readonly ratePerSecond?: number },
  operation: (post: Post, recorder: Recorder, send: Send) => Promise<void>
): Promise<Measurement> => {
  const recorder = new Recorder()
  const pool = new Pool(target.origin, { connections: options.connections, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 })
  const send: Send = async (method, path, body) => {
    const response = await pool.request({ method, path, headers: signedHeaders(target, path, body), body: body === "" ? undefined : body })
    return { status: response.statusCode, text: await response.body.text() }
  }
  const post: Post = (path, body) => send("POST", path, body)
  const started = performance.now()
  const deadline = started + options.seconds * 1000
  let remaining = options.operations ?? Number.POSITIVE_INFINITY
  let scheduled = 0
  const worker = async () => {
    // Bounded: one operation at a time until the deadline (or the operation count); a request is
    // bounded by the timeouts above.
    while (performance.now() < deadline && remaining-- > 0) {
      if (options.ratePerSecond !== undefined) {
        const slot = started + (scheduled++ * 1000) / options.ratePerSecond
        if (slot >= deadline) break
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, slot - performance.now())))
      }
      try {
        await operation(post, recorder, send)
      } catch (error) {
        recorder.errors++
        recorder.sample("error", String(error))
        // A refused connection fails at once: do not spin on it.
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    }
  }
  await Promise.all(Array.from({ length: options.connections }, worker))
  const seconds = (performance.now() - started) / 1000
  await pool.close()
  return recorder.result(seconds)
}

/**
 * (b) authorize + capture as one operation: POST /v1/payments with capture_method manual, then
 * POST /v1/payments/capture with the order id. An operation is ok when the first answers 2xx
 * `authorized` and the second 2xx `completed`; its latency spans both requests.
 */
export const authorizeCaptureLoop = (
  target: Target,
  cardToken: string,
  options: { readonly connections: number; readonly seconds: number; readonly operations?: number; readonly ratePerSecond?: number }
): Promise<Measurement> =>
  closedLoop(target, options, async (post, recorder) => {
    const t0 = performance.now()
    const authorized = await post("/v1/payments", paymentBody(cardToken, reference("auth"), true))
    if (authorized.status < 200 || authorized.status > 299) {
      recorder.non2xx++
      return recorder.sample(`authorize ${authorized.status}`, authorized.text)
    }
    const order = JSON.parse(authorized.text) as { order_id?: string; status?: string }
    if (order.status !== "authorized" || typeof order.order_id !== "string") {
      recorder.wrongBody++
      return recorder.sample(`authorize ${authorized.status}`, authorized.text)
    }
    const captured = await post("/v1/payments/capture", JSON.stringify({ order_id: order.order_id }))
    if (captured.status < 200 || captured.status > 299) {
      recorder.non2xx++
      return recorder.sample(`capture ${captured.status}`, captured.text)
    }
    if (!captured.text.includes(`"status":"completed"`)) {
      recorder.wrongBody++
      return recorder.sample(`capture ${captured.status}`, captured.text)
    }
    recorder.ok++
    recorder.latencies.push(performance.now() - t0)
  })

/**
 * The charge of (a) in a worker loop rather than autocannon, for callers that need each order id and
 * the moment its response arrived (`performance.now()`, once the body is read): `onCharged` is
 * called for every ok charge. Every request completes (no cut requests at the end).
 */
export const chargeLoop = (
  target: Target,
  cardToken: string,
  options: {
    readonly connections: number
    readonly seconds: number
    readonly operations?: number
    readonly ratePerSecond?: number
    readonly onCharged?: (orderId: string, at: number) => void
  }
): Promise<Measurement> =>
  closedLoop(target, options, async (post, recorder) => {
    const t0 = performance.now()
    const charged = await post("/v1/payments", paymentBody(cardToken, reference("hook"), false))
    const at = performance.now()
    if (charged.status < 200 || charged.status > 299) {
      recorder.non2xx++
      return recorder.sample(charged.status, charged.text)
    }
    const order = JSON.parse(charged.text) as { order_id?: string; status?: string }
    if (order.status !== "completed" || typeof order.order_id !== "string") {
      recorder.wrongBody++
      return recorder.sample(charged.status, charged.text)
    }
    recorder.ok++
    recorder.latencies.push(at - t0)
    options.onCharged?.(order.order_id, at)
  })

/**
 * Reads under load (growth bench): each worker sends `next()`'s request, one at a time, until
 * `seconds` are up; a read is ok when it answers 2xx (the body is the caller's to have chosen).
 */
export const readLoop = (
  target: Target,
  options: { readonly connections: number; readonly seconds: number },
  next: () => { readonly method: "GET" | "POST"; readonly path: string; readonly body: string }
): Promise<Measurement> =>
  closedLoop(target, options, async (_post, recorder, send) => {
    const { body, method, path } = next()
    const t0 = performance.now()
    const answered = await send(method, path, body)
    if (answered.status < 200 || answered.status > 299) {
      recorder.non2xx++
      return recorder.sample(`${method} ${path} ${answered.status}`, answered.text)
    }
    recorder.ok++
    recorder.latencies.push(performance.now() - t0)
  })
