/**
 * A test kit: starts the real server (API, hosted pages, workers) on a loopback port over the
 * in-memory adapters (or PostgreSQL). Tender's own HTTP and example tests use it; so can a service
 * that embeds Tender. Requests go through @tender/client: the typed client, or its raw path
 * (`send` in @tender/client/Testing) for requests malformed on purpose. Every `/v1/` answer is
 * checked against the served OpenAPI document; what it does not describe is listed in
 * `ResponseCheck.undescribed` (Tender's own test files fail on any).
 */
import { Accounts, Channels, EventRepo, type Payment, UseCases, Workers } from "@tender/domain"
import { createServer as createNetServer } from "node:net"
import { Infrastructure } from "@tender/adapters"
import type { TenderConfig } from "@tender/adapters/Config"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { HttpRouter, HttpServer } from "effect/http"
import { OpenApi } from "effect/http-api"
import { Api } from "../Api.ts"
import * as Routes from "../Routes.ts"
import * as Server from "../Server.ts"
import * as Stopping from "../Stopping.ts"
import * as ResponseCheck from "./ResponseCheck.ts"

export interface TestServer {
  readonly baseUrl: string
  readonly accounts: Accounts["Service"]
  /** The operator's channels (`tender accounts channels …`): an account's Stripe and Adyen channels. */
  readonly channels: Channels["Service"]
  /** The events recorded for an order, oldest first (the outbox, read in-process). */
  readonly events: (orderId: string) => Effect.Effect<ReadonlyArray<Payment.PaymentEvent>>
  /**
   * Runs an effect over the server's own ports and use cases, e.g. to store a record that no request
   * can create, or to do what an operator's CLI does (Channels.add).
   */
  readonly run: <A, E>(effect: Effect.Effect<A, E, Infrastructure.Ports | Layer.Success<typeof UseCases.layer>>) => Promise<A>
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

/** The served document's checker, built once per test file (module instance), when a server first answers. */
let checker: Promise<ResponseCheck.Checker> | undefined
const documentChecker = () => checker ??= ResponseCheck.makeChecker(OpenApi.fromApi(Api))

export const startTestServer = async (
  options: Partial<Server.ServerOptions> = {},
  /** Routes added beside the API (e.g. one that fails, to see how the gateway renders a defect). */
  extraRoutes: Layer.Layer<never, never, HttpRouter.HttpRouter> = Layer.empty,
  /**
   * Storage (`databaseUrl` and `vaultKey` for a PostgreSQL reached by URL), and where channels'
   * providers are (the wire-level fakes: `providerEndpoints`); `redisUrl` for what several processes
   * share through Redis.
   */
  storage: Pick<TenderConfig, "storage" | "dataDir" | "databaseUrl" | "readDatabaseUrl" | "vaultKey" | "sandboxLatencyMs" | "providerEndpoints" | "providerTimeoutMs" | "redisUrl"> = {
    storage: "memory",
    dataDir: ".tender-test"
  },
  /** Provided around everything, as `tender serve` provides Telemetry.layer: a logger or tracer under test. */
  around: Layer.Layer<never> = Layer.empty
): Promise<TestServer> => {
  const port = await freePort()
  const infrastructure = Infrastructure.layer({ ...storage, publicUrl: `http://127.0.0.1:${port}`, listenPort: port })
  const domain = UseCases.layer.pipe(Layer.provideMerge(infrastructure))
  const layer = Layer.mergeAll(
    Stopping.stoppable(
      HttpRouter.serve(Layer.merge(Server.app(options), extraRoutes), { disableLogger: true, disableListenLog: true, routerConfig: Routes.ROUTER_CONFIG })
    ),
    Server.listening,
    // Expiry rounds every half second rather than 5 s: a test that closes a window waits for the round.
    Workers.layer({ webhooks: { idleMs: 50 }, expiryEvery: "500 millis" })
  ).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => {
      // Every /v1/ answer is checked against the served document (ResponseCheck.ts); a test's own
      // extra routes are not in it, so with them an unknown operation is not judged.
      const server = createServer()
      server.on("request", ResponseCheck.tap(documentChecker(), { judgeUnknownOperations: extraRoutes === Layer.empty, pathOf: Routes.routedPath }))
      return server
    }, { port, host: "127.0.0.1" })),
    Layer.provideMerge(domain),
    Layer.provide(around)
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    accounts: Context.get(context, Accounts),
    channels: Context.get(context, Channels),
    events: Context.get(context, EventRepo).listByOrder,
    run: (effect) => Effect.runPromise(Effect.provideContext(effect, context)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
