/**
 * The HTTP server: the merchant API (HttpApi), its OpenAPI document and reference page, behind the
 * gateway. Requires the domain use cases and ports; the edge (CLI `serve`, tests) provides them.
 */
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import { hostname } from "node:os"
import { pid } from "node:process"
import { NodeHttpServer } from "@effect/platform-node"
import { keepListed, MachineAddresses } from "@tender/domain"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import { Api } from "./Api.ts"
import * as Gateway from "./Gateway.ts"
import * as Health from "./Health.ts"
import * as Metrics from "./Metrics.ts"
import * as IpLimits from "./IpLimits.ts"
import { CustomersHandlers } from "./handlers/CustomersHandlers.ts"
import { EventsHandlers } from "./handlers/EventsHandlers.ts"
import { PaymentMethodsHandlers } from "./handlers/PaymentMethodsHandlers.ts"
import { PayoutsHandlers, RefundsHandlers } from "./handlers/OutflowsHandlers.ts"
import { OrdersHandlers, PaymentsHandlers, TransactionsHandlers } from "./handlers/PaymentsHandlers.ts"
import { SessionsHandlers, SessionTestHelpersHandlers } from "./handlers/SessionsHandlers.ts"
import { TestHelpersHandlers } from "./handlers/TestHelpersHandlers.ts"
import { TransfersHandlers } from "./handlers/TransfersHandlers.ts"
import { VaultHandlers } from "./handlers/VaultHandlers.ts"
import { WebhookDeliveriesHandlers, WebhookEndpointsHandlers } from "./handlers/WebhooksHandlers.ts"
import { AccountContextLive, ApiKeyAuthLive, RequestValidationLive } from "./Middleware.ts"
import * as Routes from "./Routes.ts"
import { stoppable } from "./Stopping.ts"
import * as ClientRoutes from "./client/ClientRoutes.ts"
import * as Console from "./console/Console.ts"
import * as CheckoutPage from "./hosted/CheckoutPage.ts"
import * as SandboxPages from "./hosted/SandboxPages.ts"
import * as SdkAssets from "./hosted/SdkAssets.ts"
import * as ProviderNotifications from "./providers/ProviderNotifications.ts"
import * as ProviderReturn from "./providers/ProviderReturn.ts"

export interface ServerOptions {
  readonly port: number
  readonly host: string
  /** Default token bucket per account (contract.md: 100/s, burst 200). */
  readonly rateLimit?: { readonly perSecond: number; readonly burst: number } | undefined
  /** Request body cap in bytes (default 1 MiB). */
  readonly maxBodyBytes?: number | undefined
  /** TENDER_FIELDS_URL: the secure card fields' host (default the public URL, contract.md). */
  readonly fieldsUrl?: string | undefined
  /** TENDER_SDK_URL: tender.js's host, as the hosted checkout page loads it (default the public URL). */
  readonly sdkUrl?: string | undefined
  /**
   * Per client IP (IpLimits.ts): the bucket of routes without an API key, the allowance of unknown
   * keys, and how many proxies' X-Forwarded-For to trust; each defaults to DEFAULT_IP_LIMITS'.
   */
  readonly ipLimits?: Partial<IpLimits.IpLimitOptions> | undefined
  /** TENDER_METRICS_TOKEN: a bearer token GET /metrics requires; unset → the env's, else open (Metrics.ts). */
  readonly metricsToken?: string | undefined
  /**
   * The operator console at /console (issue 26): `tender serve --console` or TENDER_CONSOLE=true.
   * Off (the default), no console route is mounted: every /console path is the gateway's 404.
   */
  readonly console?: boolean | undefined
}

export const DEFAULT_RATE_LIMIT = { perSecond: 100, burst: 200 } as const

export const OPENAPI_PATH = "/v1/openapi.json"
export const DOCS_PATH = "/docs"

const ApiRoutes = HttpApiBuilder.layer(Api, { openapiPath: OPENAPI_PATH }).pipe(
  Layer.provide([
    PaymentsHandlers,
    SessionsHandlers,
    SessionTestHelpersHandlers,
    OrdersHandlers,
    TransactionsHandlers,
    TransfersHandlers,
    PaymentMethodsHandlers,
    TestHelpersHandlers,
    VaultHandlers,
    WebhookEndpointsHandlers,
    WebhookDeliveriesHandlers,
    CustomersHandlers,
    RefundsHandlers,
    PayoutsHandlers,
    EventsHandlers
  ]),
  Layer.provide([AccountContextLive, ApiKeyAuthLive, RequestValidationLive])
)

const DocsRoute = HttpApiScalar.layer(Api, { path: DOCS_PATH })

/** Every route served beside the HttpApi value (the isolation matrix, test/IsolationSuite.ts, probes each one). */
export const ROUTES_OUTSIDE_API: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  { method: "GET", path: OPENAPI_PATH },
  { method: "GET", path: DOCS_PATH },
  ...SandboxPages.SANDBOX_ROUTES,
  ...ProviderReturn.PROVIDER_RETURN_ROUTES,
  ...CheckoutPage.CHECKOUT_ROUTES,
  ...SdkAssets.SDK_ROUTES,
  ...ClientRoutes.CLIENT_ROUTES,
  ...ProviderNotifications.NOTIFICATION_ROUTES,
  ...Health.HEALTH_ROUTES,
  { method: "GET", path: Metrics.METRICS_PATH }
]

const routeTable = Routes.fromApi(Api, ROUTES_OUTSIDE_API)
// Not in ROUTES_OUTSIDE_API: the console is no account's (the isolation matrix probes accounts'
// objects by their keys); its grants are tested in test/Console.test.ts.
const routeTableWithConsole = Routes.fromApi(Api, [...ROUTES_OUTSIDE_API, ...Console.CONSOLE_ROUTES])

/** The routes and the gateway, without a listening socket (tests can serve them on any server). */
export const app = (options: Omit<ServerOptions, "port" | "host">) => {
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024
  const defaultRateLimit = options.rateLimit ?? DEFAULT_RATE_LIMIT
  const ipLimits: IpLimits.IpLimitOptions = { ...IpLimits.DEFAULT_IP_LIMITS, ...options.ipLimits }
  return Layer.mergeAll(
    ApiRoutes,
    DocsRoute,
    SandboxPages.layer,
    ProviderReturn.layer,
    CheckoutPage.layer({ fieldsUrl: options.fieldsUrl, sdkUrl: options.sdkUrl }),
    SdkAssets.layer({ fieldsUrl: options.fieldsUrl }),
    ClientRoutes.layer({ maxBodyBytes, defaultRateLimit, fieldsUrl: options.fieldsUrl, trustedProxies: ipLimits.trustedProxies }),
    ProviderNotifications.layer({ maxBodyBytes }),
    Gateway.layer({ maxBodyBytes, defaultRateLimit, routes: options.console === true ? routeTableWithConsole : routeTable, ipLimits }),
    Health.layer,
    Layer.mergeAll(
      Metrics.layer({ token: options.metricsToken }),
      options.console === true ? Console.layer({ trustedProxies: ipLimits.trustedProxies }) : Layer.empty
    ).pipe(Layer.provide(Metrics.snapshotLayer))
  )
}

/**
 * Records where this process listens (ServerListeners: its port, its machine's addresses, both ports
 * the edge provides) while it serves: at start, every LISTENER_HEARTBEAT_MS after, removed at a
 * graceful stop (`keepListed`). Every process sharing the storage (a sibling `serve`, a standalone
 * `tender worker`) then refuses webhook endpoints on it (WebhookReceivers.ts).
 */
export const listening = Layer.effectDiscard(Effect.gen(function*() {
  const address = (yield* HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") return
  const addresses = yield* (yield* MachineAddresses).addresses
  // One row per process: a cluster's children share the port, and one stopping must not drop it.
  yield* keepListed(`${hostname()}:${pid}:${randomUUID()}`, { port: address.port, addresses })
}))

export const layer = (options: ServerOptions) =>
  // The default request logger costs a third or more of throughput (style.md); errors are logged
  // by the gateway instead.
  stoppable(Layer.merge(HttpRouter.serve(app(options), { disableLogger: true, routerConfig: Routes.ROUTER_CONFIG }), listening)).pipe(
    // Merged, not hidden: callers read the bound address (port 0 in tests) from HttpServer.
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port, host: options.host }))
  )
