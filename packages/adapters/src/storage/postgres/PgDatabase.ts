/**
 * The PostgreSQL connection for a config: `DATABASE_URL` when set, else the embedded server of the
 * data directory (started or joined). The layer is ready only once migrations are applied. With
 * `TENDER_READ_DATABASE_URL` its client routes the reads that ask for it to that replica
 * (ReadRouting.ts); the replica is never migrated (it replays what the primary did).
 */
import * as path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Exit, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { TenderConfig } from "../../Config.ts"
import { causeMessage, InfrastructureError, infrastructureError } from "../../InfrastructureError.ts"
import { VaultCipher } from "../../crypto/VaultCipher.ts"
import * as VaultKey from "../../crypto/VaultKey.ts"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Embedded from "./Embedded.ts"
import * as Migrator from "./Migrator.ts"
import * as ReadRouting from "./ReadRouting.ts"

export type Client = PgClient.PgClient | SqlClient.SqlClient

/** How long a connection may take before the server counts as not answering (and the start fails). */
const CONNECT_TIMEOUT_SECONDS = 10

const pool = (options: PgClient.PgPoolConfig, failed: (cause: unknown) => InfrastructureError) =>
  PgClient.make({ applicationName: "tender", connectTimeout: `${CONNECT_TIMEOUT_SECONDS} seconds`, ...options }).pipe(
    // The pool connects lazily: check now, so an unreachable server fails the start, not a request.
    Effect.tap((sql) => sql`SELECT 1`),
    Effect.mapError(failed)
  )

const connect = (options: PgClient.PgPoolConfig, failed: (cause: unknown) => InfrastructureError): Layer.Layer<Client, InfrastructureError> =>
  PgClient.layerFrom(pool(options, failed))

/** The first error code (`ECONNREFUSED`, PostgreSQL's SQLSTATE) down a driver error's chain of causes. */
const codeOf = (cause: unknown): string | undefined => {
  for (let current = cause, depth = 0; typeof current === "object" && current !== null && depth < 8; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string") return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/**
 * Why the PostgreSQL at `url` (the value of `variable`) refuses this process, in one line naming
 * `host:port/database` (never the password) and what to do (decisions.md, "Start-up failures").
 */
export const connectionError = (variable: string, url: string) => (cause: unknown): InfrastructureError => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return new InfrastructureError({ message: `${variable} is not a URL: write it as postgres://user:password@host:5432/database`, cause })
  }
  const user = decodeURIComponent(parsed.username)
  const database = decodeURIComponent(parsed.pathname.slice(1)) || user
  const where = `${parsed.hostname}:${parsed.port || "5432"}/${database}`
  const code = codeOf(cause)
  const message = code === "ECONNREFUSED"
    ? `PostgreSQL at ${where} refuses connections (is it running?): start it, or correct ${variable}`
    : code === "ENOTFOUND" || code === "EAI_AGAIN"
    ? `PostgreSQL at ${where}: host ${parsed.hostname} is not found: correct ${variable}`
    : code === "28P01"
    ? `PostgreSQL at ${where} refused the password of user ${user}: correct ${variable}`
    : code === "28000"
    ? `PostgreSQL at ${where} does not let user ${user} in (pg_hba.conf): allow it there, or correct ${variable}`
    : code === "3D000"
    ? `PostgreSQL at ${where}: there is no database ${database}: create it (createdb ${database}), or correct ${variable}`
    : code === "53300"
    ? `PostgreSQL at ${where} has no connection left (max_connections): raise it, or run fewer processes (TENDER_WORKERS)`
    : code === "57P03"
    ? `PostgreSQL at ${where} is starting or stopping: start again once it accepts connections`
    : code === "ETIMEDOUT" || /timeout|timed out/i.test(causeMessage(cause))
    ? `PostgreSQL at ${where} did not answer within ${CONNECT_TIMEOUT_SECONDS} s: check the network to it, or correct ${variable}`
    : `could not connect to PostgreSQL at ${where} (${causeMessage(cause)}): check it, or correct ${variable}`
  return new InfrastructureError({ message, cause })
}

/** Connected, not migrated: what `migrate` needs. `pool`: the pool's own settings (its size). */
export const client = (config: TenderConfig, pool: Pick<PgClient.PgPoolConfig, "maxConnections"> = {}): Layer.Layer<Client, InfrastructureError> =>
  config.databaseUrl !== undefined
    ? connect({ url: Redacted.make(config.databaseUrl), ...pool }, connectionError("DATABASE_URL", config.databaseUrl))
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
          infrastructureError(`could not connect to the embedded PostgreSQL on port ${server.port}`)
        ))
    )

export const migrate: Effect.Effect<ReadonlyArray<string>, InfrastructureError, SqlClient.SqlClient | VaultCipher> = Migrator.run()
  .pipe(Effect.catchTag("SqlError", (error) => Effect.fail(infrastructureError("could not apply database migrations")(error))))

/** What migrations need besides the connection: the vault key, for the steps that seal (0030). */
export const migrationKey = (config: TenderConfig): Layer.Layer<VaultCipher, InfrastructureError> => VaultCipher.layer(VaultKey.resolve(config))

/**
 * The vault key must open what the database holds sealed: a key that does not (another process's,
 * or a data dir's vault.key lost and generated anew) would start a server whose every card payment
 * and channel fails later. One sealed card and one channel's credentials are tried; none stored,
 * any key will do (decisions.md, "Start-up failures").
 */
const checkKey = (config: TenderConfig) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cipher = yield* VaultCipher
    const samples = yield* sql<{ account_id: string; id: string; iv: Uint8Array; ciphertext: Uint8Array; tag: Uint8Array }>`
      (SELECT account_id, token AS id, number_iv AS iv, number_ciphertext AS ciphertext, number_tag AS tag FROM card_vault LIMIT 1)
      UNION ALL
      (SELECT account_id, id, credentials_iv, credentials_ciphertext, credentials_tag FROM channels LIMIT 1)`.pipe(
      Effect.mapError(infrastructureError("could not read the database's sealed data"))
    )
    for (const row of samples) {
      if (Exit.isSuccess(yield* Effect.exit(cipher.open(row.account_id, row.id, row)))) continue
      const file = path.resolve(config.dataDir, "vault.key")
      return yield* new InfrastructureError({
        message: config.vaultKey !== undefined
          ? "TENDER_VAULT_KEY does not open the cards and credentials this database holds: set it to the key that sealed them " +
            "(the one the database's other processes use)"
          : `${file} does not open the cards and credentials this database holds (was it lost and generated anew?): ` +
            "restore the file that sealed them, or set TENDER_VAULT_KEY to that key"
      })
    }
  })

/** Connected and migrated; with a read replica, its client is the router over both (ReadRouting.ts). */
export const layer = (config: TenderConfig): Layer.Layer<Client, InfrastructureError> => {
  const primary = Layer.effectDiscard(Effect.andThen(migrate, checkKey(config))).pipe(
    Layer.provide(migrationKey(config)),
    Layer.provideMerge(client(config))
  )
  const readUrl = config.readDatabaseUrl
  if (readUrl === undefined) return primary
  return Layer.effectContext(Effect.gen(function*() {
    const replica = yield* pool({ url: Redacted.make(readUrl) }, connectionError("TENDER_READ_DATABASE_URL", readUrl))
    const routed = yield* ReadRouting.router(yield* PgClient.PgClient, replica, { maxLagMs: config.readMaxLagMs ?? ReadRouting.DEFAULT_MAX_LAG_MS })
    return Context.make(PgClient.PgClient, routed).pipe(Context.add(SqlClient.SqlClient, routed))
  })).pipe(Layer.provide(Reactivity.layer), Layer.provide(primary))
}

