import { providerNotificationsSuite } from "./ProviderNotificationsSuite.ts"

providerNotificationsSuite({ storage: "memory", dataDir: ".tender-test" })
