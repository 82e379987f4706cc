import { isolationSuite } from "./IsolationSuite.ts"

isolationSuite({ storage: "memory", dataDir: ".tender-test" })
