/**
 * The webhook bench's receiver: a bare node:http server on loopback that answers every POST 200 at
 * once (or, while `hold` is on, keeps its requests unanswered until `release`), and records for each
 * X-Event-Id when its first POST arrived (`performance.now()`, the clock the load loop stamps its
 * responses with), how many POSTs it got, and the envelope's `type` and `data.order_id`. It checks
 * each X-Signature against the account's signing secret and counts the ones that do not verify.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { performance } from "node:perf_hooks"
import { verifySignature } from "@tender/api/Signature"
import { LOOPBACK } from "./harness.ts"

export interface Arrival {
  /** performance.now() when the first POST's headers arrived. */
  readonly firstAt: number
  /** POSTs carrying this event id (more than one: duplicates). */
  count: number
  type: string | undefined
  orderId: string | undefined
}

export class Receiver {
  readonly events = new Map<string, Arrival>()
  /** performance.now() of every POST, in arrival order. */
  readonly arrivals: Array<number> = []
  /** POSTs without an X-Event-Id, with a body that is not an envelope, or on another path. */
  malformed = 0
  badSignatures = 0
  private held: Array<ServerResponse> = []
  private holding = false

  private readonly server: Server
  readonly url: string
  private readonly signingSecret: string

  private constructor(server: Server, url: string, signingSecret: string) {
    this.server = server
    this.url = url
    this.signingSecret = signingSecret
  }

  static async start(signingSecret: string, path: string): Promise<Receiver> {
    let receiver: Receiver | undefined
    const server = createServer((request, response) => receiver!.handle(request, response))
    // Tender's dispatcher keeps its connections alive; so does the receiver.
    server.keepAliveTimeout = 60_000
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(0, LOOPBACK, () => resolve())
    })
    const port = (server.address() as AddressInfo).port
    receiver = new Receiver(server, `http://${LOOPBACK}:${port}${path}`, signingSecret)
    return receiver
  }

  get requests() {
    return this.arrivals.length
  }

  /** From now on, POSTs get no answer until `release` (Tender's attempt times out after 15 s). */
  hold() {
    this.holding = true
  }

  /** Answers the held POSTs 200 and every later one at once; how many were held. */
  release(): number {
    this.holding = false
    const held = this.held
    this.held = []
    for (const response of held) response.writeHead(200).end()
    return held.length
  }

  private handle(request: IncomingMessage, response: ServerResponse) {
    const at = performance.now()
    this.arrivals.push(at)
    const header = request.headers["x-event-id"]
    const eventId = typeof header === "string" ? header : undefined
    let arrival: Arrival | undefined
    if (eventId !== undefined) {
      arrival = this.events.get(eventId)
      if (arrival === undefined) {
        arrival = { firstAt: at, count: 0, type: undefined, orderId: undefined }
        this.events.set(eventId, arrival)
      }
      arrival.count++
    }
    // The answer does not wait for the body: 200 at once (the body is still read, below).
    if (this.holding) this.held.push(response)
    else response.writeHead(200).end()
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks)
      const path = new URL(request.url ?? "/", this.url).pathname
      const signature = request.headers["x-signature"]
      if (
        verifySignature(this.signingSecret, typeof signature === "string" ? signature : undefined, path, body, Math.floor(Date.now() / 1000)) !==
          "valid"
      ) this.badSignatures++
      let envelope: { id?: unknown; type?: unknown; data?: { order_id?: unknown } } | undefined
      try {
        envelope = JSON.parse(body.toString("utf8"))
      } catch {
        envelope = undefined
      }
      if (
        arrival === undefined || envelope === undefined || envelope.id !== eventId || path !== new URL(this.url).pathname ||
        request.method !== "POST"
      ) {
        this.malformed++
        return
      }
      if (typeof envelope.type === "string") arrival.type = envelope.type
      if (typeof envelope.data?.order_id === "string") arrival.orderId = envelope.data.order_id
    })
  }

  close(): Promise<void> {
    this.release()
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}
