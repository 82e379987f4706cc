/**
 * The browser SDK's static files (contract.md, Browser SDK and secure card fields):
 * - `GET /sdk/v1/tender.js`: the SDK, pinned to major version 1;
 * - `GET /fields/v1/card.html` and `/fields/v1/card.js`: the card element's iframe document, under
 *   its own strict Content-Security-Policy, and its script;
 * - `GET /fields/v1/challenge.html` and `/fields/v1/challenge.js`: the frame an inline 3-D Secure
 *   challenge is shown in (on the fields host, which merchant pages already allow to be framed).
 * Built by packages/browser-sdk (`npm run build -w @tender/browser-sdk`, run by `pretest` and
 * `prestart`); the hosts are filled in here: the API at the public URL, the fields at
 * `fieldsUrl` (TENDER_FIELDS_URL, default the public URL).
 *
 * Caching: a day's max-age per major version with an ETag (If-None-Match → 304), so fixes reach
 * every integration within a day without a new URL, and revalidation costs no body.
 */
import { type Asset, AssetsNotBuilt, cardPage, cardPageCsp, challengePage, challengePageCsp, loadScript, type TenderEnv } from "@tender/browser-sdk/assets"
import { PublicUrl } from "@tender/domain"
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

export const SDK_PATH = "/sdk/v1/tender.js"
export const FIELDS_PAGE_PATH = "/fields/v1/card.html"
export const FIELDS_SCRIPT_PATH = "/fields/v1/card.js"
export const CHALLENGE_PAGE_PATH = "/fields/v1/challenge.html"
export const CHALLENGE_SCRIPT_PATH = "/fields/v1/challenge.js"

export const SDK_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  { method: "GET", path: SDK_PATH },
  { method: "GET", path: FIELDS_PAGE_PATH },
  { method: "GET", path: FIELDS_SCRIPT_PATH },
  { method: "GET", path: CHALLENGE_PAGE_PATH },
  { method: "GET", path: CHALLENGE_SCRIPT_PATH }
]

const CACHE_CONTROL = "public, max-age=86400"

const trimSlash = (url: string) => url.replace(/\/+$/, "")

/** `If-None-Match` may list several tags, weak or strong, or `*`. */
const matches = (header: string | undefined, etag: string) =>
  header !== undefined &&
  header.split(",").some((tag) => {
    const t = tag.trim()
    return t === "*" || t === etag || t === `W/${etag}`
  })

const serve = (load: (env: TenderEnv) => Asset, extraHeaders: (env: TenderEnv) => Record<string, string>) =>
  (fieldsUrl: string | undefined) => {
    // One asset per pair of hosts: the public URL is fixed per process, so this is built once.
    const cache = new Map<string, Asset>()
    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const apiUrl = trimSlash(yield* PublicUrl)
      const env: TenderEnv = { apiUrl, fieldsUrl: trimSlash(fieldsUrl ?? apiUrl) }
      const key = `${env.apiUrl} ${env.fieldsUrl}`
      let asset = cache.get(key)
      if (asset === undefined) {
        try {
          asset = load(env)
        } catch (error) {
          if (!(error instanceof AssetsNotBuilt)) throw error
          return HttpServerResponse.text(error.message, { status: 503, headers: { "cache-control": "no-store" } })
        }
        cache.set(key, asset)
      }
      const headers = {
        etag: asset.etag,
        "cache-control": CACHE_CONTROL,
        "x-content-type-options": "nosniff",
        ...extraHeaders(env)
      }
      if (matches(request.headers["if-none-match"], asset.etag)) return HttpServerResponse.empty({ status: 304, headers })
      return HttpServerResponse.text(asset.body, { contentType: asset.contentType, headers })
    })
  }

const sdkScript = serve((env) => loadScript("tender.js", env), () => ({ "access-control-allow-origin": "*" }))
const fieldsScript = serve((env) => loadScript("card.js", env), () => ({}))
const fieldsPage = serve(() => cardPage(), (env) => ({
  "content-security-policy": cardPageCsp(env.apiUrl),
  "referrer-policy": "no-referrer"
}))
const challengeScript = serve((env) => loadScript("challenge.js", env), () => ({}))
const challengeFrame = serve(() => challengePage(), (env) => ({
  "content-security-policy": challengePageCsp(env.apiUrl),
  "referrer-policy": "no-referrer"
}))

export const layer = (options: { readonly fieldsUrl?: string | undefined }) =>
  HttpRouter.addAll([
    HttpRouter.route("GET", SDK_PATH, sdkScript(options.fieldsUrl)),
    HttpRouter.route("GET", FIELDS_PAGE_PATH, fieldsPage(options.fieldsUrl)),
    HttpRouter.route("GET", FIELDS_SCRIPT_PATH, fieldsScript(options.fieldsUrl)),
    HttpRouter.route("GET", CHALLENGE_PAGE_PATH, challengeFrame(options.fieldsUrl)),
    HttpRouter.route("GET", CHALLENGE_SCRIPT_PATH, challengeScript(options.fieldsUrl))
  ])
