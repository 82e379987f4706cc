import { describe, expect, it } from "vitest"
import * as Card from "../src/cards/Card.ts"
import { validateCard } from "../src/cards/CardRequest.ts"
import { ValidationFailed } from "../src/kernel/Errors.ts"

describe("Card", () => {
  it.each([
    ["4242424242424242", "visa"],
    ["5555555555554444", "mastercard"],
    ["2223003122003222", "mastercard"],
    ["378282246310005", "amex"],
    ["6011111111111117", "discover"],
    ["3566002020360505", "jcb"]
  ])("detects %s as %s and passes Luhn", (number, brand) => {
    expect(Card.detectBrand(number)).toBe(brand)
    expect(Card.luhnValid(number)).toBe(true)
  })

  it("fails Luhn on a changed digit", () => {
    expect(Card.luhnValid("4242424242424241")).toBe(false)
  })

  it("validates expiry against the clock and the CVC length against the brand", () => {
    const now = new Date("2026-11-25T00:00:00Z")
    const ok = validateCard({ number: "4242 4242 4242 4242", exp_month: 11, exp_year: 2026, cvc: "123" }, now, "test")
    expect(ok).toEqual({ number: "4242424242424242", brand: "visa" })
    const expired = validateCard({ number: "4242424242424242", exp_month: 10, exp_year: 2026, cvc: "123" }, now, "test")
    expect(expired).toBeInstanceOf(ValidationFailed)
    expect((expired as ValidationFailed).errors).toEqual([{ field: "exp_month", message: "the card has expired" }])
    const amex = validateCard({ number: "378282246310005", exp_month: 1, exp_year: 2030, cvc: "123" }, now, "test")
    expect((amex as ValidationFailed).errors?.map((e) => e.field)).toEqual(["cvc"])
  })
})
