import { eventsSuite } from "./EventsSuite.ts"

eventsSuite({ storage: "memory", dataDir: ".tender-test" })
