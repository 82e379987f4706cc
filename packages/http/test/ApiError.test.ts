/** The one code → status table (ApiError.ts) against rows of the spec's error tables. */
import { describe, expect, it } from "vitest"
import { Errors } from "@tender/domain"
import { statusOf } from "../src/ApiError.ts"

describe("statusOf", () => {
  it.each([
    // spec: "| merchant_reference_ambiguous | 409 | Reference matches more than one transaction. |"
    [Errors.MerchantReferenceAmbiguous.code, 409],
    [Errors.MerchantReferenceRequired.code, 400],
    [Errors.CountryRequired.code, 400],
    [Errors.UnknownPaymentMethod.code, 400],
    [Errors.ValidationFailed.code, 400],
    [Errors.PaymentUnroutable.code, 404]
  ] as const)("%s → %i", (code, status) => {
    expect(statusOf(code)).toBe(status)
  })
})
