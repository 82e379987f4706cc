import { signaturesSuite } from "./SignaturesSuite.ts"

signaturesSuite({ storage: "memory", dataDir: ".tender-test" })
