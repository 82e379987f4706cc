/**
 * The progress bar of batch commands: drawn on stderr only when stderr is a terminal, one frame per
 * finished item, the results unchanged and in order.
 */
import { Effect, Sink, Stdio } from "effect"
import { describe, expect, it } from "vitest"
import * as Progress from "../src/Progress.ts"

const run = (stderrIsTerminal: boolean, items: ReadonlyArray<number>) => {
  const written: Array<string> = []
  const stdio = Stdio.layerTest({
    stderrIsTerminal: Effect.succeed(stderrIsTerminal),
    stderr: () => Sink.forEach((chunk: string | Uint8Array) => Effect.sync(() => written.push(String(chunk))))
  })
  const results = Effect.runSync(Progress.forEach("retrying", items, (n) => Effect.succeed(n * 10)).pipe(Effect.provide(stdio)))
  return { results, stderr: written.join("") }
}

describe("Progress", () => {
  it("frame: the bar fills with the share done and names n/total", () => {
    expect(Progress.frame("retrying", 0, 4)).toBe(`retrying [${"-".repeat(30)}] 0/4`)
    expect(Progress.frame("retrying", 1, 4)).toBe(`retrying [${"#".repeat(8)}${"-".repeat(22)}] 1/4`)
    expect(Progress.frame("retrying", 4, 4)).toBe(`retrying [${"#".repeat(30)}] 4/4`)
  })

  it("on a terminal: a frame at the start and after each item, redrawn in place, then a newline", () => {
    const { results, stderr } = run(true, [1, 2])
    expect(results).toEqual([10, 20])
    expect(stderr).toBe(
      ["", Progress.frame("retrying", 0, 2), Progress.frame("retrying", 1, 2), Progress.frame("retrying", 2, 2)].join("\r") + "\n"
    )
  })

  it("off a terminal, or with nothing to do: nothing on stderr", () => {
    expect(run(false, [1, 2])).toEqual({ results: [10, 20], stderr: "" })
    expect(run(true, [])).toEqual({ results: [], stderr: "" })
  })
})
