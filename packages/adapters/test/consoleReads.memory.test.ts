/** The console reads' contract over memory storage (src/testing/ConsoleReadsContract.ts). */
import { configFromEnv } from "../src/Config.ts"
import * as Infrastructure from "../src/Infrastructure.ts"
import { consoleReadsContract } from "../src/testing/ConsoleReadsContract.ts"

consoleReadsContract("console reads: memory storage", Infrastructure.layer(configFromEnv({ storage: "memory", dataDir: ".tender-unused" }, {})))
