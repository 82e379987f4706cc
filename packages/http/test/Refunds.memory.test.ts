import { refundsSuite } from "./RefundsSuite.ts"

refundsSuite({ storage: "memory", dataDir: ".tender-test" })
