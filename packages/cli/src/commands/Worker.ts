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
 * The workers as every process runs them (`serve` and `worker`). `TENDER_WEBHOOK_LEASE_MS`: how long
 * a claimed webhook delivery stays with its worker before another may retry it (default: the 15 s
 * attempt timeout plus 15 s). Shorter only for tests of crash recovery.
 */
export const workers = Layer.unwrap(
  Effect.map(Config.option(Config.Int("TENDER_WEBHOOK_LEASE_MS")), (lease) =>
    Workers.layer({ webhooks: lease._tag === "Some" ? { leaseMs: lease.value } : {} }))
)

export const worker = command(
  "worker",
  {},
  (_, { config }) => Layer.launch(workers.pipe(Layer.provide(Services.layer(config))))
).pipe(Command.withDescription("Run the settlement and webhook workers without the API until SIGINT/SIGTERM"))
