/** The console reads' contract over PostgreSQL (src/testing/ConsoleReadsContract.ts), in this file's own database. */
import { Effect, Layer } from "effect"
import * as Infrastructure from "../src/Infrastructure.ts"
import { consoleReadsContract } from "../src/testing/ConsoleReadsContract.ts"
import { sharedConfig } from "./PgTestDatabase.ts"

consoleReadsContract("console reads: PostgreSQL storage", Layer.unwrap(Effect.map(sharedConfig, Infrastructure.layer)), { timeout: "3 minutes" })
