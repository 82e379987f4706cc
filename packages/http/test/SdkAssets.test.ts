/**
 * The SDK's static files as the server serves them: caching per major version with an ETag and
 * 304, the hosts filled in (API at the public URL, fields at TENDER_FIELDS_URL), and the fields
 * page's own Content-Security-Policy.
 */
import { build } from "@tender/browser-sdk/build"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"

describe("GET /sdk/v1/tender.js and /fields/v1/card.{html,js}", () => {
  let server: TestServer
  const FIELDS = "https://fields.example.test"

  beforeAll(async () => {
    await build()
    server = await startTestServer({ fieldsUrl: FIELDS })
  })
  afterAll(() => server?.close())

  it("serves tender.js minified, self-contained, under 40 KB, with this deployment's hosts", async () => {
    const reply = await fetch(`${server.baseUrl}/sdk/v1/tender.js`)
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toMatch(/^text\/javascript/)
    expect(reply.headers.get("cache-control")).toBe("public, max-age=86400")
    const body = await reply.text()
    expect(Buffer.byteLength(body)).toBeLessThan(40 * 1024)
    expect(body).not.toMatch(/\bimport\s*[({"']|\brequire\(/)
    expect(body).not.toContain("__TENDER_ENV__")
    expect(body).toContain(JSON.stringify(JSON.stringify({ apiUrl: server.baseUrl, fieldsUrl: FIELDS })))
  })

  it("answers 304 to a matching If-None-Match (strong, weak, or in a list) and 200 to a stale one", async () => {
    const first = await fetch(`${server.baseUrl}/sdk/v1/tender.js`)
    const etag = first.headers.get("etag")!
    expect(etag).toMatch(/^"[\w-]+"$/)
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const again = await fetch(`${server.baseUrl}/sdk/v1/tender.js`, { headers: { "if-none-match": header } })
      expect(again.status).toBe(304)
      expect(again.headers.get("etag")).toBe(etag)
      expect(await again.text()).toBe("")
    }
    expect((await fetch(`${server.baseUrl}/sdk/v1/tender.js`, { headers: { "if-none-match": `"stale"` } })).status).toBe(200)
  })

  it("serves the fields page with its strict CSP, and its script", async () => {
    const page = await fetch(`${server.baseUrl}/fields/v1/card.html`)
    expect(page.status).toBe(200)
    const csp = page.headers.get("content-security-policy")!
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain(`connect-src ${server.baseUrl}`)
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/)
    expect(csp).toContain("frame-ancestors *")
    const html = await page.text()
    for (const autocomplete of ["cc-number", "cc-exp", "cc-csc"]) expect(html).toContain(`autocomplete="${autocomplete}"`)
    expect(html).toContain(`<script src="card.js"></script>`)
    const script = await fetch(`${server.baseUrl}/fields/v1/card.js`)
    expect(script.status).toBe(200)
    expect(script.headers.get("etag")).not.toBe(page.headers.get("etag"))
  })

  it("serves the inline challenge's frame: the card page's policy, plus framing the issuer's page", async () => {
    const page = await fetch(`${server.baseUrl}/fields/v1/challenge.html`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-security-policy")!.split("; ")).toEqual([
      "default-src 'none'",
      "script-src 'self'",
      `connect-src ${server.baseUrl}`,
      expect.stringMatching(/^style-src 'sha256-[A-Za-z0-9+/=]+'$/),
      "frame-src http: https:",
      "frame-ancestors *",
      "base-uri 'none'",
      "form-action 'none'"
    ])
    expect(await page.text()).toContain(`<script src="challenge.js"></script>`)
    const script = await fetch(`${server.baseUrl}/fields/v1/challenge.js`)
    expect(script.status).toBe(200)
    expect(await script.text()).toContain(server.baseUrl)
  })

  it("other methods on these paths are 405, unknown versions 404", async () => {
    expect((await fetch(`${server.baseUrl}/sdk/v1/tender.js`, { method: "POST" })).status).toBe(405)
    expect((await fetch(`${server.baseUrl}/sdk/v2/tender.js`)).status).toBe(404)
  })
})
