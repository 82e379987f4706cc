/**
 * What every provider's wire-level fake shares (Stripe's and Adyen's): the per-call-kind fault
 * switch that makes ambiguous outcomes reproducible, a local server harness that listens on
 * 127.0.0.1, can refuse connections (stop listening) and accept them again on the same port, and
 * the outbox that POSTs webhooks/notifications. One home, so that a test drives every fake's
 * faults the same way (`fault`, `refuse`, `accept`, `delivered`, `close`).
 */
import type * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"

/**
 * `timeout`: apply, never answer; `5xx`: answer 500 without applying; `applyThenDrop`: apply, then
 * destroy the socket. Refusing connections is the server's `refuse()`, not a per-call fault.
 */
export type Fault = "timeout" | "5xx" | "applyThenDrop"

/** Faults queued per call kind, consumed one per call. */
export const faultSwitch = <Kind extends string>() => {
  const queued = new Map<Kind, Array<Fault>>()
  return {
    /** The next `times` calls of `kind` fail with `fault`. */
    set(kind: Kind, fault: Fault, times = 1) {
      queued.set(kind, [...(queued.get(kind) ?? []), ...Array<Fault>(times).fill(fault)])
    },
    /** This call's fault, if one is queued for its kind. */
    take: (kind: Kind): Fault | undefined => queued.get(kind)?.shift()
  }
}

/**
 * Sends `reply` unless this call's fault loses the answer: `timeout` never answers (the call was
 * applied, or replayed), `applyThenDrop` destroys the socket. A `5xx` is each fake's own (whether
 * the provider keeps it under the idempotency key differs), so it is answered before this.
 */
export const answerUnless = (fault: Fault | undefined, req: http.IncomingMessage, send: () => void) => {
  if (fault === "timeout") return
  if (fault === "applyThenDrop") return void req.socket.destroy()
  send()
}

export const readBody = (req: http.IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** Listens on 127.0.0.1 (a free port); `refuse` stops listening and drops open connections until `accept`. */
export const listenLocal = async (server: http.Server) => {
  const sockets = new Set<Socket>()
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject)
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject)
        resolve((server.address() as AddressInfo).port)
      })
    })
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
  const port = await listen(0)
  return { port, refuse: stop, accept: () => listen(port).then(() => undefined), close: stop }
}

/**
 * Serves `handle` on 127.0.0.1 (see `listenLocal`); a handler that throws answers by `crashed`, as
 * the provider's own internal error would, so that a bug in a fake reads as a 500, not a hang.
 */
export const serveLocal = async (
  server: http.Server,
  scheme: "http" | "https",
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>,
  crashed: (res: http.ServerResponse, error: unknown) => void
) => {
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) crashed(res, error)
    })
  })
  const listener = await listenLocal(server)
  return { ...listener, url: `${scheme}://127.0.0.1:${listener.port}` }
}

/** POSTs events to the merchant's endpoint without waiting; `delivered` waits for those started so far. */
export const outbox = () => {
  const deliveries: Array<Promise<unknown>> = []
  return {
    /** A failed delivery is the receiver's problem, not the fake's: it is dropped, as the tests look at what arrived. */
    post(url: string, headers: Record<string, string>, body: string) {
      deliveries.push(
        fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })
          .then((response) => response.arrayBuffer(), () => undefined)
      )
    },
    delivered: () => Promise.all(deliveries).then(() => undefined)
  }
}

/**
 * The controls every fake hands its tests, in one shape: faults per call kind, refusing and
 * accepting connections, waiting for deliveries, closing.
 */
export const controls = <Kind extends string>(
  faults: ReturnType<typeof faultSwitch<Kind>>,
  listener: Awaited<ReturnType<typeof serveLocal>>,
  sent: ReturnType<typeof outbox>
) => ({
  port: listener.port,
  url: listener.url,
  /** The next `times` calls of `kind` fail with `fault`. */
  fault: faults.set,
  /** Stops listening and drops open connections: every call is refused (ECONNREFUSED) until `accept`. */
  refuse: listener.refuse,
  accept: listener.accept,
  /** Waits for the webhook/notification deliveries started so far. */
  delivered: sent.delivered,
  close: listener.close
})
