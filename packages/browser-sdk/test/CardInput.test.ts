import { describe, expect, it } from "vitest"
import { cvcState, detectBrand, expiryState, firstError, formatExpiry, formatNumber, numberState, parseExpiry } from "../src/cardInput.ts"
import { resolveLocale } from "../src/locales.ts"

const NOW = new Date(Date.UTC(2026, 10, 26))

describe("card checks before anything leaves the browser", () => {
  it("detects brands from the first digits", () => {
    expect(detectBrand("4242")).toBe("visa")
    expect(detectBrand("5555")).toBe("mastercard")
    expect(detectBrand("2221")).toBe("mastercard")
    expect(detectBrand("3782")).toBe("amex")
    expect(detectBrand("6011")).toBe("discover")
    expect(detectBrand("3530")).toBe("jcb")
    expect(detectBrand("9999")).toBe("unknown")
  })

  it("number: complete only when the length fits the brand and Luhn holds; an error once hopeless or left", () => {
    expect(numberState("4242 4242 4242 4242", false)).toEqual({ empty: false, complete: true })
    expect(numberState("4242 4242", false)).toEqual({ empty: false, complete: false, error: undefined })
    expect(numberState("4242 4242", true).error).toBe("invalid_number")
    expect(numberState("4242424242424241", false).error).toBeUndefined()
    expect(numberState("4242424242424241999", false).error).toBe("invalid_number")
    expect(numberState("378282246310005", false).complete).toBe(true)
    expect(numberState("3782822463100051", false).error).toBe("invalid_number")
    expect(numberState("", false)).toEqual({ empty: true, complete: false, error: undefined })
    expect(numberState("", true).error).toBe("invalid_number")
  })

  it("expiry: MM / YY, month 1–12, not before this month", () => {
    expect(expiryState("11 / 26", NOW, false).complete).toBe(true)
    expect(expiryState("10 / 26", NOW, false).error).toBe("invalid_expiry")
    expect(expiryState("13 / 30", NOW, false).error).toBe("invalid_expiry")
    expect(expiryState("00 / 30", NOW, false).error).toBe("invalid_expiry")
    expect(expiryState("12", NOW, false).error).toBeUndefined()
    expect(expiryState("12", NOW, true).error).toBe("invalid_expiry")
    expect(parseExpiry("07 / 2031")).toEqual({ month: 7, year: 2031 })
    expect(parseExpiry("7/31")).toBeUndefined()
  })

  it("cvc: four digits for amex, three otherwise", () => {
    expect(cvcState("123", "visa", false).complete).toBe(true)
    expect(cvcState("1234", "visa", false).error).toBe("invalid_cvc")
    expect(cvcState("123", "amex", false)).toEqual({ empty: false, complete: false, error: undefined })
    expect(cvcState("123", "amex", true).error).toBe("invalid_cvc")
    expect(cvcState("1234", "amex", false).complete).toBe(true)
  })

  it("formats as typed and reports the first error in form order", () => {
    expect(formatNumber("4242424242424242")).toBe("4242 4242 4242 4242")
    expect(formatNumber("378282246310005")).toBe("3782 822463 10005")
    expect(formatExpiry("4")).toBe("04 / ")
    expect(formatExpiry("1234")).toBe("12 / 34")
    expect(formatExpiry("12", true)).toBe("12")
    expect(firstError({ number: { empty: false, complete: true }, expiry: { empty: false, complete: false, error: "invalid_expiry" }, cvc: { empty: true, complete: false, error: "invalid_cvc" } }))
      .toEqual({ field: "expiry", code: "invalid_expiry" })
  })

  it("locales: en, es, pt, nl, de; a regional tag falls back to its language, anything else to the browser's or English", () => {
    expect(resolveLocale("es-MX", "en")).toBe("es")
    expect(resolveLocale("pt_BR", "en")).toBe("pt")
    expect(resolveLocale("fr", "de-DE")).toBe("de")
    expect(resolveLocale(undefined, "nl-NL")).toBe("nl")
    expect(resolveLocale("xx", "yy")).toBe("en")
  })
})
