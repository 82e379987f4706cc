/**
 * `tender worker`: the background workers (settlement, webhook dispatcher) without the HTTP server,
 * until SIGINT or SIGTERM, to scale delivery apart from the API. Any number of workers and servers
 * may run against one database: the dispatcher claims due deliveries with SKIP LOCKED under a lease,
 * so each attempt runs in one process.
 */
import { Workers } from "@tender/domain"
import { Config, Effect, Layer } from "effect"
import { Command } from "effect/cli"
import { command } from "../Cli.ts"
import * as Services from "../Services.ts"

/**
 * The workers as every process runs them (`serve` and `worker`). Both settings are shorter only for
 * tests of crash recovery:
 *   TENDER_WEBHOOK_LEASE_MS    how long a claimed webhook delivery stays with its worker before
 *                              another may retry it (default: the 15 s attempt timeout plus 15 s);
 *   TENDER_RECONCILE_GRACE_MS  how old an unrecorded provider call must be before reconciliation
 *                              asks the provider about it (default 60 s: its caller may still record it).
 */
export const workers = Layer.unwrap(
  Effect.map(
    Effect.all([Config.option(Config.Int("TENDER_WEBHOOK_LEASE_MS")), Config.option(Config.Int("TENDER_RECONCILE_GRACE_MS"))]),
    ([lease, grace]) =>
      Workers.layer({
        webhooks: lease._tag === "Some" ? { leaseMs: lease.value } : {},
        reconcile: grace._tag === "Some" ? { graceMs: grace.value } : {}
      })
  )
)

export const worker = command(
  "worker",
  {},
  (_, { config }) => Layer.launch(workers.pipe(Layer.provide(Services.layer(config))))
).pipe(Command.withDescription("Run the settlement and webhook workers without the API until SIGINT/SIGTERM"))
