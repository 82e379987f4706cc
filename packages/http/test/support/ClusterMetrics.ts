/**
 * A node:cluster of two children sharing one port, for MetricsCluster.test.ts: the primary runs
 * `Metrics.aggregateInPrimary()` (as `tender serve --workers N`'s primary does), each child serves
 * GET /metrics and records `worker.id` requests of its own, so a scrape reaching either child must
 * show the sum of both. Prints `{"ready":true}` once both children listen. Run with Node 22.18+.
 */
import cluster from "node:cluster"
import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import * as Operations from "@tender/adapters/Operations"
import * as ChannelHealthMemory from "@tender/adapters/storage/memory/ChannelHealthMemory"
import * as Metrics from "../../src/Metrics.ts"

const CHILDREN = 2

if (cluster.isPrimary) {
  Metrics.aggregateInPrimary()
  let listening = 0
  cluster.on("listening", () => {
    if (++listening === CHILDREN) console.log(JSON.stringify({ ready: true }))
  })
  for (let i = 0; i < CHILDREN; i++) cluster.fork()
  process.on("SIGTERM", () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill()
    process.exit(0)
  })
} else {
  const id = cluster.worker!.id
  const record = Effect.forEach(Array.from({ length: id }, (_, i) => i), (i) =>
    Metrics.observeRequest("GET", "/v1/orders/:id", 200, 0.004 + i * 0.1), { discard: true })
  const server = HttpRouter.serve(Metrics.layer().pipe(Layer.provide(Metrics.snapshotLayer)), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provide(Layer.merge(Operations.memoryLayer, ChannelHealthMemory.layer)),
    Layer.provide(NodeHttpServer.layer(createServer, { port: Number(process.env.PORT), host: "127.0.0.1" }))
  )
  Effect.runFork(Effect.andThen(record, Layer.launch(server)))
}
