/**
 * A state machine as data: rows of (from, trigger, to). Aggregates declare their table once; the
 * pure `step` function is the only way their status changes, and the docs' diagrams are rendered
 * from the same rows.
 */

export interface Transition<S extends string, T extends string> {
  readonly from: ReadonlyArray<S>
  readonly trigger: T
  readonly to: S
  /** The condition in the spec's words, when a row has one. */
  readonly when?: string
  /** Events the transition emits (documentation; the use case writes them). */
  readonly emits?: ReadonlyArray<string>
}

export interface Machine<S extends string, T extends string> {
  readonly name: string
  readonly states: ReadonlyArray<S>
  readonly finals: ReadonlyArray<S>
  readonly transitions: ReadonlyArray<Transition<S, T>>
}

export const define = <S extends string, T extends string>(machine: Machine<S, T>): Machine<S, T> => machine

/** The next status, or `undefined` when the table has no such move (the caller raises its typed error). */
export const step = <S extends string, T extends string>(machine: Machine<S, T>, from: S, trigger: T): S | undefined =>
  machine.transitions.find((t) => t.trigger === trigger && t.from.includes(from))?.to

export const isFinal = <S extends string, T extends string>(machine: Machine<S, T>, status: S): boolean =>
  machine.finals.includes(status)

/** Renders the table as a Markdown table and a mermaid state diagram. */
export const toMarkdown = <S extends string, T extends string>(machine: Machine<S, T>): string => {
  const rows = machine.transitions.map((t) =>
    `| ${t.from.join(", ")} | ${t.trigger} | ${t.when ?? ""} | ${t.to} | ${(t.emits ?? []).join(", ")} |`
  )
  const edges = machine.transitions.flatMap((t) =>
    t.from.map((f) => `  ${f} --> ${t.to}: ${t.trigger}`)
  )
  const finals = machine.finals.map((f) => `  ${f} --> [*]`)
  return [
    `## ${machine.name}`,
    "",
    `Final: ${machine.finals.join(", ") || "none"}.`,
    "",
    "| From | Trigger | Condition | To | Emits |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    "```mermaid",
    "stateDiagram-v2",
    ...[...new Set(edges)],
    ...finals,
    "```",
    ""
  ].join("\n")
}
