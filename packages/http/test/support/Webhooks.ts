/**
 * What the webhook tests share: loopback receivers whose handler decides each request's fate (it
 * may never answer), polling until something arrived, the error envelope check, and the domain
 * without a background dispatcher (memory storage) with one account, its endpoint and one event.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { expect } from "vitest"
import { Effect, Layer } from "effect"
import { Accounts, Outbox, UseCases, Webhooks } from "@tender/domain"
import { Infrastructure } from "@tender/adapters"
import type { Reply } from "@tender/client/Testing"

export const expectError = (reply: Reply, status: number, code: string) => {
  expect({ status: reply.status, code: reply.json?.code }).toEqual({ status, code })
}

/** Polls `probe` until it returns something, or fails after `ms`. */
export const until = async <A>(probe: () => Promise<A | undefined>, ms = 10_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error("timed out waiting")
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** A loopback HTTP receiver; closing it also drops the connections its handler left hanging. */
export const loopbackReceiver = async (handle: (request: IncomingMessage, response: ServerResponse) => void) => {
  const listener = createServer(handle)
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve))
  const address = listener.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    close: async () => {
      listener.closeAllConnections()
      await new Promise<void>((resolve) => listener.close(() => resolve()))
    }
  }
}

/** A loopback receiver that answers every delivery 200 and keeps its body in `bodies`. */
export const collectingReceiver = (bodies: Array<string>) =>
  loopbackReceiver((request, response) => {
    let body = ""
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      bodies.push(body)
      response.writeHead(200).end()
    })
  })

/** The use cases on memory storage, with no background worker: the test runs dispatcher rounds. */
export const domainWithoutWorkers = UseCases.layer.pipe(
  Layer.provideMerge(Infrastructure.layer({ storage: "memory", dataDir: ".tender-test" }))
)

/** A test-mode account with one endpoint at `url`, and one `payment.succeeded` event of it recorded. */
export const accountWithOneEvent = (name: string, url: string) =>
  Effect.gen(function*() {
    const created = yield* (yield* Accounts).create({ name, mode: "test" })
    const account = yield* (yield* Accounts).get(created.account_id)
    yield* (yield* Webhooks).createEndpoint(account, { url })
    yield* (yield* Outbox).record({
      account_id: account.id,
      type: "payment.succeeded",
      livemode: false,
      processing_profile: null,
      order_id: null,
      data: { order_id: "ord_x" }
    })
    return account
  })
