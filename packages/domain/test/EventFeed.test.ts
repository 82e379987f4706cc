/** The event feed's pure parts: the cursor's text, the order of positions, and the request's validation. */
import { describe, expect, it } from "vitest"
import { ValidationFailed } from "../src/kernel/Errors.ts"
import { cursorOf, feedRequest, isAfter, later, positionOf } from "../src/webhooks/EventFeed.ts"

describe("event feed", () => {
  it("a cursor reads back as its position; anything else, or a number past storage's bigint, is refused naming `after`", () => {
    const position = { tx: 9_223_372_036_854_775_807n, seq: 42n }
    expect(positionOf(cursorOf(position))).toEqual(position)
    expect(positionOf("0.0")).toEqual({ tx: 0n, seq: 0n })
    for (const bad of ["", "1", "1.", ".1", "1.2.3", "-1.2", "1.2 ", "evt_abc", "9223372036854775808.1", "1.9223372036854775808", "12345678901234567890.1"]) {
      const refused = positionOf(bad)
      expect(refused, bad).toBeInstanceOf(ValidationFailed)
      expect((refused as ValidationFailed).errors?.map((e) => e.field)).toEqual(["after"])
    }
  })

  it("positions order by transaction, then sequence", () => {
    expect(isAfter({ tx: 2n, seq: 1n }, { tx: 1n, seq: 9n })).toBe(true)
    expect(isAfter({ tx: 1n, seq: 2n }, { tx: 1n, seq: 1n })).toBe(true)
    expect(isAfter({ tx: 1n, seq: 1n }, { tx: 1n, seq: 1n })).toBe(false)
    expect(later({ tx: 1n, seq: 9n }, { tx: 2n, seq: 0n })).toEqual({ tx: 2n, seq: 0n })
    expect(later({ tx: 3n, seq: 0n }, { tx: 2n, seq: 5n })).toEqual({ tx: 3n, seq: 0n })
  })

  it("a request: defaults (from now, every type, no wait, 100), and every problem at once", () => {
    expect(feedRequest({})).toEqual({ after: undefined, types: undefined, waitMs: 0, limit: 100 })
    expect(feedRequest({ after: "5.6", types: ["payment.failed", "payment.failed"], wait: 25, limit: 1 }))
      .toEqual({ after: { tx: 5n, seq: 6n }, types: ["payment.failed"], waitMs: 25_000, limit: 1 })
    expect(feedRequest({ types: [] })).toMatchObject({ types: undefined })
    const refused = feedRequest({ after: "x", types: ["payment.teleported"], wait: 26, limit: 0 })
    expect(refused).toBeInstanceOf(ValidationFailed)
    expect((refused as ValidationFailed).errors?.map((e) => e.field)).toEqual(["after", "types", "wait", "limit"])
    expect((refused as ValidationFailed).message).toContain("payment.teleported")
  })
})
