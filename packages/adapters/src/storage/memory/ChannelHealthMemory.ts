/**
 * The channels' health in one process (ChannelHealth over memory storage): the view is the whole
 * truth, exact at every read (ChannelHealthView.ts). Counts older than the window are dropped as
 * each new bucket starts.
 */
import { ChannelHealth } from "@tender/domain/channels/RoutingPorts"
import * as SuccessRate from "@tender/domain/channels/SuccessRate"
import { Effect, Layer } from "effect"
import { ChannelHealthView } from "../ChannelHealthView.ts"

export const make = Effect.sync(() => {
  const view = new ChannelHealthView()
  let prunedAt = Number.NEGATIVE_INFINITY
  return ChannelHealth.of({
    observe: (observation) =>
      Effect.sync(() => {
        view.observe(observation)
        const bucket = SuccessRate.bucketOf(observation.at)
        if (bucket !== prunedAt) {
          prunedAt = bucket
          view.prune(observation.at)
        }
      }),
    standings: (channelIds, segment, now) => Effect.sync(() => view.standings(channelIds, segment, now)),
    claimProbe: (channelId, now) =>
      Effect.sync(() => {
        const claimed = view.claimable(channelId, now)
        if (claimed === null) return false
        view.keepClaim(channelId, claimed, now)
        return true
      }),
    breakers: () => Effect.sync(() => view.movedBreakers())
  })
})

export const layer: Layer.Layer<ChannelHealth> = Layer.effect(ChannelHealth, make)
