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

it("isDomainError holds for an error of another copy of the module (two installed versions, a bundle beside the sources), by its brand and a known code", async () => {
  // A second copy of the module: the same file under another URL is evaluated again, its classes are others.
  // @ts-expect-error the query names no file for the compiler; for the module loader it is another module
  const copy: typeof Errors = await import("../src/kernel/Errors.ts?copy")
  const foreign = new copy.ConsentConflict({ message: "m" })
  expect(foreign).not.toBeInstanceOf(Errors.ConsentConflict)
  expect(Errors.isDomainError(foreign)).toBe(true)
  const brand = Symbol.for("@tender/domain/DomainError")
  expect(Errors.isDomainError({ [brand]: true, code: "no_such_code", message: "m" })).toBe(false)
})

it("withMessage keeps the class and its code", () => {
  const error = Errors.withMessage(new Errors.WebhookDeliveryNotRetryable({ message: "one" }), "two")
  expect(error).toBeInstanceOf(Errors.WebhookDeliveryNotRetryable)
  expect([error.code, error.message]).toEqual(["webhook_delivery_not_retryable", "two"])
})
