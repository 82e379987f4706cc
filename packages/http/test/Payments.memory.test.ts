import { paymentsSuite } from "./PaymentsSuite.ts"

paymentsSuite({ storage: "memory", dataDir: ".tender-test" })
