/**
 * The handler of `tender serve` (commands/Serve.ts declares it): the merchant API, hosted pages and
 * workers over the configured storage, until SIGINT or SIGTERM. Interruption closes the layer's scope, which stops the server and, when this
 * process started it, the embedded PostgreSQL. With `--workers N` above 1 this process is the
 * primary of N such servers on one port (Cluster.ts); each child runs the branch below.
 */
import * as net from "node:net"
import type { TenderConfig } from "@tender/adapters/Config"
import { Errors } from "@tender/domain"
import * as IpLimits from "@tender/http/IpLimits"
import * as Server from "@tender/http/Server"
import { causeMessage, InfrastructureError } from "@tender/adapters/InfrastructureError"
import * as EmbeddedPostgres from "@tender/adapters/storage/postgres/Embedded"
import * as Telemetry from "@tender/adapters/Telemetry"
import { Config, Effect, Layer } from "effect"
import type { Invocation } from "../Cli.ts"
import * as Cluster from "../Cluster.ts"
import * as Services from "../Services.ts"
import { workers } from "./Worker.ts"

/** The default token bucket of accounts without their own (contract.md); each variable on its own. */
const defaultRateLimit = Effect.gen(function*() {
  const perSecond = yield* Config.Int("TENDER_RATE_LIMIT_PER_SECOND").pipe(Config.withDefault(Server.DEFAULT_RATE_LIMIT.perSecond))
  const burst = yield* Config.Int("TENDER_RATE_LIMIT_BURST").pipe(Config.withDefault(Math.max(Server.DEFAULT_RATE_LIMIT.burst, perSecond)))
  if (perSecond < 1 || burst < perSecond) {
    return yield* new Errors.ValidationFailed({
      message: "TENDER_RATE_LIMIT_PER_SECOND must be positive and TENDER_RATE_LIMIT_BURST at least as large"
    })
  }
  return { perSecond, burst }
})

/** Per client IP (docs/decisions.md, "Fair resource use"): each variable on its own, defaults IpLimits.DEFAULT_IP_LIMITS'. */
const ipLimits = Effect.gen(function*() {
  const defaults = IpLimits.DEFAULT_IP_LIMITS
  const perSecond = yield* Config.Number("TENDER_IP_RATE_LIMIT_PER_SECOND").pipe(Config.withDefault(defaults.perIp.perSecond))
  const burst = yield* Config.Int("TENDER_IP_RATE_LIMIT_BURST").pipe(Config.withDefault(Math.max(defaults.perIp.burst, Math.ceil(perSecond))))
  const unknownPerMinute = yield* Config.Number("TENDER_UNKNOWN_KEYS_PER_MINUTE").pipe(Config.withDefault(defaults.unknownKeys.perSecond * 60))
  const unknownBurst = yield* Config.Int("TENDER_UNKNOWN_KEYS_BURST").pipe(Config.withDefault(defaults.unknownKeys.burst))
  const trustedProxies = yield* Config.Int("TENDER_TRUSTED_PROXIES").pipe(Config.withDefault(defaults.trustedProxies))
  const notifyPerSecond = yield* Config.Number("TENDER_NOTIFY_RATE_LIMIT_PER_SECOND").pipe(Config.withDefault(defaults.notifications.perSecond))
  const notifyBurst = yield* Config.Int("TENDER_NOTIFY_RATE_LIMIT_BURST").pipe(
    Config.withDefault(Math.max(defaults.notifications.burst, Math.ceil(notifyPerSecond)))
  )
  if (
    !(perSecond > 0) || burst < 1 || !(unknownPerMinute > 0) || unknownBurst < 1 || trustedProxies < 0 ||
    !(notifyPerSecond > 0) || notifyBurst < 1
  ) {
    return yield* new Errors.ValidationFailed({
      message: "TENDER_IP_RATE_LIMIT_PER_SECOND, TENDER_NOTIFY_RATE_LIMIT_PER_SECOND and TENDER_UNKNOWN_KEYS_PER_MINUTE must be " +
        "positive, their bursts at least 1, TENDER_TRUSTED_PROXIES 0 or more"
    })
  }
  return {
    perIp: { perSecond, burst },
    notifications: { perSecond: notifyPerSecond, burst: notifyBurst },
    unknownKeys: { perSecond: unknownPerMinute / 60, burst: unknownBurst },
    trustedProxies
  } satisfies IpLimits.IpLimitOptions
})

/**
 * Stack traces (`TENDER_STACK_TRACES`, default off): Effect captures one at every span it opens,
 * several per request, which cost a few per cent of the server's CPU under load. Off, errors keep
 * their messages and lose their frames (`Error.stackTraceLimit = 0`, which is what turns Effect's
 * capture off); `true` keeps Node's default for debugging. Tests and the in-process servers keep them.
 */
const stackTraces = Config.Boolean("TENDER_STACK_TRACES").pipe(Config.withDefault(false))

/**
 * Why this process cannot listen on `host:port`, in the words an operator acts on: the pre-check
 * below and a listen that fails anyway (another process took the port meanwhile) say the same.
 */
const listenError = (host: string, port: number, cause: unknown) => {
  const code = typeof cause === "object" && cause !== null ? (cause as NodeJS.ErrnoException).code : undefined
  const message = code === "EADDRINUSE"
    ? `port ${port} is in use (another server?): stop it or choose another with --port or PORT`
    : code === "EACCES"
    ? `port ${port} needs privileges this user does not have (ports below 1024 do): choose another with --port or PORT`
    : code === "EADDRNOTAVAIL"
    ? `address ${host} is not one of this machine's: choose another with --host`
    : code === "ENOTFOUND" || code === "EAI_AGAIN"
    ? `host ${host} is not found: choose another with --host`
    : `could not listen on ${host}:${port} (${causeMessage(cause)}): choose another port with --port or PORT`
  return new InfrastructureError({ message, cause })
}

/**
 * Binds the port and lets it go, before anything else starts (the embedded PostgreSQL, the
 * migrations, a cluster's children): a port in use fails the start at once, naming it. Port 0 (any
 * free port) needs no check.
 */
const checkPort = (host: string, port: number) =>
  port === 0 ? Effect.void : Effect.callback<void, InfrastructureError>((resume) => {
    const probe = net.createServer()
    probe.once("error", (error) => resume(Effect.fail(listenError(host, port, error))))
    probe.listen({ host, port }, () => probe.close(() => resume(Effect.void)))
  })

/**
 * What can be checked before anything starts, in the order an operator would fix them: the port,
 * then, with the embedded PostgreSQL, its data directory (which also holds the generated vault key,
 * resolved next). A cluster's children skip it: their primary checked.
 */
const preflight = (config: TenderConfig, host: string, port: number) =>
  Effect.andThen(
    checkPort(host, port),
    config.storage === "postgres" && config.databaseUrl === undefined ? EmbeddedPostgres.checkDataDir(config.dataDir) : Effect.void
  )

interface ServeInput {
  readonly port: number
  readonly host: string
  readonly background: boolean
  readonly workers: number
  /** The operator console at /console; a cluster's children get the same flag (the primary's argv) or env. */
  readonly console: boolean
}

export const serve = ({ background, console, host, port, workers: processes }: ServeInput, { config }: Invocation) =>
  Effect.flatMap(Effect.all([defaultRateLimit, ipLimits, stackTraces]), ([rateLimit, perIp, traces]): Effect.Effect<never, unknown> => {
    if (!traces) Error.stackTraceLimit = 0
    // Hosted pages and sandbox redirects need an address browsers can reach; without
    // TENDER_PUBLIC_URL it is this server's own.
    const local = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host
    const withUrl = { ...config, publicUrl: config.publicUrl ?? `http://${local}:${port}`, listenPort: port, clusterChild: Cluster.isChild() }
    const single = Layer.launch(
      Layer.merge(
        Server.layer({ port, host, rateLimit, ipLimits: perIp, fieldsUrl: withUrl.fieldsUrl, sdkUrl: withUrl.sdkUrl, console }),
        background ? workers(withUrl) : Layer.empty
      ).pipe(
        Layer.provide(Services.layer(withUrl)),
        // Logs (TENDER_LOG_FORMAT) and, with OTEL_EXPORTER_OTLP_ENDPOINT, traces: Telemetry.ts.
        Layer.provide(Telemetry.layer())
      )
    ).pipe(Effect.catchTag("ServeError", (error) => Effect.fail(listenError(host, port, error.cause))))
    // A child reports a failed start to its primary, which stops the others and says it once.
    if (Cluster.isChild()) return Effect.andThen(Cluster.followPrimary, single).pipe(Effect.catch(Cluster.failedStart))
    const cluster = processes > 1 && config.storage === "postgres"
    // Memory storage lives in one process: an order created in one child could not be read in another.
    const warning = processes > 1 && !cluster
      ? Effect.logWarning(`tender serve: memory storage runs in one process; --workers ${processes} ignored`)
      : Effect.void
    return preflight(config, host, port).pipe(
      Effect.andThen(warning),
      Effect.andThen(cluster ? Cluster.primary(config, processes) : single)
    )
  })
