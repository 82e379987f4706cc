import { transfersSuite } from "./TransfersSuite.ts"

transfersSuite({ storage: "memory", dataDir: ".tender-test" })
