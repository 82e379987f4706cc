/**
 * The code → status table (ApiError.ts) is total over the domain's error vocabulary at compile time.
 * The `@ts-expect-error` lines are the proof that the check bites: tsc -b fails if leaving a row (so
 * its codes) out of the table ever stops being a type error, since the directive would then be unused.
 */
import { describe, expect, it } from "vitest"
import { Errors } from "@tender/domain"
import { STATUS_ROWS, statusOf, statusTable } from "../src/ApiError.ts"

describe("the error table", () => {
  it("does not compile with a row removed", () => {
    const [, ...withoutBadRequest] = STATUS_ROWS
    // @ts-expect-error the 400 row's codes (validation_failed, …) would have no status
    statusTable(withoutBadRequest)
    // @ts-expect-error one row alone leaves every other code out
    statusTable([[404, [Errors.NotFound]]] as const)
    expect(statusTable(STATUS_ROWS)).toEqual(statusTable([...STATUS_ROWS].reverse()))
  })

  it("names every class of the vocabulary once", () => {
    const listed = STATUS_ROWS.flatMap(([, classes]) => classes.map((c) => c.code))
    expect(new Set(listed).size).toBe(listed.length)
    expect([...listed].sort()).toEqual(Errors.DOMAIN_ERRORS.map((c) => c.code).sort())
  })

  it("answers each domain error with its row's status", () => {
    for (const [status, classes] of STATUS_ROWS) {
      for (const c of classes) expect(statusOf(c.code)).toBe(status)
    }
  })
})
