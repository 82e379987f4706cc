/**
 * Lints the merchant API's OpenAPI document with `redocly lint` (recommended rules) and Spectral
 * (`spectral:oas` and the OWASP API Security ruleset, as packages/http/openapi/spectral.yaml turns
 * them), as `npm run lint:openapi` and as a test (OpenApiLint.test.ts, on the document a real server
 * serves). The script generates the document from the same `Api` value the server serves at
 * /v1/openapi.json; each document is written to a temp file and checked there, so nothing is
 * committed that could drift from the code.
 *
 * Every problem fails, of either linter and any severity, but for the redocly warnings accepted
 * below: a Spectral rule that does not fit is turned off in the checked-in ruleset, with its reason,
 * not ignored here (docs/decisions.md, "OpenAPI document and the OWASP rules").
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { OpenApi } from "effect/http-api"
import { Api } from "../src/Api.ts"

export interface LintProblem {
  readonly linter: "redocly" | "spectral"
  /** Which of the documents linted together (their index). */
  readonly document: number
  readonly ruleId: string
  readonly severity: "error" | "warn" | "info" | "hint"
  readonly message: string
  readonly pointer: string
}

/**
 * Accepted redocly warnings, by rule and JSON pointer:
 * - no-ambiguous-paths: the spec fixes both by-reference reads next to `{id}/<action>` routes;
 *   the router matches the literal `by-reference` segment first and no id can be that word.
 */
const ACCEPTED: ReadonlyArray<{ readonly ruleId: string; readonly pointer: string }> = [
  { ruleId: "no-ambiguous-paths", pointer: "#/paths/~1v1~1checkout~1sessions~1{id}~1cancel" },
  { ruleId: "no-ambiguous-paths", pointer: "#/paths/~1v1~1orders~1{id}~1amount_mismatch_decision" }
]

/** The checked-in Spectral ruleset: the only place a rule is turned off, each with its reason. */
export const SPECTRAL_RULESET = fileURLToPath(new URL("../openapi/spectral.yaml", import.meta.url))

const cliOf = (pkg: string, bin: string) => join(dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), bin)

/** Runs a linter's CLI with this Node; resolves with its output, whatever its exit status (a finding exits 1). */
const run = (cli: string, args: ReadonlyArray<string>, cwd: string) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    // No usage telemetry from a lint run.
    const child = spawn(process.execPath, [cli, ...args], {
      cwd,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.once("error", reject)
    child.once("close", (status) => resolve({ status, stdout, stderr }))
  })

/** Which document a report names (by its file, as the linter spells it: relative or absolute). */
const indexOf = (files: ReadonlyArray<string>, source: string | undefined) =>
  files.findIndex((file) => source !== undefined && (source === file || source.endsWith(`/${file}`)))

const redocly = async (files: ReadonlyArray<string>, dir: string): Promise<ReadonlyArray<LintProblem>> => {
  const out = await run(cliOf("@redocly/cli", "bin/cli.js"), ["lint", ...files, "--format=json"], dir)
  const start = out.stdout.indexOf("{")
  if (start < 0) throw new Error(`redocly lint produced no report (exit ${out.status}): ${out.stderr}`)
  // One report per file, written one after the other (`}{` between them).
  const reports = JSON.parse(`[${out.stdout.slice(start).replace(/^\}\{$/gm, "},{")}]`) as Array<{
    problems: Array<{ ruleId: string; severity: "error" | "warn"; message: string; location: Array<{ pointer: string; source: { ref: string } }> }>
  }>
  return reports.flatMap((report) =>
    report.problems.map((p) => ({
      linter: "redocly" as const,
      document: indexOf(files, p.location[0]?.source.ref),
      ruleId: p.ruleId,
      severity: p.severity,
      message: p.message,
      pointer: p.location[0]?.pointer ?? ""
    }))
  )
}

const SPECTRAL_SEVERITY = ["error", "warn", "info", "hint"] as const

const spectral = async (files: ReadonlyArray<string>, dir: string): Promise<ReadonlyArray<LintProblem>> => {
  const report = join(dir, "spectral.json")
  const out = await run(
    cliOf("@stoplight/spectral-cli", "dist/index.js"),
    ["lint", ...files, "--ruleset", SPECTRAL_RULESET, "--format", "json", "--output", report, "--quiet"],
    dir
  )
  let results: Array<{ code: string; severity: number; message: string; path: Array<string | number>; source: string }>
  try {
    results = JSON.parse(readFileSync(report, "utf8"))
  } catch {
    throw new Error(`spectral lint produced no report (exit ${out.status}): ${out.stderr}${out.stdout}`)
  }
  return results.map((r) => ({
    linter: "spectral",
    document: indexOf(files, r.source),
    ruleId: r.code,
    severity: SPECTRAL_SEVERITY[r.severity] ?? "error",
    message: r.message,
    pointer: `#/${r.path.map((k) => String(k).replaceAll("~", "~0").replaceAll("/", "~1")).join("/")}`
  }))
}

/**
 * Runs both linters once over `documents` (default: this API's) and returns the problems not
 * accepted above, each naming its document by index.
 */
export const lintOpenApi = async (documents: ReadonlyArray<object> = [OpenApi.fromApi(Api)]): Promise<ReadonlyArray<LintProblem>> => {
  const dir = mkdtempSync(join(tmpdir(), "tender-openapi-"))
  try {
    // Named relative to `dir`, where the linters run.
    const files = documents.map((document, i) => {
      const file = `openapi-${i}.json`
      writeFileSync(join(dir, file), JSON.stringify(document, null, 2))
      return file
    })
    const problems = (await Promise.all([redocly(files, dir), spectral(files, dir)])).flat()
    return problems.filter((p) => !(p.linter === "redocly" && ACCEPTED.some((a) => a.ruleId === p.ruleId && a.pointer === p.pointer)))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const problems = await lintOpenApi()
  for (const p of problems) console.error(`${p.linter} ${p.severity} ${p.ruleId} at ${p.pointer}: ${p.message}`)
  console.log(
    problems.length === 0
      ? "OpenAPI document: redocly lint (recommended rules) and Spectral (spectral:oas + OWASP, packages/http/openapi/spectral.yaml) clean"
      : `${problems.length} problem(s)`
  )
  process.exit(problems.length === 0 ? 0 : 1)
}
