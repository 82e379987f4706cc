/**
 * What the console's browser tests need that is not Tender's: an authenticator (RFC 6238 TOTP,
 * written here from the RFC so that it checks the server's own rather than sharing it), axe-core
 * injected into a page, and the checks every console page must pass (its security headers, no CSP
 * refusal, no request to another host).
 */
import { createHmac } from "node:crypto"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Page, Response } from "playwright-core"
import { expect } from "vitest"

// ---------------------------------------------------------------------------------------------
// TOTP (RFC 6238 over RFC 4226): HMAC-SHA-1, 30 s steps, 6 digits.

export const TOTP_STEP_SECONDS = 30

/** RFC 4648 base32 (upper or lower case; spaces, hyphens and padding ignored). */
export const base32Decode = (text: string): Buffer => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
  const clean = text.toUpperCase().replace(/[\s=-]/g, "")
  let bits = 0
  let value = 0
  const out: Array<number> = []
  for (const char of clean) {
    const index = alphabet.indexOf(char)
    if (index === -1) throw new Error(`not base32: ${JSON.stringify(char)} in ${JSON.stringify(text)}`)
    value = (value << 5) | index
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** The HOTP code of `counter` (RFC 4226 §5.3: dynamic truncation of the HMAC-SHA-1). */
export const hotp = (key: Buffer, counter: number): string => {
  const message = Buffer.alloc(8)
  message.writeBigUInt64BE(BigInt(counter))
  const mac = createHmac("sha1", key).update(message).digest()
  const offset = mac[mac.length - 1]! & 0x0f
  const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000
  return String(binary).padStart(6, "0")
}

export const currentStep = (nowMs = Date.now()) => Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS)

/**
 * The code of the step `offset` steps from now, computed when at least `margin` seconds of the
 * current step remain (else after the step turns, at most `margin` seconds): a code about to leave
 * the server's ±1 window on the way would fail for the clock, not for the server.
 */
export const totp = async (secret: string, offset = 0, marginSeconds = 3): Promise<string> => {
  const intoStep = (Date.now() / 1000) % TOTP_STEP_SECONDS
  if (TOTP_STEP_SECONDS - intoStep < marginSeconds) await new Promise((r) => setTimeout(r, (TOTP_STEP_SECONDS - intoStep) * 1000 + 50))
  return hotp(base32Decode(secret), currentStep() + offset)
}

// ---------------------------------------------------------------------------------------------
// axe-core

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/** The WCAG 2.1 A and AA rules (the bar). */
export const WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<unknown>; readonly failureSummary?: string }>
}

/**
 * axe-core's WCAG 2.1 A/AA violations on the page as it is now. Its source goes in through the
 * DevTools protocol (page.evaluate), which the page's CSP does not govern, so the CSP under test stays as served.
 */
export const axeViolations = async (page: Page): Promise<ReadonlyArray<AxeViolation>> => {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource)
  const result = await page.evaluate(
    (tags) => (window as unknown as { axe: { run: (context: Document, options: unknown) => Promise<{ violations: Array<AxeViolation> }> } }).axe
      .run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] })
      .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) }))),
    WCAG_21_AA
  )
  return result
}

/** No axe violation on `page`; each one printed when there are any, so that a failure says what to fix. */
export const expectAxeClean = async (page: Page, name: string) => {
  const violations = await axeViolations(page)
  if (violations.length > 0) console.error(`axe violations on ${name} (${page.url()}):\n${JSON.stringify(violations, null, 2)}`)
  expect(violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")})`), name).toEqual([])
}

// ---------------------------------------------------------------------------------------------
// Headers every console page carries (design: strict CSP and friends).

export const CONSOLE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

export const expectConsoleHeaders = (response: Response | null, what: string) => {
  expect(response, what).not.toBeNull()
  const headers = response!.headers()
  expect(
    {
      csp: headers["content-security-policy"],
      nosniff: headers["x-content-type-options"],
      referrer: headers["referrer-policy"],
      cache: headers["cache-control"]
    },
    what
  ).toEqual({ csp: CONSOLE_CSP, nosniff: "nosniff", referrer: "no-referrer", cache: "no-store" })
}

/**
 * Records, for every page of the context, what the browser refused under the CSP (Chromium logs
 * each refusal as a console error): an inline style or script the page relied on would show here.
 */
export const watchCspRefusals = (page: Page, into: Array<string>) => {
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy/i.test(message.text())) into.push(`${page.url()}: ${message.text()}`)
  })
}
