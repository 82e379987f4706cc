/**
 * A test kit: starts the real server (API, hosted pages, workers) on a loopback port over the
 * in-memory adapters (or PostgreSQL), and sends requests signed the way a merchant's server does.
 * Tender's own HTTP and example tests use it; so can a service that embeds Tender.
 */
import { Accounts, EventRepo, type Payment, UseCases, Workers } from "@tender/domain"
import { createServer as createNetServer } from "node:net"
import { Infrastructure } from "@tender/adapters"
import type { TenderConfig } from "@tender/adapters/Config"
import { signatureHeader } from "@tender/adapters/Signature"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { HttpRouter, HttpServer } from "effect/http"
import * as Server from "../Server.ts"

export interface TestServer {
  readonly baseUrl: string
  readonly accounts: Accounts["Service"]
  /** The events recorded for an order, oldest first (the outbox, read in-process). */
  readonly events: (orderId: string) => Effect.Effect<ReadonlyArray<Payment.PaymentEvent>>
  /** Runs an effect over the server's own ports, e.g. to store a record that no request can create. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, Infrastructure.Ports>) => Promise<A>
  readonly close: () => Promise<void>
}

/** A free loopback port, known before the server starts so hosted-page URLs can point at it. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createNetServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => typeof address === "object" && address !== null ? resolve(address.port) : reject(address))
    })
  })

export const startTestServer = async (
  options: Partial<Server.ServerOptions> = {},
  /** Routes added beside the API (e.g. one that fails, to see how the gateway renders a defect). */
  extraRoutes: Layer.Layer<never, never, HttpRouter.HttpRouter> = Layer.empty,
  storage: Pick<TenderConfig, "storage" | "dataDir" | "sandboxLatencyMs"> = { storage: "memory", dataDir: ".tender-test" }
): Promise<TestServer> => {
  const port = await freePort()
  const infrastructure = Infrastructure.layer({ ...storage, publicUrl: `http://127.0.0.1:${port}` })
  const domain = UseCases.layer.pipe(Layer.provideMerge(infrastructure))
  const layer = Layer.merge(
    HttpRouter.serve(Layer.merge(Server.app(options), extraRoutes), { disableLogger: true, disableListenLog: true }),
    Workers.layer({ webhooks: { idleMs: 50 } })
  ).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })),
    Layer.provideMerge(domain)
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    accounts: Context.get(context, Accounts),
    events: Context.get(context, EventRepo).listByOrder,
    run: (effect) => Effect.runPromise(Effect.provideContext(effect, context)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

export interface Credentials {
  readonly secret_key: string
  readonly signing_secret: string
}

export interface SendOptions {
  readonly body?: string | undefined
  readonly headers?: Record<string, string> | undefined
  /** Override the signature header entirely (`null` = send none). */
  readonly signature?: string | null | undefined
  /** Sign at this unix time instead of now. */
  readonly timestamp?: number | undefined
  /** Sign with this secret instead of the account's. */
  readonly signingSecret?: string | undefined
  /** Sign this body instead of the one sent (tampering). */
  readonly signedBody?: string | undefined
}

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

/** Sends a request signed like a merchant server would, unless told otherwise. */
export const send = async (
  server: TestServer,
  creds: Credentials | undefined,
  method: string,
  pathWithQuery: string,
  options: SendOptions = {}
): Promise<Reply> => {
  const headers: Record<string, string> = {}
  if (creds !== undefined) headers.authorization = `Bearer ${creds.secret_key}`
  if (options.body !== undefined) headers["content-type"] = "application/json"
  if (options.signature !== undefined) {
    if (options.signature !== null) headers["x-signature"] = options.signature
  } else if (creds !== undefined) {
    const t = options.timestamp ?? Math.floor(Date.now() / 1000)
    headers["x-signature"] = signatureHeader(
      options.signingSecret ?? creds.signing_secret,
      t,
      pathWithQuery,
      options.signedBody ?? options.body ?? ""
    )
  }
  Object.assign(headers, options.headers)
  const response = await fetch(server.baseUrl + pathWithQuery, {
    method,
    headers,
    ...(options.body !== undefined ? { body: options.body } : {})
  })
  const text = await response.text()
  let json: unknown = undefined
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}
