/**
 * A webhook endpoint for Tender on node:http, built on ./webhooks.ts.
 *
 *   TENDER_SIGNING_SECRET=whsec_… npx node examples/webhook-receiver.ts [--port 4242] [--path /webhooks/tender]
 *
 * then register it: POST /v1/webhook_endpoints {"url": "https://<your host>/webhooks/tender"}. Answers
 * 200 for accepted events and duplicates (a duplicate is already handled, so the sender must stop
 * retrying it), 400 for a bad or expired signature or an unreadable body, and logs one line for each.
 */
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { createWebhookHandler, type Envelope, PaymentStatusBook, type StatusUpdate, type WebhookResult } from "./webhooks.ts"

export interface ReceiverOptions {
  readonly signingSecret: string
  /** 0 picks a free port. */
  readonly port?: number
  readonly host?: string
  /** The path of the registered endpoint URL, without its query; the only one this server answers on. */
  readonly path?: string
  /** Milliseconds since the epoch, like `Date.now`; injectable for tests. */
  readonly now?: () => number
  readonly log?: (line: string) => void
  /**
   * Your business logic: fulfil, release or record the order. Called after the 200 is sent, so a
   * slow handler never makes Tender time out (15 s) and deliver the event again.
   */
  readonly onEvent?: (event: Envelope, status: StatusUpdate | undefined) => void | Promise<void>
}

export interface Receiver {
  /** The endpoint's full URL, path included: the one to register with Tender. */
  readonly url: string
  /** Accepted events in arrival order (duplicates and rejections are not added). */
  readonly accepted: Array<Envelope>
  readonly statuses: PaymentStatusBook
  close(): Promise<void>
}

/** Deliveries are small JSON documents; anything far larger is not from Tender. */
const MAX_BODY_BYTES = 1024 * 1024

/** The body's bytes exactly as sent, or `undefined` when larger than MAX_BODY_BYTES. */
const readRawBody = async (request: IncomingMessage): Promise<Buffer | undefined> => {
  const chunks: Array<Buffer> = []
  let size = 0
  // Reads to the end even when too large, so the 413 still reaches the sender on this connection.
  for await (const chunk of request) {
    const buffer = chunk as Buffer
    size += buffer.length
    if (size <= MAX_BODY_BYTES) chunks.push(buffer)
  }
  return size <= MAX_BODY_BYTES ? Buffer.concat(chunks) : undefined
}

const header = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

const describe = (result: WebhookResult): string => {
  if (!result.accepted) {
    return result.reason === "duplicate" ? `duplicate ${result.event?.id} ${result.event?.type} (already handled)` : `rejected ${result.reason}`
  }
  const { event, status } = result
  if (status === undefined) return `accepted ${event.id} ${event.type}`
  const kept = status.applied ? "" : ` (${status.reported} ignored: ${status.ignored === "final" ? "already final" : "older than the status kept"})`
  return `accepted ${event.id} ${event.type} ${status.orderId} → ${status.current}${kept}`
}

export const startReceiver = async (options: ReceiverOptions): Promise<Receiver> => {
  const path = options.path ?? "/webhooks/tender"
  const log = options.log ?? ((line: string) => console.log(line))
  const statuses = new PaymentStatusBook()
  const accepted: Array<Envelope> = []
  const handle = createWebhookHandler({
    signingSecret: options.signingSecret,
    path,
    statuses,
    ...(options.now !== undefined ? { now: options.now } : {})
  })

  const server = createServer((request, response) => {
    const reply = (status: number, body: object) => {
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
    }
    // Tender signs the endpoint URL's path without its query, so a query (a routing token, say)
    // may follow; a request to any other path is not a delivery.
    if ((request.url ?? "").split("?")[0] !== path) return reply(404, { error: "not_found" })
    if (request.method !== "POST") return reply(405, { error: "method_not_allowed" })

    readRawBody(request).then(
      (raw) => {
        if (raw === undefined) {
          log("rejected body_too_large")
          return reply(413, { error: "body_too_large" })
        }
        const result = handle(raw, {
          "x-signature": header(request, "x-signature"),
          "x-event-id": header(request, "x-event-id"),
          "x-event-type": header(request, "x-event-type")
        })
        log(describe(result))
        if (!result.accepted && result.reason !== "duplicate") return reply(400, { error: result.reason })
        reply(200, { received: true })
        if (result.accepted) {
          accepted.push(result.event)
          // After the response: the sender has its 2xx whatever the business logic does.
          if (options.onEvent !== undefined) {
            const onEvent = options.onEvent
            setImmediate(() => {
              Promise.resolve()
                .then(() => onEvent(result.event, result.status))
                .catch((error: unknown) => log(`onEvent failed for ${result.event.id}: ${String(error)}`))
            })
          }
        }
      },
      // The client went away mid-body: there is no one left to answer.
      (error: unknown) => log(`rejected unreadable request: ${String(error)}`)
    )
  })

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 4242, options.host ?? "127.0.0.1", () => resolve())
  })
  const { address, port } = server.address() as AddressInfo
  const hostForUrl = address.includes(":") ? `[${address}]` : address
  return {
    url: `http://${hostForUrl}:${port}${path}`,
    accepted,
    statuses,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        // Keep-alive connections would otherwise hold close() open.
        server.closeAllConnections()
      })
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href

if (isMain) {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "4242" },
      host: { type: "string", default: "127.0.0.1" },
      path: { type: "string", default: "/webhooks/tender" }
    }
  })
  const signingSecret = process.env.TENDER_SIGNING_SECRET
  const port = Number(values.port)
  if (!signingSecret) {
    console.error("Set TENDER_SIGNING_SECRET (the account's signing secret, from `npx tender accounts create --json`).")
    process.exit(2)
  }
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`--port must be a port number, not ${values.port}`)
    process.exit(2)
  }
  const receiver = await startReceiver({ signingSecret, port, host: values.host, path: values.path })
  console.log(`listening on ${receiver.url}`)
  const stop = () => void receiver.close().then(() => process.exit(0))
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
}
