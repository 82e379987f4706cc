/**
 * What every provider's wire-level fake shares (Stripe's and Adyen's): the per-call-kind fault
 * switch that makes ambiguous outcomes reproducible, and a local server harness that listens on
 * 127.0.0.1, can refuse connections (stop listening) and accept them again on the same port.
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
