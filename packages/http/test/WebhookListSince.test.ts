/**
 * The operator's delivery and event lists take `since`, decoded by the searches' shared decoder as
 * `created_from`: a refusal names `since`, the field the caller sent.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Webhooks } from "@tender/domain"
import { domainWithoutWorkers } from "./support/Webhooks.ts"

describe("webhook lists' since", () => {
  it.effect("a time that parses but is past the years storage holds, or one that does not parse, is refused naming since", () =>
    Effect.gen(function*() {
      const webhooks = yield* Webhooks
      for (const since of ["+010000-01-01T00:00:00Z", "yesterday"]) {
        for (const error of [
          yield* Effect.flip(webhooks.listDeliveries(undefined, { since })),
          yield* Effect.flip(webhooks.listEvents({ since }))
        ]) {
          expect(error._tag).toBe("ValidationFailed")
          expect(error.errors?.map((e) => e.field)).toEqual(["since"])
        }
      }
      expect((yield* webhooks.listDeliveries(undefined, { since: "2025-01-01T00:00:00Z" })).data).toBeInstanceOf(Array)
    }).pipe(Effect.provide(domainWithoutWorkers)))
})
