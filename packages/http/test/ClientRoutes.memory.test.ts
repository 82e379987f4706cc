import { clientRoutesSuite } from "./ClientRoutesSuite.ts"

clientRoutesSuite({ storage: "memory", dataDir: ".tender-test" })
