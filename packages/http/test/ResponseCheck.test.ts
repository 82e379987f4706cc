/**
 * The response check every test server runs (src/testing/ResponseCheck.ts) finds what the served
 * document does not describe — an undeclared status, a body off its schema, an operation it lacks —
 * and lets a described answer pass; over real HTTP its tap sees the status, content type and bytes.
 */
import { createServer } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import { OpenApi } from "effect/http-api"
import { Api } from "../src/Api.ts"
import { routedPath } from "../src/Routes.ts"
import { makeChecker, tap, undescribed } from "../src/testing/ResponseCheck.ts"

const checker = makeChecker(OpenApi.fromApi(Api))
const json = (value: unknown) => Buffer.from(JSON.stringify(value))
const envelope = { code: "not_found", message: "No order ord_1", request_id: "req_1" }
const answer = (method: string, path: string, status: number, body: Buffer, contentType = "application/json") =>
  checker.then((c) => c.check({ method, path, status, contentType, headerNames: new Set(["content-type"]), body }))

describe("the response check", () => {
  it("passes an answer the document describes: a declared status, a body of its schema", async () => {
    expect(await answer("GET", "/v1/orders/ord_1", 404, json(envelope))).toBeUndefined()
    expect(await answer("POST", "/v1/client/session", 401, json({ error: { type: "authentication_error", code: "client_secret_invalid", message: "m", correlationId: "req_1" } })))
      .toBeUndefined()
  })

  it("finds a body off the declared schema: a field too many, a required one missing, not JSON", async () => {
    expect((await answer("GET", "/v1/orders/ord_1", 404, json({ ...envelope, stack: "at …" })))?.problem).toMatch(/does not match.*additional.*stack/)
    expect((await answer("GET", "/v1/orders/ord_1", 404, json({ code: "not_found", message: "m" })))?.problem).toMatch(/request_id/)
    expect((await answer("GET", "/v1/orders/ord_1", 404, Buffer.from("<html>"), "text/html"))?.problem).toMatch(/content type text\/html/)
    // a success body too: a payment's answer without its ids
    expect((await answer("POST", "/v1/payments", 200, json({ status: "completed" })))?.problem).toMatch(/must have required property/)
  })

  it("finds a status the operation does not declare, naming the operation (the more literal route wins)", async () => {
    expect(await answer("GET", "/v1/orders/by-reference/ref-1", 418, json(envelope))).toMatchObject({
      operationId: "orders.byReference",
      status: 418,
      problem: "status not declared for this operation"
    })
  })

  it("finds a header the document says is always sent, missing (a required one, inline or a component)", async () => {
    const document = structuredClone(OpenApi.fromApi(Api)) as any
    document.components.headers = { "RateLimit-Remaining": { required: true, schema: { type: "integer" } } }
    document.paths["/v1/orders/{id}"].get.responses["404"].headers = {
      "Retry-After": { required: true, schema: { type: "integer" } },
      "RateLimit-Remaining": { $ref: "#/components/headers/RateLimit-Remaining" },
      "RateLimit-Reset": { schema: { type: "integer" } }
    }
    const strict = await makeChecker(document)
    const at = (headerNames: ReadonlyArray<string>) =>
      strict.check({ method: "GET", path: "/v1/orders/ord_1", status: 404, contentType: "application/json", headerNames: new Set(headerNames), body: json(envelope) })
    expect(at(["retry-after"])?.problem).toBe("declared header(s) not sent: RateLimit-Remaining")
    expect(at(["ratelimit-remaining"])?.problem).toBe("declared header(s) not sent: Retry-After")
    expect(at(["retry-after", "ratelimit-remaining"])).toBeUndefined()
  })

  it("finds an operation the document lacks, unless the gateway refused it as one (404, 405, before routing)", async () => {
    expect((await answer("GET", "/v1/nothing-here", 200, json({}))))?.toMatchObject({ operationId: undefined, problem: "path not in the document" })
    expect((await answer("PUT", "/v1/orders/ord_1", 200, json({}))))?.toMatchObject({ problem: "method not in the document" })
    expect(await answer("GET", "/v1/nothing-here", 404, json(envelope))).toBeUndefined()
    expect(await answer("OPTIONS", "/v1/client/session", 204, Buffer.alloc(0), "")).toBeUndefined()
    // outside the API: not judged
    expect(await answer("GET", "/checkout/cs_1", 200, Buffer.from("<html>"), "text/html")).toBeUndefined()
  })

  afterEach(() => {
    undescribed.length = 0
  })

  it("over real HTTP: the tap records what a server sent (status and content type given to writeHead, body written in parts)", async () => {
    const server = createServer()
    server.on("request", tap(checker, { judgeUnknownOperations: true, pathOf: routedPath }))
    server.on("request", (_request, response) => {
      response.writeHead(404, { "Content-Type": "application/json" })
      response.write(JSON.stringify(envelope).slice(0, 10))
      response.end(JSON.stringify(envelope).slice(10, -1) + ', "extra": 1}')
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const address = server.address()
      if (address === null || typeof address === "string") throw new Error("expected a TCP address")
      // an encoded spelling of the orders path is judged as the router reads it
      const reply = await fetch(`http://127.0.0.1:${address.port}/v1/%6Frders/ord_1`)
      expect(reply.status).toBe(404)
      await reply.text()
      await checker
      await new Promise((resolve) => setImmediate(resolve))
      expect(undescribed).toEqual([expect.objectContaining({ operationId: "orders.get", status: 404, problem: expect.stringMatching(/extra/) })])
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
