import { describe, expect, it } from "vitest"
import { routeFor } from "../src/Routing.ts"

describe("routeFor", () => {
  it("lets a provider carry only the accounts of its own mode", () => {
    expect(routeFor({ mode: "test" }, false)).toBeUndefined()
    expect(routeFor({ mode: "live" }, true)).toBeUndefined()
  })

  it("refuses a live account on a test provider (the sandbox) with payment_unroutable", () => {
    const refused = routeFor({ mode: "test" }, true)
    expect(refused?.code).toBe("payment_unroutable")
    expect(refused?.message).toBe("No live provider is configured for this account")
  })

  it("refuses a test account on a live provider: test traffic never moves real money", () => {
    expect(routeFor({ mode: "live" }, false)?.code).toBe("payment_unroutable")
  })
})
