import { customersSuite } from "./CustomersSuite.ts"

customersSuite({ storage: "memory", dataDir: ".tender-test" })
