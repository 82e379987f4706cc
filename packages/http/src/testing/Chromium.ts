/**
 * Headless Chromium for the browser tests and the SDK benchmark: Debian's /usr/bin/chromium (which
 * .ci/run installs) driven by playwright-core, in a throwaway profile. It records every request any
 * page or frame makes, with the frame and page that made it: the tests scan them for card numbers
 * (only the fields frame may send one, and only to Tender).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium, type Frame, type Page, type Request } from "playwright-core"

export const CHROMIUM = "/usr/bin/chromium"
export const HAVE_CHROMIUM = existsSync(CHROMIUM)

export interface SeenRequest {
  readonly url: string
  readonly body: string
  /** The frame that sent it ("" for a popup's first navigation, which has no frame yet). */
  readonly frameUrl: string
  readonly page: Page | null
}

export interface Chromium {
  readonly context: BrowserContext
  /** Every request so far, oldest first. */
  readonly requests: Array<SeenRequest>
  readonly close: () => Promise<void>
}

// Nothing the tests do not ask for: no background traffic (it would show in `requests`), no QUIC.
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

export const launchChromium = async (options: { readonly viewport?: { readonly width: number; readonly height: number } } = {}): Promise<Chromium> => {
  const profile = mkdtempSync(join(tmpdir(), "tender-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    ...(options.viewport !== undefined ? { viewport: options.viewport } : {})
  })
  const requests: Array<SeenRequest> = []
  context.on("request", (request: Request) => {
    let frameUrl = ""
    let page: Page | null = null
    try {
      frameUrl = request.frame().url()
      page = request.frame().page()
    } catch {
      // a popup's (or a navigation's) first request may have no frame yet
    }
    requests.push({ url: request.url(), body: request.postData() ?? "", frameUrl, page })
  })
  return {
    context,
    requests,
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    }
  }
}

/**
 * The issuer's page of an inline 3-D Secure challenge tender.js shows over `page`: inside its frame
 * on the fields host (challenge.html), which frames the challenge itself.
 */
export const inlineChallenge = async (page: Page): Promise<Frame> => {
  const outer = await (await page.waitForSelector("iframe[title='3-D Secure']")).contentFrame()
  const inner = await (await outer!.waitForSelector("iframe[title='3-D Secure challenge']")).contentFrame()
  return inner!
}
