/**
 * A state machine as data: rows of (from, trigger, to). Aggregates declare their table once; the
 * pure `step` function is the only way their status changes, and the docs' diagrams are rendered
 * from the same rows.
 */

import { Result } from "effect"

/** One row of a status table: from which statuses a trigger moves to which, and what it emits. */
export interface Transition<S extends string, T extends string> {
  readonly from: ReadonlyArray<S>
  readonly trigger: T
  readonly to: S
  /** The condition in the spec's words, when a row has one. */
  readonly when?: string
  /** Events the transition emits: `apply` returns exactly these, so the table is their one home. */
  readonly emits?: ReadonlyArray<string>
}

/** A status table: the states, the final ones, and the transitions. */
export interface Machine<S extends string, T extends string> {
  readonly name: string
  readonly states: ReadonlyArray<S>
  readonly finals: ReadonlyArray<S>
  readonly transitions: ReadonlyArray<Transition<S, T>>
}

/** Declares a status table (typed by its states and triggers). */
export const define = <S extends string, T extends string>(machine: Machine<S, T>): Machine<S, T> => machine

/** The next status, or `undefined` when the table has no such move (the caller raises its typed error). */
export const step = <S extends string, T extends string>(machine: Machine<S, T>, from: S, trigger: T): S | undefined =>
  machine.transitions.find((t) => t.trigger === trigger && t.from.includes(from))?.to

/** Whether the status is one the table never leaves. */
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

/** A record with a status: the aggregates' rows (versioned when their updates are version-checked). */
export interface Stateful<S extends string> {
  readonly status: S
  readonly updated_at: string
  readonly version?: number
}

declare const DecidedRow: unique symbol
/**
 * A row produced by `apply` (a transition) or `revise`: the only kind the aggregates' repositories
 * take in `update`, so no code patches a stored row's fields but through these two.
 */
export type Decided<R> = R & { readonly [DecidedRow]: true }

/** What a transition produced: the next row (version bumped) and the events its table rows emit. */
export interface Moved<R> {
  readonly next: Decided<R>
  readonly events: ReadonlyArray<string>
}

/** The table has no row for this move. Each aggregate turns it into its own domain error. */
export interface NoSuchMove {
  readonly machine: string
  readonly from: string
  readonly trigger: string
}

/** Fields a transition may set beside the status; status, version and updated_at are its own. */
export type Changes<R> = Partial<Omit<R, "status" | "version" | "updated_at">>

/**
 * The one place where a status changes: applies the triggers in turn through the table, bumps the
 * version, and collects the events of every row taken, from the table's `emits` column.
 */
export const apply = <S extends string, T extends string, R extends Stateful<S>>(
  machine: Machine<S, T>,
  record: R,
  triggers: T | ReadonlyArray<T>,
  at: string,
  changes: Changes<R> = {}
): Result.Result<Moved<R>, NoSuchMove> => {
  let status = record.status
  const events: Array<string> = []
  for (const trigger of typeof triggers === "string" ? [triggers as T] : triggers as ReadonlyArray<T>) {
    const row = machine.transitions.find((t) => t.trigger === trigger && t.from.includes(status))
    if (row === undefined) return Result.fail({ machine: machine.name, from: status, trigger })
    status = row.to
    events.push(...(row.emits ?? []))
  }
  return Result.succeed({ next: { ...record, ...changes, status, updated_at: at, ...bump(record) } as Decided<R>, events })
}

const bump = (record: Stateful<string>) => (record.version === undefined ? {} : { version: record.version + 1 })

/**
 * An aggregate's `transition(record, triggers, at, changes)`: `apply` over its table, a refused move
 * turned into the aggregate's own error.
 */
export const transitionOf = <S extends string, T extends string, R extends Stateful<S>, E>(
  machine: Machine<S, T>,
  refuse: (record: R, move: string) => E
) =>
(record: R, triggers: T | ReadonlyArray<T>, at: string, changes: Changes<R> = {}): Result.Result<Moved<R>, E> =>
  Result.mapError(apply(machine, record, triggers, at, changes), (e) => refuse(record, describeMove(e)))

/** A change of fields that keeps the status (a next action, a 3-D Secure answer): never a status. */
export const revise = <R extends Stateful<string>>(record: R, changes: Changes<R>, at: string): Decided<R> =>
  ({
    ...record,
    ...changes,
    status: record.status,
    updated_at: at,
    ...bump(record)
  }) as Decided<R>

/** A refused move, in words. */
export const describeMove = (e: NoSuchMove): string => `${e.machine} cannot go from ${e.from} on ${e.trigger}`
