/** Smart routing's storage contract over memory storage (src/testing/RoutingContract.ts), and the window's slide, exact in one process. */
import { expect } from "@effect/vitest"
import { ChannelHealth } from "@tender/domain/channels/RoutingPorts"
import { Effect, Layer } from "effect"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { memoryStorage } from "../src/Infrastructure.ts"
import { CARD_EUR, newChannelId, observeAll, routingContract } from "../src/testing/RoutingContract.ts"

const storage = memoryStorage.pipe(Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer)))

routingContract("routing: memory storage", storage, {
  also: (it) => {
    it.effect("health: an answer counts for the 5 minutes of its bucket's window, then no more", () =>
      Effect.gen(function*() {
        const health = yield* ChannelHealth
        const channel = newChannelId()
        // At a bucket's start: its window is the 30 buckets (5 minutes) from there.
        const t0 = Math.ceil(Date.now() / 10_000) * 10_000
        yield* observeAll(channel, ["approved", "declined"], t0)
        yield* observeAll(channel, ["approved"], t0 + 60_000)
        const rate = (now: number) => Effect.map(health.standings([channel], CARD_EUR, now), ([s]) => s!.rate)
        expect(yield* rate(t0 + 60_000)).toEqual({ attempts: 3, approvals: 2 })
        expect(yield* rate(t0 + 299_999)).toEqual({ attempts: 3, approvals: 2 })
        expect(yield* rate(t0 + 300_000)).toEqual({ attempts: 1, approvals: 1 })
        expect(yield* rate(t0 + 360_000)).toEqual({ attempts: 0, approvals: 0 })
        // A later answer drops the expired buckets for good; the newer ones stay.
        yield* observeAll(channel, ["declined"], t0 + 320_000)
        expect(yield* rate(t0 + 320_000)).toEqual({ attempts: 2, approvals: 1 })
      }))
  }
})
