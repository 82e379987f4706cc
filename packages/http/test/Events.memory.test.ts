import { send } from "@tender/client/Testing"
import { Effect } from "effect"
import { expect, it } from "vitest"
import { startTestServer } from "../src/testing/TestServer.ts"
import { eventsSuite } from "./EventsSuite.ts"

eventsSuite({ storage: "memory", dataDir: ".tender-test" })

// Once per storage is enough: the stop signal is the server's edge (Stopping.ts), not storage's.
it("a waiting read answers at once when the server stops, rather than holding its graceful stop", async () => {
  const server = await startTestServer()
  const merchant = await Effect.runPromise(server.accounts.create({ name: "stopping", mode: "test" }))
  const began = Date.now()
  const waiting = send(server, merchant, "GET", "/v1/events?wait=25")
  // The read is waiting once the server has it (a read that is not waiting answers on its own).
  await new Promise((resolve) => setTimeout(resolve, 500))
  const closed = server.close()
  const reply = await waiting
  await closed
  expect(reply.status).toBe(200)
  expect(reply.json).toEqual({ data: [], next_cursor: expect.stringMatching(/^\d+\.\d+$/), has_more: false })
  expect(Date.now() - began).toBeLessThan(5_000)
})
