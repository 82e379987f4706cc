import { describe, expect, it } from "vitest"
import { type AuthorizationBook, planCapture, planVoid, remaining, settledTrigger } from "../src/AuthorizationStatus.ts"

const book = (over: Partial<AuthorizationBook> = {}): AuthorizationBook => ({
  status: "authorized",
  amount: 10_000,
  captured: 0,
  inFlight: 0,
  closing: false,
  settledCaptures: 0,
  multicapture: true,
  ...over
})

describe("capture pre-flight", () => {
  it("omitted amount takes the whole remainder; captures in flight count against it", () => {
    expect(planCapture(book(), undefined)).toEqual({ amount: 10_000 })
    expect(remaining(book({ captured: 3_000, inFlight: 2_000 }))).toBe(5_000)
    expect(planCapture(book({ captured: 3_000, inFlight: 2_000 }), undefined)).toEqual({ amount: 5_000 })
    expect((planCapture(book({ captured: 3_000, inFlight: 2_000 }), 5_001) as Error & { code: string }).code).toBe("capture_amount_exceeds_remaining")
    expect((planCapture(book({ captured: 10_000 }), undefined) as Error & { code: string }).code).toBe("capture_amount_exceeds_remaining")
  })

  it("above the authorized amount, or not positive → capture_amount_exceeds_authorized", () => {
    expect((planCapture(book(), 10_001) as Error & { code: string }).code).toBe("capture_amount_exceeds_authorized")
    expect((planCapture(book(), 0) as Error & { code: string }).code).toBe("capture_amount_exceeds_authorized")
  })

  it("a closed or closing authorization → payment_unexpected_state naming the status", () => {
    const closed = planCapture(book({ status: "completed" }), 1) as Error & { code: string }
    expect(closed.code).toBe("payment_unexpected_state")
    expect(closed.message).toContain("completed")
    expect((planCapture(book({ closing: true, inFlight: 1 }), 1) as Error & { code: string }).code).toBe("payment_unexpected_state")
  })
})

describe("void pre-flight", () => {
  it("releases what remains; behind captures it closes as completed", () => {
    expect(planVoid(book())).toEqual({ release: 10_000, trigger: "void_nothing_captured" })
    expect(planVoid(book({ captured: 4_000 }))).toEqual({ release: 6_000, trigger: "void_behind_captures" })
  })

  it("waits for captures in flight, and refuses a repeated void", () => {
    expect((planVoid(book({ inFlight: 1_000 })) as Error & { code: string }).code).toBe("card_payment_in_progress")
    expect((planVoid(book({ status: "canceled" })) as Error & { code: string }).code).toBe("payment_unexpected_state")
  })
})

it("which row a settled capture takes", () => {
  expect(settledTrigger(book(), 3_000, false)).toBe("partial_capture_settled")
  expect(settledTrigger(book(), 3_000, true)).toBe("final_capture_settled")
  expect(settledTrigger(book({ captured: 7_000 }), 3_000, false)).toBe("capture_reached_total")
})
