/**
 * Plain-text layouts for the readable (non `--json`) output: a table of rows under a header, and a
 * list of label/value pairs. No colours or box drawing, so the output pastes cleanly into tickets.
 */

const pad = (cell: string, width: number) => cell + " ".repeat(Math.max(0, width - cell.length))

/** Columns are as wide as their widest cell, two spaces apart; trailing spaces are trimmed. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)))
  return [header, ...rows]
    .map((row) => widths.map((w, i) => pad(row[i] ?? "", w)).join("  ").trimEnd())
    .join("\n")
}

/** One `label  value` line per pair, the values aligned. */
export const fields = (pairs: ReadonlyArray<readonly [label: string, value: string]>): string => {
  const width = Math.max(0, ...pairs.map(([label]) => label.length))
  return pairs.map(([label, value]) => `${pad(label, width)}  ${value}`.trimEnd()).join("\n")
}
