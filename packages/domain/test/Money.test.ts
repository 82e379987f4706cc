import { describe, expect, it } from "vitest"
import * as Money from "../src/kernel/Money.ts"

describe("Money", () => {
  it.each([
    ["10.50", "USD", 1050],
    ["10", "USD", 1000],
    ["0.01", "USD", 1],
    ["1500", "CLP", 1500],
    ["1.234", "KWD", 1234],
    ["007.5", "EUR", 750]
  ])("parses %s %s into %i minor units", (input, currency, minor) => {
    expect(Money.parseAmount(input, currency)).toEqual({ minor })
  })

  it.each([
    ["10.505", "USD", "too_many_decimals"],
    ["1.5", "CLP", "too_many_decimals"],
    ["0", "USD", "not_positive"],
    ["0.00", "USD", "not_positive"],
    ["-1", "USD", "not_positive"],
    ["-0.50", "USD", "not_positive"],
    ["-", "USD", "format"],
    ["1e3", "USD", "format"],
    ["10.", "USD", "format"],
    [" 10", "USD", "format"],
    ["1234567890123456", "USD", "too_large"]
  ])("refuses %s %s (%s)", (input, currency, error) => {
    expect(Money.parseAmount(input, currency)).toEqual({ error })
  })

  it("renders minor units as exact response numbers and decimal strings", () => {
    expect(Money.toMajor(1050, "USD")).toBe(10.5)
    expect(Money.toMajor(1, "USD")).toBe(0.01)
    expect(Money.toMajor(1500, "CLP")).toBe(1500)
    expect(Money.toMajor(1234, "KWD")).toBe(1.234)
    expect(Money.toDecimalString(5, "USD")).toBe("0.05")
    expect(Money.toDecimalString(123456789012345, "USD")).toBe("1234567890123.45")
    // every cent from 0.01 to 100.00 survives the round trip exactly
    for (let minor = 1; minor <= 10_000; minor++) {
      const text = Money.toDecimalString(minor, "USD")
      expect(Money.parseAmount(String(Money.toMajor(minor, "USD")), "USD")).toEqual({ minor })
      expect(Money.parseAmount(text, "USD")).toEqual({ minor })
    }
  })

  it("knows the ISO 4217 exponents", () => {
    expect([Money.exponent("USD"), Money.exponent("JPY"), Money.exponent("COP"), Money.exponent("BHD")]).toEqual([2, 0, 0, 3])
  })
})
