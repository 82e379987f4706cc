/**
 * The handler of `tender worker` (commands/Worker.ts declares it), and the workers `serve` runs too.
 * Any number of workers and servers may run against one database: the dispatcher claims due deliveries with SKIP LOCKED under a lease,
 * so each attempt runs in one process.
 */
import { retentionDays, type TenderConfig } from "@tender/adapters/Config"
import * as Infrastructure from "@tender/adapters/Infrastructure"
import { Retention, Webhooks, Workers } from "@tender/domain"
import { Config, Duration, Effect, Layer, Option } from "effect"
import * as Telemetry from "@tender/adapters/Telemetry"
import type { Invocation } from "../Cli.ts"
import * as Services from "../Services.ts"

/**
 * The workers as every process runs them (`serve` and `worker`). `TENDER_WEBHOOK_LEASE_MS`: how long
 * a claimed webhook delivery stays with its worker before another may retry it (default: the 15 s
 * attempt timeout plus 15 s). `TENDER_RECONCILE_GRACE_MS`: how old an unrecorded provider call must
 * be before reconciliation asks the provider about it (default 60 s, longer than any call's own
 * wait); `TENDER_RECONCILE_HORIZON_MS`: when a call the provider cannot answer about fails (default
 * 24 h). `TENDER_EXPIRY_INTERVAL_MS`: how often lapsed payment windows and overdue checkout sessions
 * are looked for (default 5 s). Shorter values only for tests of crash recovery.
 * `TENDER_RETENTION_DAYS` (Config.ts): what the retention round keeps; an invalid value stops the
 * start. `TENDER_RETENTION_INTERVAL_MS`: how often that round runs (default 5 minutes; it works off
 * everything past the retention each time, so this bounds only how long a row lingers past it).
 */
export const workers = (config: TenderConfig): Layer.Layer<never, Infrastructure.InfrastructureError | Config.ConfigError, Services.Services> => Layer.unwrap(
  Effect.gen(function*() {
    const lease = yield* Config.option(Config.Int("TENDER_WEBHOOK_LEASE_MS"))
    const grace = yield* Config.option(Config.Int("TENDER_RECONCILE_GRACE_MS"))
    const horizon = yield* Config.option(Config.Int("TENDER_RECONCILE_HORIZON_MS"))
    const expiry = yield* Config.option(Config.Int("TENDER_EXPIRY_INTERVAL_MS"))
    const retentionEvery = yield* Config.option(Config.Int("TENDER_RETENTION_INTERVAL_MS"))
    const retention = retentionDays(config, Retention.DEFAULT_RETENTION_DAYS)
    if ("error" in retention) return yield* new Infrastructure.InfrastructureError({ message: retention.error })
    const layer: Layer.Layer<never, Infrastructure.InfrastructureError, Services.Services> = Workers.layer({
      // Zero or less would spin the rounds against storage: ignored, as TENDER_PROVIDER_TIMEOUT_MS is.
      ...(Option.isSome(expiry) && expiry.value > 0 ? { expiryEvery: Duration.millis(expiry.value) } : {}),
      ...(Option.isSome(retentionEvery) && retentionEvery.value > 0 ? { retentionEvery: Duration.millis(retentionEvery.value) } : {}),
      retention: { days: retention.ok },
      webhooks: Option.isSome(lease) ? { leaseMs: lease.value } : {},
      reconcile: {
        ...(Option.isSome(grace) ? { graceMs: grace.value } : {}),
        ...(Option.isSome(horizon) ? { horizonMs: horizon.value } : {})
      }
    })
    // The dispatcher on its own connection pool (PostgreSQL storage); the other workers on the process's.
    const own = Infrastructure.dispatcherStorage(config)
    if (own === undefined) return layer
    return layer.pipe(Layer.provide(Webhooks.layer.pipe(Layer.provide(own))))
  })
)

export const worker = (_: {}, { config }: Invocation) =>
  Layer.launch(workers(config).pipe(Layer.provide(Services.layer(config)), Layer.provide(Telemetry.layer())))
