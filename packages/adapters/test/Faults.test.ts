import { describe, expect, it } from "@effect/vitest"
import { Faults } from "@tender/domain"
import { Effect, Exit, Layer } from "effect"
import * as FaultsEnv from "../src/Faults.ts"
import { InfrastructureError } from "../src/InfrastructureError.ts"

describe("TENDER_FAULT", () => {
  it.effect("kills on the n-th time its point is reached, once, and ignores every other point", () =>
    Effect.gen(function*() {
      const kills: Array<number> = []
      let reached = 0
      const faults = FaultsEnv.make({ point: "capture.after_reserve", n: 3 }, () => void kills.push(reached))
      for (const point of ["capture.after_reserve", "void.after_reserve", "capture.after_reserve", "capture.after_record", "capture.after_reserve", "capture.after_reserve"]) {
        if (point === "capture.after_reserve") reached += 1
        yield* faults.at(point)
      }
      // Killed when the point was reached the third time, not before and not again.
      expect(kills).toEqual([3])
    }))

  it("parses <point>@<n> and refuses anything else", () => {
    expect(FaultsEnv.parse("provider.authorize.applied@2")).toEqual({ point: "provider.authorize.applied", n: 2 })
    for (const bad of ["create.after_reserve", "create.after_reserve@0", "@1", "x@-1", "x@1.5"]) {
      expect(FaultsEnv.parse(bad)).toBeInstanceOf(InfrastructureError)
    }
  })

  it.effect("unset leaves the domain's default (no faults); set replaces it; a malformed value fails the layer", () =>
    Effect.gen(function*() {
      const unset = yield* Effect.provide(Effect.service(Faults), FaultsEnv.layer(undefined))
      expect(unset).toBe(yield* Faults)
      const armed = yield* Effect.provide(Effect.service(Faults), FaultsEnv.layer("nowhere.reached@1"))
      expect(armed).not.toBe(yield* Faults)
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(FaultsEnv.layer("nonsense"))))
      expect(Exit.isFailure(exit)).toBe(true)
    }))
})
