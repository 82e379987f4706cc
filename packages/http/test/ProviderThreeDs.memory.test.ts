import { providerThreeDsSuite } from "./ProviderThreeDsSuite.ts"

providerThreeDsSuite({ storage: "memory", dataDir: ".tender-test" })
