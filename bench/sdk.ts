/**
 * The browser SDK's weight and speed: tender.js's size as served (minified bytes, and gzipped for
 * reference) and the card element's ready time (mount() to `ready`, in headless Chromium, page
 * and fields on different origins over loopback), over `--runs` mounts.
 *
 *   npm run bench:sdk                # 20 mounts
 *   npm run bench:sdk -- --runs 50
 *
 * Needs /usr/bin/chromium (Debian's package). Starts an in-memory Tender server and a "shop" page
 * server on free loopback ports; leaves nothing behind.
 */
import { build } from "@tender/browser-sdk/build"
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from "@tender/http/testing/Chromium"
import { startTestServer } from "@tender/http/testing/TestServer"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { parseArgs } from "node:util"
import { gzipSync } from "node:zlib"

const { values } = parseArgs({ options: { runs: { type: "string", default: "20" } } })
const runs = Math.max(1, Number(values.runs) || 20)

await build()
const server = await startTestServer()
const script = await (await fetch(`${server.baseUrl}/sdk/v1/tender.js`)).text()
const minified = Buffer.byteLength(script)
console.log(`tender.js: ${minified} bytes minified (limit 40960), ${gzipSync(script).length} bytes gzipped`)

if (!HAVE_CHROMIUM) {
  console.log(`ready time: not measured, ${CHROMIUM} is absent`)
  await server.close()
  process.exit(0)
}

const shop = createServer((_request, response) => {
  response.writeHead(200, { "content-type": "text/html" })
  response.end(`<!doctype html><div id="card"></div><script src="${server.baseUrl}/sdk/v1/tender.js"></script>`)
})
await new Promise<void>((listening) => shop.listen(0, "127.0.0.1", () => listening()))
const shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}/`
const browser = await launchChromium()
const context = browser.context
try {
  const page = await context.newPage()
  await page.goto(shopUrl)
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    times.push(await page.evaluate(async () => {
      const w = window as unknown as { Tender: (key: string) => any; benchCard?: any }
      w.benchCard?.destroy()
      const started = performance.now()
      w.benchCard = w.Tender("pk_test_bench").elements().create("card")
      w.benchCard.mount("#card")
      await w.benchCard.ready
      return performance.now() - started
    }))
  }
  times.sort((a, b) => a - b)
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1)
  console.log(`card element ready (mount → ready), ${runs} mounts: median ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms`)
} finally {
  await browser.close()
  shop.close()
  await server.close()
}
