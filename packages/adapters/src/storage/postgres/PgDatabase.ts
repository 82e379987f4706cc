/**
 * The PostgreSQL connection for a config: `DATABASE_URL` when set, else the embedded server of the
 * data directory (started or joined). The layer is ready only once migrations are applied. With
 * `TENDER_READ_DATABASE_URL` its client routes the reads that ask for it to that replica
 * (ReadRouting.ts); the replica is never migrated (it replays what the primary did).
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { TenderConfig } from "../../Config.ts"
import { type InfrastructureError, infrastructureError, redactUrl } from "../../InfrastructureError.ts"
import { VaultCipher } from "../../crypto/VaultCipher.ts"
import * as VaultKey from "../../crypto/VaultKey.ts"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Embedded from "./Embedded.ts"
import * as Migrator from "./Migrator.ts"
import * as ReadRouting from "./ReadRouting.ts"

export type Client = PgClient.PgClient | SqlClient.SqlClient

const pool = (options: PgClient.PgPoolConfig, where: string) =>
  PgClient.make({ applicationName: "tender", connectTimeout: "10 seconds", ...options }).pipe(
    // The pool connects lazily: check now, so an unreachable server fails the start, not a request.
    Effect.tap((sql) => sql`SELECT 1`),
    Effect.mapError(infrastructureError(`could not connect to ${where}`))
  )

const connect = (options: PgClient.PgPoolConfig, where: string): Layer.Layer<Client, InfrastructureError> =>
  PgClient.layerFrom(pool(options, where))

/** Connected, not migrated: what `migrate` needs. `pool`: the pool's own settings (its size). */
export const client = (config: TenderConfig, pool: Pick<PgClient.PgPoolConfig, "maxConnections"> = {}): Layer.Layer<Client, InfrastructureError> =>
  config.databaseUrl !== undefined
    ? connect({ url: Redacted.make(config.databaseUrl), ...pool }, `PostgreSQL at ${redactUrl(config.databaseUrl)}`)
    : Layer.unwrap(
      Effect.map(Embedded.start(config.dataDir), (server) =>
        connect(
          {
            host: server.host,
            port: server.port,
            username: server.username,
            password: Redacted.make(server.password),
            database: server.database,
            ...pool
          },
          `the embedded PostgreSQL on port ${server.port}`
        ))
    )

export const migrate: Effect.Effect<ReadonlyArray<string>, InfrastructureError, SqlClient.SqlClient | VaultCipher> = Migrator.run()
  .pipe(Effect.mapError(infrastructureError("could not apply database migrations")))

/** What migrations need besides the connection: the vault key, for the steps that seal (0030). */
export const migrationKey = (config: TenderConfig): Layer.Layer<VaultCipher, InfrastructureError> => VaultCipher.layer(VaultKey.resolve(config))

/** Connected and migrated; with a read replica, its client is the router over both (ReadRouting.ts). */
export const layer = (config: TenderConfig): Layer.Layer<Client, InfrastructureError> => {
  const primary = Layer.effectDiscard(migrate).pipe(Layer.provide(migrationKey(config)), Layer.provideMerge(client(config)))
  const readUrl = config.readDatabaseUrl
  if (readUrl === undefined) return primary
  return Layer.effectContext(Effect.gen(function*() {
    const replica = yield* pool({ url: Redacted.make(readUrl) }, `the read replica at ${redactUrl(readUrl)}`)
    const routed = yield* ReadRouting.router(yield* PgClient.PgClient, replica, { maxLagMs: config.readMaxLagMs ?? ReadRouting.DEFAULT_MAX_LAG_MS })
    return Context.make(PgClient.PgClient, routed).pipe(Context.add(SqlClient.SqlClient, routed))
  })).pipe(Layer.provide(Reactivity.layer), Layer.provide(primary))
}

