/**
 * The driven side, assembled from a `TenderConfig`: storage (PostgreSQL or memory), the card vault,
 * locks and rate limits (Redis or in-process), ids and key hashing, and the webhook transport with
 * the host resolver its URL checks use. The HTTP server and the CLI
 * compose their use cases over this one layer.
 *
 *   layer(config)    every port; with postgres storage it starts or joins the embedded PostgreSQL
 *                    (DATABASE_URL unset) and applies pending migrations before it is ready. The
 *                    fault points of `TENDER_FAULT` (Faults.ts) come with it, one counter for the
 *                    use cases and the sandbox alike.
 *   migrate(config)  applies pending migrations and returns the names it applied.
 *
 * Layers are memoised by reference: call `layer(config)` once, at the edge, and share the result
 * (two calls mean two connection pools).
 */
import {
  type AccessTokenSigner,
  type AccountRepo,
  type AuditLog,
  type ConsoleSessionRepo,
  type OperatorCredentials,
  type OperatorRepo,
  type CardVault,
  type ChannelProviders,
  type ChannelRepo,
  type CheckoutSessionRepo,
  type ClientSecretRepo,
  type ConsoleReads,
  type CustomerRepo,
  type CvcStore,
  type EventRepo,
  type HostResolver,
  type Ids,
  type KeyHasher,
  type Locks,
  type MachineAddresses,
  type OrderRepo,
  type PayloadSigner,
  type PayoutRepo,
  PublicUrl,
  type PaymentProvider,
  type Pruning,
  type RateLimiter,
  type RefundRepo,
  type TransactionRepo,
  type TransferRepo,
  type UnitOfWork,
  type WebhookDeliveryRepo,
  type WebhookEndpointRepo,
  type WebhookTransport,
  WebhookPrivateReceivers,
  type ServerListeners
} from "@tender/domain"
import type { ChannelHealth, RoutingRulesRepo } from "@tender/domain/channels/RoutingPorts"
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import type { TenderConfig } from "./Config.ts"
import { VaultCipher, randomKey } from "./crypto/VaultCipher.ts"
import * as ClusterBroker from "./cluster/ClusterBroker.ts"
import * as AccessTokenSignerHmac from "./crypto/AccessTokenSignerHmac.ts"
import * as FaultsEnv from "./Faults.ts"
import * as PaymentProviderSandbox from "./providers/sandbox/PaymentProviderSandbox.ts"
import * as SandboxOutage from "./providers/sandbox/SandboxOutage.ts"
import type { SandboxLedger } from "./providers/sandbox/SandboxLedger.ts"
import * as SandboxLedgerMemory from "./providers/sandbox/SandboxLedgerMemory.ts"
import * as SandboxLedgerPg from "./providers/sandbox/SandboxLedgerPg.ts"
import * as IdsRandom from "./crypto/IdsRandom.ts"
import * as PayloadSignerHmac from "./crypto/PayloadSignerHmac.ts"
import * as KeyHasherSha256 from "./crypto/KeyHasherSha256.ts"
import * as OperatorCredentialsNode from "./crypto/OperatorCredentialsNode.ts"
import * as VaultKey from "./crypto/VaultKey.ts"
import { InfrastructureError } from "./InfrastructureError.ts"
import * as LocksMemory from "./locks/LocksMemory.ts"
import * as LocksRedis from "./locks/LocksRedis.ts"
import * as RateLimiterMemory from "./ratelimit/RateLimiterMemory.ts"
import * as RateLimiterRedis from "./ratelimit/RateLimiterRedis.ts"
import { Redis } from "./redis/Redis.ts"
import type { ChannelCredentials } from "./storage/ChannelCredentials.ts"
import * as ChannelProvidersLive from "./providers/channels/ChannelProviders.ts"
import type { ProviderJournal } from "./providers/shared/ProviderJournal.ts"
import * as ProviderJournalMemory from "./providers/shared/ProviderJournalMemory.ts"
import * as ProviderJournalPg from "./providers/shared/ProviderJournalPg.ts"
import { readFileSync } from "node:fs"
import * as AccountRepoMemory from "./storage/memory/AccountRepoMemory.ts"
import * as AuditLogMemory from "./storage/memory/AuditLogMemory.ts"
import * as ConsoleSessionRepoMemory from "./storage/memory/ConsoleSessionRepoMemory.ts"
import * as OperatorRepoMemory from "./storage/memory/OperatorRepoMemory.ts"
import * as CardVaultMemory from "./storage/memory/CardVaultMemory.ts"
import * as ChannelRepoMemory from "./storage/memory/ChannelRepoMemory.ts"
import * as CheckoutSessionRepoMemory from "./storage/memory/CheckoutSessionRepoMemory.ts"
import * as ConsoleReadsMemory from "./storage/memory/ConsoleReadsMemory.ts"
import * as ClientSecretRepoMemory from "./storage/memory/ClientSecretRepoMemory.ts"
import * as CustomerRepoMemory from "./storage/memory/CustomerRepoMemory.ts"
import * as CvcStoreMemory from "./storage/memory/CvcStoreMemory.ts"
import * as CvcStoreRedis from "./storage/CvcStoreRedis.ts"
import * as EventRepoMemory from "./storage/memory/EventRepoMemory.ts"
import { MemoryDatabase } from "./storage/memory/MemoryDatabase.ts"
import * as OrderRepoMemory from "./storage/memory/OrderRepoMemory.ts"
import * as OutflowRepoMemory from "./storage/memory/OutflowRepoMemory.ts"
import * as PruningMemory from "./storage/memory/PruningMemory.ts"
import * as TransactionRepoMemory from "./storage/memory/TransactionRepoMemory.ts"
import * as TransferRepoMemory from "./storage/memory/TransferRepoMemory.ts"
import * as UnitOfWorkMemory from "./storage/memory/UnitOfWorkMemory.ts"
import * as WebhookDeliveryRepoMemory from "./storage/memory/WebhookDeliveryRepoMemory.ts"
import * as WebhookEndpointRepoMemory from "./storage/memory/WebhookEndpointRepoMemory.ts"
import * as ServerListenersMemory from "./storage/memory/ServerListenersMemory.ts"
import * as RoutingRulesRepoMemory from "./storage/memory/RoutingRulesRepoMemory.ts"
import * as ChannelHealthMemory from "./storage/memory/ChannelHealthMemory.ts"
import * as AccountRepoPg from "./storage/postgres/AccountRepoPg.ts"
import * as AccountCachePg from "./storage/postgres/AccountCachePg.ts"
import * as AuditLogPg from "./storage/postgres/AuditLogPg.ts"
import * as ConsoleSessionRepoPg from "./storage/postgres/ConsoleSessionRepoPg.ts"
import * as OperatorRepoPg from "./storage/postgres/OperatorRepoPg.ts"
import * as ListCachesPg from "./storage/postgres/ListCachesPg.ts"
import * as NotifiedCache from "./storage/postgres/NotifiedCache.ts"
import * as CardVaultPg from "./storage/postgres/CardVaultPg.ts"
import * as ChannelRepoPg from "./storage/postgres/ChannelRepoPg.ts"
import * as CheckoutSessionRepoPg from "./storage/postgres/CheckoutSessionRepoPg.ts"
import * as ConsoleReadsPg from "./storage/postgres/ConsoleReadsPg.ts"
import * as ClientSecretRepoPg from "./storage/postgres/ClientSecretRepoPg.ts"
import * as CustomerRepoPg from "./storage/postgres/CustomerRepoPg.ts"
import * as EventRepoPg from "./storage/postgres/EventRepoPg.ts"
import * as OrderRepoPg from "./storage/postgres/OrderRepoPg.ts"
import * as OutflowRepoPg from "./storage/postgres/OutflowRepoPg.ts"
import * as PgDatabase from "./storage/postgres/PgDatabase.ts"
import * as PruningPg from "./storage/postgres/PruningPg.ts"
import * as TransactionRepoPg from "./storage/postgres/TransactionRepoPg.ts"
import * as TransferRepoPg from "./storage/postgres/TransferRepoPg.ts"
import * as UnitOfWorkPg from "./storage/postgres/UnitOfWorkPg.ts"
import * as WebhookDeliveryRepoPg from "./storage/postgres/WebhookDeliveryRepoPg.ts"
import * as WebhookEndpointRepoPg from "./storage/postgres/WebhookEndpointRepoPg.ts"
import * as ServerListenersPg from "./storage/postgres/ServerListenersPg.ts"
import * as RoutingRulesRepoPg from "./storage/postgres/RoutingRulesRepoPg.ts"
import * as ChannelHealthPg from "./storage/postgres/ChannelHealthPg.ts"
import * as Deployment from "./webhooks/Deployment.ts"
import * as HostResolverDns from "./webhooks/HostResolverDns.ts"
import * as WebhookTransportHttp from "./webhooks/WebhookTransportHttp.ts"
import type { ReplayCache } from "./replay/ReplayCache.ts"
import * as ReplayCacheMemory from "./replay/ReplayCacheMemory.ts"
import * as ReplayCachePg from "./replay/ReplayCachePg.ts"
import * as ReplayCacheRedis from "./replay/ReplayCacheRedis.ts"
import * as Operations from "./Operations.ts"

export { InfrastructureError }

export type StoragePorts =
  | AccountRepo
  | UnitOfWork
  | CardVault
  | CvcStore
  | OrderRepo
  | TransactionRepo
  | EventRepo
  | WebhookEndpointRepo
  | WebhookDeliveryRepo
  | CheckoutSessionRepo
  | CustomerRepo
  | RefundRepo
  | PayoutRepo
  | TransferRepo
  | ClientSecretRepo
  | ChannelRepo
  /** Channels' credentials, decrypted for the provider adapters only (never a domain port). */
  | ChannelCredentials
  /** The sandbox provider's own log lives beside Tender's storage (memory with memory, PostgreSQL with PostgreSQL). */
  | SandboxLedger
  /** Provider adapters' own durable state (the Adyen adapter's journal), beside Tender's storage likewise. */
  | ProviderJournal
  /** Signatures that may not authorise a request (again): Redis when configured, else beside storage. */
  | ReplayCache
  /** Where this deployment's servers listen (webhook URLs may not name them), shared through storage. */
  | ServerListeners
  /** Removes the event log past its retention and expired replay-cache rows (the retention worker's). */
  | Pruning
  /** The operator console's people, their sessions and the audit log of what they did (issue 26). */
  | OperatorRepo
  | ConsoleSessionRepo
  | AuditLog
  /** The operator console's search and payment story, across accounts (issue 26). */
  | ConsoleReads
  /** Accounts' routing rules, versioned, and the channels' health every server process shares (issue 27). */
  | RoutingRulesRepo
  | ChannelHealth
export type Ports =
  | StoragePorts
  | Locks
  | RateLimiter
  | Ids
  | KeyHasher
  | OperatorCredentials
  | AccessTokenSigner
  | PayloadSigner
  | PaymentProvider
  | ChannelProviders
  | WebhookTransport
  | HostResolver
  /** This machine's addresses, which a serving process records as its place (webhooks/Deployment.ts). */
  | MachineAddresses
  /** Readiness checks and backlogs, for /readyz and /metrics (Operations.ts). */
  | Operations.Operations

/** Memory storage: no durability, a vault key that dies with the process. */
export const memoryStorage: Layer.Layer<StoragePorts, never, Ids> = Layer.mergeAll(
  AccountRepoMemory.layer,
  UnitOfWorkMemory.layer,
  CardVaultMemory.layer,
  CvcStoreMemory.layer,
  OrderRepoMemory.layer,
  TransactionRepoMemory.layer,
  EventRepoMemory.layer,
  WebhookEndpointRepoMemory.layer,
  WebhookDeliveryRepoMemory.layer,
  CheckoutSessionRepoMemory.layer,
  CustomerRepoMemory.layer,
  OutflowRepoMemory.refundLayer,
  OutflowRepoMemory.payoutLayer,
  TransferRepoMemory.layer,
  ClientSecretRepoMemory.layer,
  ChannelRepoMemory.layer,
  ChannelRepoMemory.credentialsLayer,
  SandboxLedgerMemory.layer,
  ProviderJournalMemory.layer,
  ReplayCacheMemory.layer,
  ServerListenersMemory.layer,
  PruningMemory.layer,
  OperatorRepoMemory.layer,
  ConsoleSessionRepoMemory.layer,
  AuditLogMemory.layer,
  ConsoleReadsMemory.layer,
  RoutingRulesRepoMemory.layer,
  ChannelHealthMemory.layer
).pipe(Layer.provide(Layer.merge(MemoryDatabase.layer, VaultCipher.layer(randomKey))))

/**
 * PostgreSQL storage, connected and migrated. The SQL client is exposed too, for tests that look
 * at raw rows.
 */
export const postgresStorage = (
  config: TenderConfig
): Layer.Layer<StoragePorts | SqlClient.SqlClient, InfrastructureError, Ids> =>
  // The key first: a missing or malformed key is a configuration error, reported before connecting.
  Layer.unwrap(Effect.map(VaultKey.resolve(config), (key) =>
    Layer.mergeAll(
      AccountCachePg.layer.pipe(Layer.provide(AccountRepoPg.layer)),
      UnitOfWorkPg.layer,
      CardVaultPg.layer,
      cvcStore(config, key),
      OrderRepoPg.layer,
      TransactionRepoPg.layer,
      EventRepoPg.layer,
      ListCachesPg.endpointsLayer.pipe(Layer.provide(WebhookEndpointRepoPg.layer)),
      WebhookDeliveryRepoPg.layer,
      CheckoutSessionRepoPg.layer,
      CustomerRepoPg.layer,
      OutflowRepoPg.refundLayer,
      OutflowRepoPg.payoutLayer,
      TransferRepoPg.layer,
      ClientSecretRepoPg.layer,
      ListCachesPg.channelsLayer.pipe(Layer.provide(ChannelRepoPg.layer)),
      ChannelRepoPg.credentialsLayer,
      SandboxLedgerPg.layer,
      ProviderJournalPg.layer,
      ServerListenersPg.layer,
      PruningPg.layer,
      OperatorRepoPg.layer,
      ConsoleSessionRepoPg.layer,
      AuditLogPg.layer,
      ConsoleReadsPg.layer,
      RoutingRulesRepoPg.layer,
      ChannelHealthPg.layer,
      config.redisUrl !== undefined ? ReplayCacheRedis.layer.pipe(Layer.provide(redis(config.redisUrl))) : ReplayCachePg.layer
    ).pipe(
      // One listening connection for the accounts', channels', endpoints' and routing rules' caches.
      Layer.provide(Layer.merge(VaultCipher.layer(Effect.succeed(key)), NotifiedCache.listenerLayer)),
      Layer.provideMerge(PgDatabase.layer(config))
    )))

/** One Redis layer per URL, so the replay cache and the locks share one connection within a build. */
const redisLayers = new Map<string, ReturnType<typeof Redis.layer>>()
const redis = (url: string) => {
  const existing = redisLayers.get(url)
  if (existing !== undefined) return existing
  const created = Redis.layer(url)
  redisLayers.set(url, created)
  return created
}

/**
 * CVCs: in Redis when `REDIS_URL` is set (sealed with the vault key), so every process behind a load
 * balancer can take the code another one was given; in process memory otherwise.
 */
const cvcStore = (config: TenderConfig, key: Uint8Array): Layer.Layer<CvcStore, InfrastructureError, VaultCipher> =>
  config.redisUrl !== undefined
    ? CvcStoreRedis.layer(key).pipe(Layer.provide(redis(config.redisUrl)))
    : config.clusterChild === true
    ? ClusterBroker.layer
    : CvcStoreMemory.layer

/**
 * Locks and rate limits: Redis when `REDIS_URL` is set, so several processes share them; else the
 * primary of `serve --workers N` for its children; else in-process.
 */
export const coordination = (config: TenderConfig): Layer.Layer<Locks | RateLimiter, InfrastructureError> =>
  config.redisUrl !== undefined
    ? Layer.merge(LocksRedis.layer, RateLimiterRedis.layer).pipe(Layer.provide(redis(config.redisUrl)))
    : config.clusterChild === true
    ? ClusterBroker.layer
    : Layer.merge(LocksMemory.layer, RateLimiterMemory.layer)

const primitives: Layer.Layer<Ids | KeyHasher | PayloadSigner | OperatorCredentials> = Layer.mergeAll(
  IdsRandom.layer,
  KeyHasherSha256.layer,
  OperatorCredentialsNode.layer,
  PayloadSignerHmac.layer
)

/** Vault access tokens, signed under a key derived from the vault key (the server's, not the merchant's). */
const accessTokens = (config: TenderConfig): Layer.Layer<AccessTokenSigner, InfrastructureError> =>
  AccessTokenSignerHmac.layer(VaultKey.resolve(config))

/** Where customers' browsers reach this server when nothing says otherwise. */
export const DEFAULT_PUBLIC_URL = "http://127.0.0.1:8080"

/**
 * The payment provider. Test mode routes every method to the built-in sandbox (contract.md); no
 * live provider is configured yet, and the use cases refuse live payments and sessions
 * (`Routing.routeFor`: the sandbox serves test mode) rather than sending them to the sandbox.
 */
export const provider = (config: TenderConfig): Layer.Layer<PaymentProvider, never, SandboxLedger> =>
  PaymentProviderSandbox.layer({ publicUrl: config.publicUrl ?? DEFAULT_PUBLIC_URL, latencyMs: config.sandboxLatencyMs })

/** Channels' providers: each channel's own client, built from its credentials (providers/channels). */
export const channelProviders = (config: TenderConfig): Layer.Layer<ChannelProviders, never, ChannelCredentials | ProviderJournal> =>
  ChannelProvidersLive.layer({
    publicUrl: config.publicUrl ?? DEFAULT_PUBLIC_URL,
    timeoutMs: config.providerTimeoutMs,
    endpoints: Object.fromEntries(Object.entries(config.providerEndpoints ?? {}).map(([name, setting]) => [name, {
      apiUrl: setting.apiUrl,
      caCertificate: setting.caFile === undefined ? undefined : readFileSync(setting.caFile, "utf8")
    }]))
  })

export const layer = (config: TenderConfig): Layer.Layer<Ports, InfrastructureError> =>
  Layer.mergeAll(
    coordination(config),
    provider(config),
    channelProviders(config),
    WebhookTransportHttp.layer,
    Deployment.machineLayer,
    accessTokens(config),
    // Hosted pages (checkout sessions) are addressed under it.
    Layer.succeed(PublicUrl, config.publicUrl ?? DEFAULT_PUBLIC_URL)
  ).pipe(
    // After storage: where this deployment listens is recorded there (the servers, the embedded PostgreSQL).
    Layer.provideMerge(Deployment.layer(config)),
    Layer.provideMerge(
      config.storage === "memory"
        ? Layer.provideMerge(withRedis(config, Operations.memoryLayer), memoryStorage)
        : Layer.provideMerge(withRedis(config, Operations.postgresLayer), postgresStorage(config))
    ),
    Layer.provideMerge(Layer.mergeAll(
      primitives,
      FaultsEnv.layer(config.fault),
      SandboxOutage.layer(config.sandboxUnreachable),
      Layer.succeed(WebhookPrivateReceivers, config.webhookAllowPrivate ?? false),
      // Registration, each delivery and the deployment's own addresses resolve through one resolver (one set of lookup slots).
      HostResolverDns.layerWith({ servers: config.webhookDnsServers })
    ))
  )

/** Readiness and backlogs (Operations.ts), with Redis's check when `REDIS_URL` is set. */
const withRedis = <R>(config: TenderConfig, operations: Layer.Layer<Operations.Operations, never, R>) =>
  config.redisUrl !== undefined ? operations.pipe(Layer.provide(redis(config.redisUrl))) : operations

/** Applies pending migrations (memory storage has none) and returns the names of those it applied. */
export const migrate = (config: TenderConfig): Effect.Effect<ReadonlyArray<string>, InfrastructureError> =>
  config.storage === "memory"
    ? Effect.succeed([])
    : PgDatabase.migrate.pipe(Effect.provide(Layer.merge(PgDatabase.client(config), PgDatabase.migrationKey(config))))

/** Connections of the webhook dispatcher's own pool (`dispatcherStorage`). */
export const DISPATCHER_POOL_SIZE = 6

/**
 * The ports the webhook dispatcher reads and writes (its claims, attempts, the events, endpoints
 * and accounts it reads), over a PostgreSQL connection pool of its own (issue 13): payment traffic
 * cannot take the connections delivery needs, nor delivery those of payments. It joins the
 * database `layer(config)` connected to and migrated; memory storage has no pools, and the
 * dispatcher shares `layer`'s.
 */
export const dispatcherStorage = (
  config: TenderConfig
): Layer.Layer<WebhookDeliveryRepo | WebhookEndpointRepo | EventRepo | AccountRepo | UnitOfWork, InfrastructureError> | undefined =>
  config.storage === "memory" ? undefined : Layer.mergeAll(
    // The unit of work of this pool: an endpoint's change and its deliveries' pause are one (UpdateEndpoint.ts).
    UnitOfWorkPg.layer,
    WebhookDeliveryRepoPg.layer,
    WebhookEndpointRepoPg.layer,
    EventRepoPg.layer,
    AccountRepoPg.layer
  ).pipe(Layer.provide(PgDatabase.client(config, { maxConnections: DISPATCHER_POOL_SIZE })))
