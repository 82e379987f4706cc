/**
 * What tests that look for card data share: the browser SDK's calls as tender.js makes them, and
 * a capture of everything the process writes (the in-process server's logs).
 */
import { inspect } from "node:util"
import { vi } from "vitest"

/**
 * A browser's SDK call: the publishable key, JSON, from the secure fields frame's origin, which is
 * TENDER_FIELDS_URL's default (the server's own public URL), the only one card_tokens accepts.
 */
export const sdkCall = async (server: { readonly baseUrl: string }, publishableKey: string, path: string, body: unknown) => {
  const response = await fetch(server.baseUrl + path, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${publishableKey}`, origin: new URL(server.baseUrl).origin },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, text, json: text === "" ? undefined : JSON.parse(text) }
}

/**
 * Every line the process writes from now on (stdout, stderr, the console) is pushed to `into`, and
 * still written; `vi.restoreAllMocks()` ends the capture.
 */
export const captureOutput = (into: Array<string>) => {
  const capture = (stream: NodeJS.WriteStream) => {
    const original = stream.write.bind(stream)
    vi.spyOn(stream, "write").mockImplementation(((chunk: unknown, ...rest: Array<unknown>) => {
      into.push(String(chunk))
      return (original as (...args: Array<unknown>) => boolean)(chunk, ...rest)
    }) as typeof stream.write)
  }
  capture(process.stdout)
  capture(process.stderr)
  for (const method of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, method).mockImplementation((...args: Array<unknown>) =>
      // Objects (a logged cause, annotations) in full, not as "[object Object]": what they hold counts.
      void into.push(args.map((a) => typeof a === "string" ? a : inspect(a, { depth: 8 })).join(" ")))
  }
}
