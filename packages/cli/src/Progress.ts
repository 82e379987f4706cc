/**
 * Progress of a batch on stderr: a bar with n/total, redrawn in place with `\r`. effect/cli has no
 * progress facility, and its TerminalCapabilities answers for stdout; the bar goes to stderr, so it
 * is drawn when stderr is a terminal (also under `--json … | jq`). Captured or piped stderr (CI,
 * logs, scripts reading the error object) sees none of it, and stdout, where results go, never does.
 */
import { Effect, Stdio, Stream } from "effect"

const WIDTH = 30

/** One frame: `label [##########--------------------] 12/36`. */
export const frame = (label: string, done: number, total: number): string => {
  const filled = total === 0 ? WIDTH : Math.round((done / total) * WIDTH)
  return `${label} [${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}] ${done}/${total}`
}

/** `Effect.forEach` in order, one item at a time, drawing the bar as each one finishes. */
export const forEach = <A, B, E, R>(
  label: string,
  items: ReadonlyArray<A>,
  f: (item: A) => Effect.Effect<B, E, R>
): Effect.Effect<Array<B>, E, R | Stdio.Stdio> =>
  Effect.gen(function*() {
    const stdio = yield* Stdio.Stdio
    if (items.length === 0 || !(yield* stdio.stderrIsTerminal)) return yield* Effect.forEach(items, f)
    // A frame stderr fails to take is lost; the batch goes on.
    const draw = (text: string) => Effect.ignore(Stream.run(Stream.make(text), stdio.stderr()))
    let done = 0
    yield* draw(`\r${frame(label, done, items.length)}`)
    return yield* Effect.forEach(items, (item) => Effect.tap(f(item), () => draw(`\r${frame(label, ++done, items.length)}`))).pipe(
      // The last frame stays on screen; what follows starts on a line of its own.
      Effect.ensuring(draw("\n"))
    )
  })
