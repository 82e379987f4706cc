/**
 * Runtime configuration shared by `tender serve`, `tender worker`, `tender migrate` and every other
 * CLI command, so that all of them reach the same database (contract.md, Operator set-up).
 */
import { endpointEnv } from "./providers/ProviderModule.ts"
import { NAMES } from "./providers/Providers.ts"

export interface TenderConfig {
  /** `postgres` (default) or `memory` (no durability: tests, embedding, demos). */
  readonly storage: "postgres" | "memory"
  /** Data directory for the embedded PostgreSQL and the generated vault key (default `.tender`). */
  readonly dataDir: string
  /** `DATABASE_URL`: an external PostgreSQL; unset → the embedded one under `dataDir`. */
  readonly databaseUrl?: string | undefined
  /**
   * `TENDER_READ_DATABASE_URL`: a streaming replica of that database. Read-only endpoints (GET by id,
   * searches, lists) read there; writes and every read a write depends on stay on the primary
   * (storage/postgres/ReadRouting.ts). Unset → everything on the primary.
   */
  readonly readDatabaseUrl?: string | undefined
  /**
   * `TENDER_READ_MAX_LAG_MS`: the replica is read only while it is at most this far behind the
   * primary (measured every 200 ms); default 5000. Bounds how stale a replica read can be.
   */
  readonly readMaxLagMs?: number | undefined
  /** `REDIS_URL`: locks and rate limits in Redis; unset → in-process. */
  readonly redisUrl?: string | undefined
  /** `TENDER_VAULT_KEY` (64 hex chars); unset in embedded mode → generated once into `dataDir`. */
  readonly vaultKey?: string | undefined
  /**
   * `TENDER_PUBLIC_URL`: the origin customers' browsers reach the server at (hosted pages, sandbox
   * redirects). Unset → `serve` uses its own host and port.
   */
  readonly publicUrl?: string | undefined
  /** `TENDER_SDK_URL`: the host of `/sdk/v1/tender.js` (contract.md); unset → the public URL. */
  readonly sdkUrl?: string | undefined
  /** `TENDER_FIELDS_URL`: the host of the secure card fields `/fields/v1/…`; unset → the public URL. */
  readonly fieldsUrl?: string | undefined
  /** `TENDER_SANDBOX_LATENCY_MS`: simulated latency of every sandbox provider call (default 0). */
  readonly sandboxLatencyMs?: number | undefined
  /**
   * `TENDER_SANDBOX_UNREACHABLE` (comma-separated: authorize, capture, void, start, refund, payout):
   * sandbox calls that fail as unreachable, a simulated outage (SandboxOutage.ts); unset → none.
   */
  readonly sandboxUnreachable?: ReadonlyArray<string> | undefined
  /**
   * `TENDER_PROVIDER_TIMEOUT_MS`: how long one call to a channel's provider may take before its
   * answer is given up as unknown (then reconciled); default 20 s. Keep it under the reconciliation
   * grace (`TENDER_RECONCILE_GRACE_MS`, 60 s), or reconciliation may ask about a call still waiting.
   */
  readonly providerTimeoutMs?: number | undefined
  /**
   * Per provider of the providers' list (providers/Providers.ts): `TENDER_<NAME>_API_URL`, where
   * every channel of that provider sends its calls instead of the provider's own hosts (the
   * wire-level fakes: tests, dev runs; unset in production), and `TENDER_<NAME>_CA_FILE`, a PEM file
   * of a certificate to trust there (a fake's self-signed one). E.g. `TENDER_STRIPE_API_URL`.
   */
  readonly providerEndpoints?: Readonly<Record<string, ProviderEndpointSetting>> | undefined
  /**
   * `TENDER_WEBHOOK_ALLOW_PRIVATE=true`: webhook endpoints may be on private-use (10/8, 172.16/12,
   * 192.168/16), CGNAT (100.64/10) and unique-local (fc00::/7) addresses: receivers inside the
   * operator's own network. Loopback, link-local and the other special ranges stay refused.
   */
  readonly webhookAllowPrivate?: boolean | undefined
  /**
   * `TENDER_WEBHOOK_ALLOW_LOOPBACK=false`: test-mode endpoints may not be `http` on loopback (local
   * receivers); default allowed. Turn it off in a shared production deployment: otherwise any
   * merchant can have the server POST to any loopback port. The ports below are refused either way.
   */
  readonly webhookAllowLoopback?: boolean | undefined
  /** `TENDER_WEBHOOK_DNS_SERVERS` (`ip` or `ip:port`, comma-separated): where webhook host names are resolved; unset → /etc/resolv.conf. */
  readonly webhookDnsServers?: ReadonlyArray<string> | undefined
  /**
   * `TENDER_RETENTION_DAYS`: days the event log (events, webhook deliveries and their attempts) is
   * kept after its last delivery attempt, a whole number of 1 or more; `never` keeps it for ever.
   * Unset → 30 (webhooks/Retention.ts). Anything else is kept here as read (`NaN`, `0`, `-1`…) and
   * refused when the workers start (`retentionOf`): a typo must not decide what is deleted.
   */
  readonly retentionDays?: number | "never" | undefined
  /** The port `serve` listens on (not an environment setting): webhooks may never reach it on loopback. */
  readonly listenPort?: number | undefined
  /** `TENDER_FAULT=<point>@<n>`: crash tests only; kills the process the n-th time `point` is reached (Faults.ts). */
  readonly fault?: string | undefined
  /**
   * Set by `serve --workers N` in each child it forks (not an environment setting): without
   * `REDIS_URL`, locks, rate limits and CVCs are asked of the cluster's primary (ClusterBroker.ts).
   */
  readonly clusterChild?: boolean | undefined
}

export interface ProviderEndpointSetting {
  readonly apiUrl?: string | undefined
  readonly caFile?: string | undefined
}

/** The endpoint settings the environment gives, for the providers of the list that have any. */
const providerEndpointsOf = (env: Record<string, string | undefined>) =>
  Object.fromEntries(NAMES.flatMap((name) => {
    const names = endpointEnv(name)
    const setting = { apiUrl: env[names.apiUrl] || undefined, caFile: env[names.caFile] || undefined }
    return setting.apiUrl === undefined && setting.caFile === undefined ? [] : [[name, setting]]
  }))

/** A comma-separated setting's items, trimmed; unset or empty → undefined. */
const listOf = (value: string | undefined) => (value ? value.split(",").map((item) => item.trim()).filter((item) => item !== "") : undefined)

/** `TENDER_RETENTION_DAYS` as read: unset or empty → undefined, `never`, or the number it spells (maybe not a valid one). */
const retentionOf = (value: string | undefined): number | "never" | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.trim() === "never" ? "never" : Number(value)

/**
 * The retention the workers apply: the configured one when it is valid (a whole number of days, 1
 * or more, or `never`), the default when unset; an invalid one is an error to report at start.
 */
export const retentionDays = (config: TenderConfig, fallback: number): { readonly ok: number | "never" } | { readonly error: string } => {
  const days = config.retentionDays
  if (days === undefined) return { ok: fallback }
  if (days === "never" || (Number.isSafeInteger(days) && days >= 1)) return { ok: days }
  return { error: `TENDER_RETENTION_DAYS must be a whole number of days, 1 or more, or "never" (got ${days})` }
}

export const configFromEnv = (
  overrides: Partial<TenderConfig> = {},
  env: Record<string, string | undefined> = process.env
): TenderConfig => ({
  storage: overrides.storage ?? "postgres",
  dataDir: overrides.dataDir ?? env.TENDER_DATA_DIR ?? ".tender",
  databaseUrl: overrides.databaseUrl ?? (env.DATABASE_URL || undefined),
  readDatabaseUrl: overrides.readDatabaseUrl ?? (env.TENDER_READ_DATABASE_URL || undefined),
  readMaxLagMs: overrides.readMaxLagMs ??
    (env.TENDER_READ_MAX_LAG_MS && Number(env.TENDER_READ_MAX_LAG_MS) >= 0 ? Number(env.TENDER_READ_MAX_LAG_MS) : undefined),
  redisUrl: overrides.redisUrl ?? (env.REDIS_URL || undefined),
  vaultKey: overrides.vaultKey ?? (env.TENDER_VAULT_KEY || undefined),
  publicUrl: overrides.publicUrl ?? (env.TENDER_PUBLIC_URL || undefined),
  sdkUrl: overrides.sdkUrl ?? (env.TENDER_SDK_URL || undefined),
  fieldsUrl: overrides.fieldsUrl ?? (env.TENDER_FIELDS_URL || undefined),
  sandboxLatencyMs: overrides.sandboxLatencyMs ??
    (env.TENDER_SANDBOX_LATENCY_MS ? Math.max(0, Number(env.TENDER_SANDBOX_LATENCY_MS) || 0) : undefined),
  sandboxUnreachable: overrides.sandboxUnreachable ?? listOf(env.TENDER_SANDBOX_UNREACHABLE),
  providerTimeoutMs: overrides.providerTimeoutMs ??
    (Number(env.TENDER_PROVIDER_TIMEOUT_MS) > 0 ? Number(env.TENDER_PROVIDER_TIMEOUT_MS) : undefined),
  providerEndpoints: overrides.providerEndpoints ?? providerEndpointsOf(env),
  fault: overrides.fault ?? (env.TENDER_FAULT || undefined),
  webhookAllowPrivate: overrides.webhookAllowPrivate ?? (env.TENDER_WEBHOOK_ALLOW_PRIVATE === "true" || undefined),
  webhookAllowLoopback: overrides.webhookAllowLoopback ?? (env.TENDER_WEBHOOK_ALLOW_LOOPBACK === "false" ? false : undefined),
  webhookDnsServers: overrides.webhookDnsServers ?? listOf(env.TENDER_WEBHOOK_DNS_SERVERS),
  retentionDays: overrides.retentionDays ?? retentionOf(env.TENDER_RETENTION_DAYS),
  listenPort: overrides.listenPort,
  clusterChild: overrides.clusterChild
})
