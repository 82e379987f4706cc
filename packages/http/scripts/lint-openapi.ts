/**
 * Lints the merchant API's OpenAPI document with `redocly lint` (recommended rules), as
 * `npm run lint:openapi` and as a test (OpenApiLint.test.ts). The document is generated from the
 * same `Api` value the server serves at /v1/openapi.json, written to a temp file, and checked
 * there; nothing is committed that could drift from the code.
 *
 * A few warnings are known and accepted, each with its reason below (docs/decisions.md); any other
 * problem, and every error, fails.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { OpenApi } from "effect/http-api"
import { Api } from "../src/Api.ts"

export interface LintProblem {
  readonly ruleId: string
  readonly severity: "error" | "warn"
  readonly message: string
  readonly pointer: string
}

/**
 * Accepted warnings, by rule and JSON pointer:
 * - no-ambiguous-paths: the spec fixes both by-reference reads next to `{id}/<action>` routes;
 *   the router matches the literal `by-reference` segment first and no id can be that word.
 */
const ACCEPTED: ReadonlyArray<{ readonly ruleId: string; readonly pointer: string }> = [
  { ruleId: "no-ambiguous-paths", pointer: "#/paths/~1v1~1checkout~1sessions~1{id}~1cancel" },
  { ruleId: "no-ambiguous-paths", pointer: "#/paths/~1v1~1orders~1{id}~1amount_mismatch_decision" }
]

const redoclyCli = (): string =>
  join(dirname(createRequire(import.meta.url).resolve("@redocly/cli/package.json")), "bin", "cli.js")

/** Runs redocly on `document` (default: this API's) and returns the problems not accepted above. */
export const lintOpenApi = (document: object = OpenApi.fromApi(Api)): ReadonlyArray<LintProblem> => {
  const dir = mkdtempSync(join(tmpdir(), "tender-openapi-"))
  try {
    const file = join(dir, "openapi.json")
    writeFileSync(file, JSON.stringify(document, null, 2))
    const run = spawnSync(process.execPath, [redoclyCli(), "lint", file, "--format=json"], {
      cwd: dir,
      encoding: "utf8",
      // No usage telemetry from a lint run.
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }
    })
    const start = run.stdout.indexOf("{")
    if (start < 0) throw new Error(`redocly lint produced no report (exit ${run.status}): ${run.stderr}`)
    const report = JSON.parse(run.stdout.slice(start)) as {
      problems: Array<{ ruleId: string; severity: "error" | "warn"; message: string; location: Array<{ pointer: string }> }>
    }
    return report.problems
      .map((p) => ({ ruleId: p.ruleId, severity: p.severity, message: p.message, pointer: p.location[0]?.pointer ?? "" }))
      .filter((p) => !ACCEPTED.some((a) => a.ruleId === p.ruleId && a.pointer === p.pointer))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const problems = lintOpenApi()
  for (const p of problems) console.error(`${p.severity} ${p.ruleId} at ${p.pointer}: ${p.message}`)
  console.log(problems.length === 0 ? "OpenAPI document: redocly lint clean (recommended rules)" : `${problems.length} problem(s)`)
  process.exit(problems.length === 0 ? 0 : 1)
}
