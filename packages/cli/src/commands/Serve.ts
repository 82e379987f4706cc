/**
 * `tender serve`: the merchant API, hosted pages and workers over the configured storage, until
 * SIGINT or SIGTERM; handlers/Serve.ts runs it. Its flags read their environment variables here, so
 * that `--help` says what applies.
 */
import { availableParallelism } from "node:os"
import * as Config from "effect/Config"
import { Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"

/** The default `--workers` is the number of cores, up to this (see the connection budget in the README). */
const DEFAULT_MAX_WORKERS = 4

export const serve = commandsOf(() => import("../handlers/Serve.ts"))(
  "serve",
  {
    port: Flag.Int("port").pipe(
      Flag.withDescription("Port to listen on (env PORT, default 8080)"),
      Flag.withFallbackConfig(Config.Port("PORT")),
      Flag.withDefault(8080),
      Flag.filter((port) => port >= 0 && port <= 65535, () => "a port number from 0 to 65535")
    ),
    host: Flag.String("host").pipe(
      Flag.withDescription("Address to bind (default 127.0.0.1; 0.0.0.0 to accept remote clients)"),
      Flag.withDefault("127.0.0.1")
    ),
    // A production topology serves from some processes and runs the workers in others (`tender
    // worker`): `--no-background` keeps a server to the API, so webhook delivery and settlement
    // neither take its event loop nor its connections.
    background: Flag.Boolean("background").pipe(
      Flag.withDescription(
        "Run the background workers (settlement, reconciliation, webhook delivery, session sweeper) in this process " +
          "(env TENDER_SERVE_BACKGROUND, default on; --no-background: the API only, workers run by `tender worker`)"
      ),
      Flag.withFallbackConfig(Config.Boolean("TENDER_SERVE_BACKGROUND")),
      Flag.withDefault(true)
    ),
    console: Flag.Boolean("console").pipe(
      Flag.withDescription(
        "Serve the operator console at /console (env TENDER_CONSOLE, default off; operators come from `tender operators add`)"
      ),
      Flag.withFallbackConfig(Config.Boolean("TENDER_CONSOLE")),
      Flag.withDefault(false)
    ),
    workers: Flag.Int("workers").pipe(
      Flag.withDescription("Server processes sharing the port (env TENDER_WORKERS, default the number of cores up to 4; memory storage: 1)"),
      Flag.withFallbackConfig(Config.Int("TENDER_WORKERS")),
      // At most 4 by default: each child holds up to 17 PostgreSQL connections (a pool of 10, the
      // dispatcher's 6, the account listener's 1), and PostgreSQL's default max_connections is 100.
      Flag.withDefault(Math.min(availableParallelism(), DEFAULT_MAX_WORKERS)),
      Flag.filter((workers) => workers >= 1, () => "at least 1")
    )
  },
  (h) => h.serve
).pipe(Command.withDescription("Run the merchant API, hosted pages and workers until SIGINT/SIGTERM"))
