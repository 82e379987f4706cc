/**
 * What the examples' install tests share (embed-service, installed-cli): the packages packed by
 * scripts/pack.ts, an example copied with its tarballs into a fresh directory outside the
 * repository, installed there with npm (registry dependencies only, no workspace links), and its
 * commands run on Node 22 with none of this run's settings.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/**
 * A child's environment: none of the run's storage or server settings (the test PostgreSQL's
 * DATABASE_URL, REDIS_URL, TENDER_*), nothing tying npm to the repository (npx's npm_package_*,
 * the local prefix), nor this vitest's own (an example's vitest is a run of its own); Node 22 first
 * on PATH, as for someone who installed it (`tender` is a `#!/usr/bin/env node` script).
 */
export const cleanEnv = (extra: Record<string, string> = {}): Record<string, string | undefined> => {
  const clean: Record<string, string | undefined> = { ...process.env }
  for (const name of Object.keys(clean)) {
    if (
      ["DATABASE_URL", "REDIS_URL", "PORT", "INIT_CWD", "NODE_OPTIONS", "npm_config_local_prefix"].includes(name) ||
      ["TENDER_", "VITEST", "npm_package_", "npm_lifecycle_"].some((prefix) => name.startsWith(prefix))
    ) delete clean[name]
  }
  return { ...clean, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`, ...extra }
}

export interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to its end, whatever its exit code. */
export const run = (file: string, args: ReadonlyArray<string>, cwd: string, extra: Record<string, string> = {}) =>
  new Promise<Run>((resolve) => {
    execFile(file, args, { cwd, env: cleanEnv(extra), encoding: "utf8", timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }))
  })

/** Runs a command that must succeed; its stdout. */
export const succeed = async (file: string, args: ReadonlyArray<string>, cwd: string, extra?: Record<string, string>) => {
  const result = await run(file, args, cwd, extra)
  if (result.code !== 0) throw new Error(`${file} ${args.join(" ")} exited with ${result.code}:\n${result.stdout}\n${result.stderr}`)
  return result.stdout
}

/** Plain Node 22: no TypeScript stripped, so nothing raw can hide in the packages. */
export const node = (args: ReadonlyArray<string>, cwd: string, extra?: Record<string, string>) =>
  succeed(process.execPath, ["--no-experimental-strip-types", ...args], cwd, extra)

/** The repository's TypeScript, type-checking a project (a consumer's tsconfig) in `dir`. */
export const typecheck = (dir: string) => node([path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], dir)

/** How long each step took, for the test's closing line. */
export const stopwatch = () => {
  const timings: Array<string> = []
  const timed = async <A>(what: string, f: () => Promise<A>) => {
    const started = Date.now()
    const result = await f()
    timings.push(`${what} ${((Date.now() - started) / 1000).toFixed(1)} s`)
    return result
  }
  return { timed, summary: () => timings.join(", ") }
}

/**
 * A fresh directory under the system's temporary one. 0755: under root the embedded PostgreSQL runs
 * as `postgres`, who must reach its binaries (installed here) and its data directory.
 */
export const workDir = async (prefix: string) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix))
  await fs.chmod(dir, 0o755)
  return dir
}

/** scripts/pack.ts for just these packages (by folder: api, domain, …, cli) into `outDir`; the tarballs' paths. */
export const pack = async (outDir: string, only: ReadonlyArray<string>) =>
  (await succeed(process.execPath, [path.join(ROOT, "scripts/pack.ts"), outDir, "--only", only.join(",")], ROOT))
    .trim().split("\n").filter((line) => line.endsWith(".tgz"))

/**
 * examples/`name`'s `files` copied to `to`, its package.json's `file:../../.pack/` tarballs pointed
 * at `packDir`, with `dependencies` added; its manifest as written.
 */
export const copyExample = async (name: string, files: ReadonlyArray<string>, to: string, packDir: string, dependencies: Record<string, string> = {}) => {
  await fs.mkdir(to)
  for (const file of files) await fs.copyFile(path.join(ROOT, "examples", name, file), path.join(to, file))
  const manifest = JSON.parse((await fs.readFile(path.join(to, "package.json"), "utf8")).replaceAll("file:../../.pack/", `file:${packDir}/`))
  manifest.dependencies = { ...manifest.dependencies, ...dependencies }
  await fs.writeFile(path.join(to, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`)
  return manifest
}

/** `npm install` in `dir`, from the cache where it can (one install per test). */
export const npmInstall = (dir: string) => succeed("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], dir)
