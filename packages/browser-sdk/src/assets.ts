/**
 * The built scripts as the server serves them: read from dist/www (written by build.ts), with this
 * deployment's hosts filled into the placeholder, and an ETag of the exact bytes served.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { type AssetName, OUT_DIR } from "./build.ts"
import { ENV_LITERAL, type TenderEnv } from "./env.ts"
import { CARD_HTML, cardPageCsp, CHALLENGE_HTML, challengePageCsp } from "./page.ts"

export interface Asset {
  readonly body: string
  readonly etag: string
  readonly contentType: string
}

const etagOf = (body: string) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 32)}"`

/** Thrown when the scripts were never built: the server answers 503 naming the command. */
export class AssetsNotBuilt extends Error {}

export const loadScript = (name: AssetName, env: TenderEnv): Asset => {
  let built: string
  try {
    built = readFileSync(resolve(OUT_DIR, name), "utf8")
  } catch {
    throw new AssetsNotBuilt(`${name} is not built: run \`npm run build -w @tender/browser-sdk\``)
  }
  // A function replacement: the JSON must not be read for `$&`-style patterns.
  const body = built.replace(ENV_LITERAL, () => JSON.stringify(JSON.stringify(env)))
  return { body, etag: etagOf(body), contentType: "text/javascript; charset=utf-8" }
}

export const cardPage = (): Asset => ({ body: CARD_HTML, etag: etagOf(CARD_HTML), contentType: "text/html; charset=utf-8" })
export const challengePage = (): Asset => ({ body: CHALLENGE_HTML, etag: etagOf(CHALLENGE_HTML), contentType: "text/html; charset=utf-8" })

export { cardPageCsp, challengePageCsp }
export type { AssetName, TenderEnv }
