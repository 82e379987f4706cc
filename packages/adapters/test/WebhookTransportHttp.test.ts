/** The webhook transport against real loopback servers: every outcome is a value, none a failure. */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { HostResolver, RESPONSE_BYTES, WebhookTransport } from "@tender/domain"
import { Deferred, Effect, Fiber, Layer, type Scope } from "effect"
import * as HostResolverDns from "../src/webhooks/HostResolverDns.ts"
import * as WebhookTransportHttp from "../src/webhooks/WebhookTransportHttp.ts"

interface Received {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
}

/** A loopback server for the test's scope; open connections are cut when it ends, so no test waits on them. */
const serve = (handler: (request: http.IncomingMessage, response: http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.callback<http.Server>((resume) => {
      const server = http.createServer(handler)
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map((server) => {
    const { port } = server.address() as AddressInfo
    return { server, port, url: `http://127.0.0.1:${port}` }
  }))

/** Answers with `status` once the request body is in, and records what arrived. */
const answering = (status: number, headers: http.OutgoingHttpHeaders = {}) =>
  Effect.gen(function*() {
    const received: Array<Received> = []
    const server = yield* serve((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        received.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks) })
        response.writeHead(status, { "content-type": "text/plain", ...headers }).end(`answered ${status}`)
      })
    })
    return { ...server, received }
  })

const BODY = new TextEncoder().encode(JSON.stringify({ id: "evt_1", type: "payment.succeeded", data: { amount: "10.00 €" } }))
const HEADERS = { "content-type": "application/json", "x-signature": "t=1,v1=abc", "x-tender-event": "payment.succeeded" }

const post = (url: string, timeoutMs = 15_000) =>
  Effect.flatMap(WebhookTransport, (transport) => transport.post({ url, headers: HEADERS, body: BODY, timeoutMs }))

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const started = Date.now()
    const value = yield* effect
    return { value, elapsed: Date.now() - started }
  })

describe("WebhookTransportHttp", () => {
  const live = <A, E>(name: string, test: () => Effect.Effect<A, E, WebhookTransport | Scope.Scope>) =>
    it.live(name, () => Effect.scoped(test()).pipe(Effect.provide(WebhookTransportHttp.layer.pipe(Layer.provide(HostResolverDns.layer)))))

  live("a 200 is Answered 200; the POST carries the headers and the exact body bytes", () =>
    Effect.gen(function*() {
      const server = yield* answering(200)
      const outcome = yield* post(`${server.url}/hooks?src=tender`)
      // With the receiver's answer, as it sent it.
      expect(outcome).toEqual({ _tag: "Answered", status: 200, duration_ms: expect.any(Number), body: "answered 200" })
      expect(outcome.duration_ms).toBeGreaterThanOrEqual(0)
      expect(server.received).toHaveLength(1)
      const [request] = server.received
      expect([request.method, request.url]).toEqual(["POST", "/hooks?src=tender"])
      expect(request.headers).toMatchObject(HEADERS)
      expect(request.body.equals(Buffer.from(BODY))).toBe(true)
    }))

  live("a 500 is Answered 500, not a failure", () =>
    Effect.gen(function*() {
      const server = yield* answering(500)
      expect(yield* post(server.url)).toMatchObject({ _tag: "Answered", status: 500 })
    }))

  live("a 302 is Answered 302: the redirect is not followed", () =>
    Effect.gen(function*() {
      const target = yield* answering(200)
      const server = yield* answering(302, { location: `${target.url}/elsewhere` })
      expect(yield* post(server.url)).toMatchObject({ _tag: "Answered", status: 302 })
      expect(server.received).toHaveLength(1)
      expect(target.received).toEqual([])
    }))

  live("a server that never answers is Failed, timed out, as soon as the timeout ends", () =>
    Effect.gen(function*() {
      const server = yield* serve(() => {
        // Reads the request and never answers.
      })
      const { elapsed, value } = yield* timed(post(server.url, 300))
      expect(value).toEqual({ _tag: "Failed", error: "timed out after 300 ms", duration_ms: expect.any(Number) })
      expect(value.duration_ms).toBeGreaterThanOrEqual(250)
      expect(elapsed).toBeLessThan(2_000)
    }))

  live("a server that stops in the middle of its body still answered: the status counts", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-length": "1000" })
        response.write("partial")
        setTimeout(() => response.destroy(), 20)
      })
      expect(yield* post(server.url)).toMatchObject({ _tag: "Answered", status: 200 })
    }))

  live("an endless response body is read only up to the limit, then the connection is dropped", () =>
    Effect.gen(function*() {
      const closed = yield* Deferred.make<number>()
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "application/octet-stream" })
        const chunk = Buffer.alloc(16 * 1024, 120)
        let written = 0
        const pump = () => {
          while (!response.destroyed && response.write(chunk)) written += chunk.length
        }
        response.on("drain", pump)
        response.on("close", () => Deferred.doneUnsafe(closed, Effect.succeed(written)))
        pump()
      })
      const { elapsed, value } = yield* timed(post(server.url, 10_000))
      expect(value).toMatchObject({ _tag: "Answered", status: 200 })
      // Of the body only its start is kept (RESPONSE_BYTES), whatever was read past it.
      expect(value._tag === "Answered" && value.body).toBe("x".repeat(RESPONSE_BYTES))
      expect(elapsed).toBeLessThan(5_000)
      // The server saw the connection go long before an endless body could end.
      expect(yield* Deferred.await(closed)).toBeLessThan(64 * 1024 * 1024)
    }))

  live("a refused connection (a closed port) is Failed with the reason", () =>
    Effect.gen(function*() {
      const port = yield* Effect.scoped(Effect.map(serve(() => {}), (server) => server.port))
      const outcome = yield* post(`http://127.0.0.1:${port}/hooks`)
      expect(outcome).toMatchObject({ _tag: "Failed", error: expect.stringContaining("ECONNREFUSED") })
    }))

  live("a host that does not resolve is Failed with the reason", () =>
    Effect.gen(function*() {
      const outcome = yield* post("https://does-not-exist.invalid/hooks", 5_000)
      expect(outcome._tag).toBe("Failed")
      expect(outcome._tag === "Failed" && outcome.error).toMatch(/does not resolve|timed out/)
    }))

  live("an interrupted attempt aborts its request", () =>
    Effect.gen(function*() {
      const arrived = yield* Deferred.make<void>()
      const aborted = yield* Deferred.make<void>()
      const server = yield* serve((request) => {
        Deferred.doneUnsafe(arrived, Effect.void)
        request.socket.on("close", () => Deferred.doneUnsafe(aborted, Effect.void))
      })
      const attempt = yield* Effect.forkChild(post(server.url, 60_000))
      yield* Deferred.await(arrived)
      yield* Fiber.interrupt(attempt)
      yield* Deferred.await(aborted).pipe(Effect.timeout("2 seconds"))
    }))

  live("attempts to one endpoint reuse a kept-alive connection", () =>
    Effect.gen(function*() {
      const server = yield* answering(200)
      let connections = 0
      server.server.on("connection", () => connections++)
      for (let i = 0; i < 3; i++) expect(yield* post(`${server.url}/hooks`)).toMatchObject({ _tag: "Answered", status: 200 })
      expect(server.received).toHaveLength(3)
      expect(connections).toBe(1)
    }))
})

describe("WebhookTransportHttp keep-alive and the SSRF check", () => {
  it.live("a name that resolves elsewhere since is not sent over the connection kept to the old address", () =>
    Effect.gen(function*() {
      // What `localhost` resolves to, as the check of each attempt asks for it.
      let answer = ["127.0.0.1"]
      const resolver = Layer.succeed(HostResolver, HostResolver.of({ resolve: () => Effect.sync(() => answer) }))
      const reached: Array<string | undefined> = []
      const server = yield* Effect.acquireRelease(
        Effect.callback<http.Server>((resume) => {
          const server = http.createServer((request, response) => {
            reached.push(request.socket.localAddress)
            request.resume()
            request.on("end", () => response.writeHead(200).end())
          })
          server.listen(0, "0.0.0.0", () => resume(Effect.succeed(server)))
        }),
        (server) =>
          Effect.callback<void>((resume) => {
            server.closeAllConnections()
            server.close(() => resume(Effect.void))
          })
      )
      let connections = 0
      server.on("connection", () => connections++)
      const url = `http://localhost:${(server.address() as AddressInfo).port}/hooks`
      yield* Effect.gen(function*() {
        expect(yield* post(url)).toMatchObject({ _tag: "Answered", status: 200 })
        expect(yield* post(url)).toMatchObject({ _tag: "Answered", status: 200 })
        answer = ["127.0.0.2"]
        expect(yield* post(url)).toMatchObject({ _tag: "Answered", status: 200 })
      }).pipe(Effect.provide(WebhookTransportHttp.layer.pipe(Layer.provide(resolver))))
      expect(reached.map((address) => address?.replace(/^::ffff:/, ""))).toEqual(["127.0.0.1", "127.0.0.1", "127.0.0.2"])
      // The first two shared a connection; the new address got its own.
      expect(connections).toBe(2)
    }).pipe(Effect.scoped))
})
