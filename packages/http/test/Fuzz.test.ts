import { fuzzSuite } from "./FuzzSuite.ts"

// The CI pass: 10,000 requests on the memory storage (FUZZ_CASES to change, FUZZ_SEED to replay).
fuzzSuite({ storage: "memory", dataDir: ".tender-test" }, 10_000)
