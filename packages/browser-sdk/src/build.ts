/**
 * Builds the two browser scripts with esbuild: tender.js (the SDK, one self-contained minified file)
 * and card.js (the fields page's script), into dist/www. Run by `npm run build -w
 * @tender/browser-sdk`, which the root `pretest`/`prestart` scripts call; the server reads the
 * result (assets.ts).
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { ENV_LITERAL } from "./env.ts"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
export const OUT_DIR = resolve(root, "dist/www")

export const ENTRIES = { "tender.js": "src/sdk.ts", "card.js": "src/fields.ts", "challenge.js": "src/challenge.ts" } as const
export type AssetName = keyof typeof ENTRIES

export const build = async (): Promise<Record<AssetName, string>> => {
  // Imported here, not at the top: the server never needs esbuild, only its output.
  const esbuild = await import("esbuild")
  const out = {} as Record<AssetName, string>
  for (const [name, entry] of Object.entries(ENTRIES) as Array<[AssetName, string]>) {
    const result = await esbuild.build({
      entryPoints: [resolve(root, entry)],
      bundle: true,
      minify: true,
      format: "iife",
      target: ["es2020"],
      platform: "browser",
      legalComments: "none",
      write: false
    })
    const text = result.outputFiles[0]!.text
    if (text.split(ENV_LITERAL).length !== 2) throw new Error(`${name}: expected one ${ENV_LITERAL} placeholder`)
    out[name] = text
  }
  mkdirSync(OUT_DIR, { recursive: true })
  for (const [name, text] of Object.entries(out)) {
    // Write then rename: a server (or a parallel test) reading meanwhile sees the old file or the new, never half.
    const temporary = resolve(OUT_DIR, `.${name}.${process.pid}.tmp`)
    writeFileSync(temporary, text)
    renameSync(temporary, resolve(OUT_DIR, name))
  }
  return out
}
