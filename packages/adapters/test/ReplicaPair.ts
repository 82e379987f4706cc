/**
 * An embedded primary and its streaming replica (EmbeddedReplica.ts) in a temporary directory, for
 * the replica tests: the run's shared PostgreSQL (PgTestServer.ts) may be a server reached by URL,
 * whose data directory no test can copy. Everything stops and is removed when the scope closes; the
 * replica can be stopped earlier (`stopReplica`), to see reads survive its loss.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Effect, Exit, Scope } from "effect"
import * as Embedded from "../src/storage/postgres/Embedded.ts"
import * as EmbeddedReplica from "../src/storage/postgres/EmbeddedReplica.ts"
import { tempDir } from "./PgTestDatabase.ts"

export const replicaPair = (options: EmbeddedReplica.ReplicaOptions = {}) =>
  Effect.gen(function*() {
    const dir = yield* tempDir("tender-replica-")
    // The server user (postgres, when tests run as root) must reach the clusters below it.
    yield* Effect.promise(() => fs.chmod(dir, 0o711))
    const primary = yield* Embedded.start(path.join(dir, "primary"))
    const replicaScope = yield* Scope.fork(yield* Effect.scope)
    const replica = yield* Scope.provide(replicaScope)(EmbeddedReplica.start(path.join(dir, "primary"), path.join(dir, "replica"), options))
    return {
      primaryUrl: `postgres://${primary.username}:${encodeURIComponent(primary.password)}@${primary.host}:${primary.port}/${primary.database}`,
      replicaUrl: replica.url,
      stopReplica: Scope.close(replicaScope, Exit.void)
    }
  })
