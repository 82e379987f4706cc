/**
 * The vocabulary's one list (Errors.DOMAIN_ERRORS) is what the domain's error type and the HTTP
 * status table are checked against, so it must name every error class the module exports.
 */
import { expect, it } from "vitest"
import * as Errors from "../src/kernel/Errors.ts"

it("DOMAIN_ERRORS lists every error class of the vocabulary, once", () => {
  const classes = Object.entries(Errors)
    .filter(([, value]) => typeof value === "function" && typeof (value as { code?: unknown }).code === "string")
    .map(([name]) => name)
  expect(Errors.DOMAIN_ERRORS.map((c) => c.name).sort()).toEqual(classes.sort())
  expect(new Set(Errors.DOMAIN_ERRORS.map((c) => c.code)).size).toBe(Errors.DOMAIN_ERRORS.length)
})

it("isDomainError holds for the vocabulary's instances only", () => {
  expect(Errors.isDomainError(new Errors.ConsentConflict({ message: "m" }))).toBe(true)
  expect(Errors.isDomainError({ _tag: "ConsentConflict", code: "consent_conflict", message: "m" })).toBe(false)
  expect(Errors.isDomainError(new Error("m"))).toBe(false)
})

it("withMessage keeps the class and its code", () => {
  const error = Errors.withMessage(new Errors.WebhookDeliveryNotRetryable({ message: "one" }), "two")
  expect(error).toBeInstanceOf(Errors.WebhookDeliveryNotRetryable)
  expect([error.code, error.message]).toEqual(["webhook_delivery_not_retryable", "two"])
})
