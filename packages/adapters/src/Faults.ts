/**
 * Fault injection for the crash tests: `TENDER_FAULT=<point>@<n>` kills this process with SIGKILL
 * the n-th time `point` is reached (see the domain's Faults port for the points). SIGKILL, not an
 * exit: no finalizer runs, no connection closes politely, no buffered write is flushed, which is
 * what a crash or a pulled plug does. Unset: nothing is provided, and the domain's default (no
 * faults) stands.
 */
import { type FaultPoints, Faults } from "@tender/domain"
import { Effect, Layer } from "effect"
import { InfrastructureError } from "./InfrastructureError.ts"

export interface Trigger {
  readonly point: string
  /** 1 = the first time the point is reached. */
  readonly n: number
}

/** `<point>@<n>` with n ≥ 1. */
export const parse = (spec: string): Trigger | InfrastructureError => {
  const match = /^([A-Za-z0-9_.-]+)@([1-9][0-9]*)$/.exec(spec.trim())
  if (match === null) {
    return new InfrastructureError({ message: `TENDER_FAULT must be <point>@<n> with n ≥ 1, got ${JSON.stringify(spec)}` })
  }
  return { point: match[1]!, n: Number(match[2]) }
}

const killNow = (): void => {
  process.kill(process.pid, "SIGKILL")
}

/** `kill` is injectable so the counting can be tested without dying. */
export const make = (trigger: Trigger, kill: () => void = killNow): FaultPoints => {
  let reached = 0
  return {
    at: (point) =>
      point !== trigger.point ? Effect.void : Effect.sync(() => {
        reached += 1
        if (reached === trigger.n) kill()
      })
  }
}

/** The faults of `TENDER_FAULT` (`config.fault`); a malformed value fails the start. */
export const layer = (spec: string | undefined): Layer.Layer<never, InfrastructureError> => {
  if (spec === undefined) return Layer.empty
  const trigger = parse(spec)
  return trigger instanceof InfrastructureError ? Layer.effectDiscard(Effect.fail(trigger)) : Layer.succeed(Faults, make(trigger))
}
