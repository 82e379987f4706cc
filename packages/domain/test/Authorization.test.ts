import { describe, expect, it } from "vitest"
import { type AuthorizationBook, captureEnded, planCapture, planVoid, remaining } from "../src/AuthorizationStatus.ts"

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

describe("void pre-flight (spec: \"no amount (always releases what remains)\")", () => {
  it("releases what remains; behind captures it closes as completed", () => {
    expect(planVoid(book())).toEqual({ release: 10_000, trigger: "void_nothing_captured" })
    expect(planVoid(book({ captured: 4_000 }))).toEqual({ release: 6_000, trigger: "void_behind_captures" })
  })

  it("contract.md: \"a void while a capture is settling releases what is neither captured nor settling\"", () => {
    expect(planVoid(book({ inFlight: 1_000 }))).toEqual({ release: 9_000, trigger: "void_while_settling" })
    expect(planVoid(book({ captured: 2_000, inFlight: 3_000 }))).toEqual({ release: 5_000, trigger: "void_while_settling" })
    // captures in flight hold all of it: nothing to release until they end
    expect((planVoid(book({ captured: 2_000, inFlight: 8_000 })) as Error & { code: string }).code).toBe("card_payment_in_progress")
  })

  it("refuses a repeated void, a void behind a final capture or void in flight, and a closing authorization", () => {
    expect((planVoid(book({ status: "canceled" })) as Error & { code: string }).code).toBe("payment_unexpected_state")
    expect((planVoid(book({ closing: true, inFlight: 1_000 })) as Error & { code: string }).code).toBe("payment_unexpected_state")
    const closing = planVoid(book({ status: "closing", inFlight: 1_000 })) as Error & { code: string }
    expect(closing.code).toBe("payment_unexpected_state")
    expect(closing.message).toContain("settling")
  })
})

describe("contract.md: \"A final capture while another capture settles is accepted when the amounts fit\"", () => {
  it("a final capture of what remains beside a settling one", () => {
    expect(planCapture(book({ inFlight: 3_000 }), 7_000)).toEqual({ amount: 7_000 })
    expect(planCapture(book({ inFlight: 3_000 }), undefined)).toEqual({ amount: 7_000 })
    expect((planCapture(book({ inFlight: 3_000 }), 7_001) as Error & { code: string }).code).toBe("capture_amount_exceeds_remaining")
    expect((planCapture(book({ status: "closing" }), 1) as Error & { code: string }).code).toBe("payment_unexpected_state")
  })
})

describe("which rows a capture's end takes (the book counts it neither captured nor in flight)", () => {
  const ended = (over: Partial<AuthorizationBook>, amount: number, final: boolean, settled: boolean) =>
    captureEnded(book(over), { amount, final }, settled)

  it("an authorized authorization: the spec's rows", () => {
    expect(ended({}, 3_000, false, true)).toEqual({ own: "partial_capture_settled" })
    expect(ended({}, 3_000, true, true)).toEqual({ own: "final_capture_settled" })
    expect(ended({ captured: 7_000 }, 3_000, false, true)).toEqual({ own: "capture_reached_total" })
    expect(ended({}, 3_000, true, false)).toEqual({ own: "capture_refused" })
  })

  it("a final capture settling while others settle leaves it closing", () => {
    expect(ended({ inFlight: 2_000 }, 3_000, true, true)).toEqual({ own: "final_capture_settled_while_settling" })
  })

  it("closing: the last capture in flight closes it, completed behind captures, canceled with nothing captured", () => {
    expect(ended({ status: "closing", inFlight: 2_000 }, 3_000, false, true)).toEqual({ own: "capture_settled" })
    expect(ended({ status: "closing", inFlight: 2_000 }, 3_000, false, false)).toEqual({ own: "capture_refused" })
    expect(ended({ status: "closing" }, 3_000, false, true)).toEqual({ own: "capture_settled", close: "closed_behind_captures" })
    expect(ended({ status: "closing", captured: 1_000 }, 3_000, false, false)).toEqual({ own: "capture_refused", close: "closed_behind_captures" })
    expect(ended({ status: "closing" }, 3_000, false, false)).toEqual({ own: "capture_refused", close: "closed_nothing_captured" })
  })
})
