/**
 * `npm test`: the typecheck (`tsc`: tsconfig.json, the repository as one program) and the tests
 * (`vitest run` with the arguments given) side by side, since the tests need nothing from tsc and
 * on two cores neither keeps both busy alone.
 * Fails when either fails: tsc's output, held back so it does not cut through vitest's, comes last.
 */
import { spawn } from "node:child_process"

const run = (command: string, args: ReadonlyArray<string>, quiet: boolean) =>
  new Promise<{ readonly code: number; readonly output: string }>((resolve) => {
    let output = ""
    const child = spawn(command, args, { stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit" })
    child.stdout?.on("data", (chunk) => (output += chunk))
    child.stderr?.on("data", (chunk) => (output += chunk))
    child.on("error", (error) => resolve({ code: 1, output: `${command}: ${error.message}` }))
    child.on("close", (code, signal) => resolve({ code: code ?? (signal === null ? 1 : 128), output }))
  })

const [types, tests] = await Promise.all([run("tsc", [], true), run("vitest", ["run", ...process.argv.slice(2)], false)])
if (types.code !== 0) process.stdout.write(`\ntsc failed (exit ${types.code}):\n${types.output}\n`)
process.exit(types.code !== 0 ? types.code : tests.code)
