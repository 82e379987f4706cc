import { describe, expect, it } from "vitest"
import {
  type AuthorizationBook,
  captureEnded,
  closingStep,
  owedRelease,
  planCapture,
  planVoid,
  releaseEnded,
  remaining,
  voidWentThrough
} from "../src/payments/Authorization.ts"

const book = (over: Partial<AuthorizationBook> = {}): AuthorizationBook => ({
  status: "authorized",
  amount: 10_000,
  captured: 0,
  inFlight: 0,
  closing: false,
  settledCaptures: 0,
  multicapture: true,
  voided: 0,
  releasing: 0,
  unreleased: 0,
  acceptedCaptureFailed: false,
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
    captureEnded(book(over), { amount, final, accepted: true }, settled, false)

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

describe("spec: a void \"always releases what remains\": what a capture in flight held and then failed to capture is released too", () => {
  // A void of 7 000 went through while a capture of 3 000 was in flight.
  const voidedWhileSettling = (over: Partial<AuthorizationBook> = {}) => book({ status: "closing", voided: 7_000, ...over })

  it("owed: nothing before a void went through; after one, what is neither captured, in flight, released nor given up", () => {
    expect(owedRelease(book({ inFlight: 3_000 }))).toBe(0)
    expect(owedRelease(voidedWhileSettling({ inFlight: 3_000 }))).toBe(0)
    expect(owedRelease(voidedWhileSettling())).toBe(3_000)
    expect(owedRelease(voidedWhileSettling({ releasing: 3_000 }))).toBe(0)
    expect(owedRelease(voidedWhileSettling({ voided: 10_000 }))).toBe(0)
    expect(owedRelease(voidedWhileSettling({ unreleased: 3_000 }))).toBe(0)
    // A final capture closed it: what it left uncaptured goes as the provider's final capture says, no release.
    expect(owedRelease(book({ status: "closing", captured: 5_000 }))).toBe(0)
  })

  it("a capture in flight failing after the void: its own row, then a release of what it held; no close until the release is recorded", () => {
    expect(captureEnded(voidedWhileSettling(), { amount: 3_000, final: false, accepted: true }, false, false))
      .toEqual({ own: "capture_refused", release: { amount: 3_000, covered: false } })
    // Another still in flight: released now all the same, closed later.
    expect(captureEnded(voidedWhileSettling({ voided: 5_000, inFlight: 2_000 }), { amount: 3_000, final: false, accepted: true }, false, false))
      .toEqual({ own: "capture_refused", release: { amount: 3_000, covered: false } })
    // Settled instead: nothing owed; the last one closes it.
    expect(captureEnded(voidedWhileSettling(), { amount: 3_000, final: false, accepted: true }, true, false))
      .toEqual({ own: "capture_settled", close: "closed_behind_captures" })
  })

  it("a provider whose void releases the whole remainder: a capture it never accepted went with the void (covered, closed at once); one it accepted did not", () => {
    expect(captureEnded(voidedWhileSettling(), { amount: 3_000, final: false, accepted: false }, false, true))
      .toEqual({ own: "capture_refused", release: { amount: 3_000, covered: true }, close: "closed_nothing_captured" })
    expect(captureEnded(voidedWhileSettling(), { amount: 3_000, final: false, accepted: true }, false, true))
      .toEqual({ own: "capture_refused", release: { amount: 3_000, covered: false } })
    expect(closingStep(voidedWhileSettling({ acceptedCaptureFailed: true }), true)).toEqual({ release: { amount: 3_000, covered: false } })
  })

  it("the release recorded, released or refused: the authorization closes once nothing is in flight", () => {
    expect(releaseEnded(voidedWhileSettling(), 3_000, true, false)).toEqual({ own: "release_ended", close: "closed_nothing_captured" })
    expect(releaseEnded(voidedWhileSettling(), 3_000, false, false)).toEqual({ own: "release_ended", close: "closed_nothing_captured" })
    expect(releaseEnded(voidedWhileSettling({ voided: 5_000, captured: 2_000 }), 3_000, true, false)).toEqual({ own: "release_ended", close: "closed_behind_captures" })
    expect(releaseEnded(voidedWhileSettling({ voided: 5_000, inFlight: 2_000 }), 3_000, true, false)).toEqual({ own: "release_ended" })
    expect(releaseEnded(voidedWhileSettling({ voided: 4_000, releasing: 3_000 }), 3_000, true, false)).toEqual({ own: "release_ended" })
  })

  it("the merchant's void going through after a capture in flight when it was asked failed: closing, and a release", () => {
    expect(voidWentThrough(book(), 10_000, false)).toEqual({ own: "void_nothing_captured" })
    expect(voidWentThrough(book({ captured: 3_000 }), 7_000, false)).toEqual({ own: "void_behind_captures" })
    expect(voidWentThrough(book({ inFlight: 3_000 }), 7_000, false)).toEqual({ own: "void_while_settling" })
    expect(voidWentThrough(book(), 7_000, false)).toEqual({ own: "void_behind_failed_capture", release: { amount: 3_000, covered: false } })
    expect(voidWentThrough(book(), 7_000, true)).toEqual({ own: "void_behind_failed_capture", release: { amount: 3_000, covered: true }, close: "closed_nothing_captured" })
  })
})
