/**
 * The raw path over a real server: `signedFetch` signs as the typed client does and reports the
 * answer's verdict instead of failing on it; `send` (the tests' form) refuses an answer that does
 * not verify, and one that is signed when the test declared it unsigned.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { startTestServer, type TestServer } from "@tender/http/testing/TestServer"
import { signedFetch } from "../src/index.ts"
import { requestHeaders } from "../src/Raw.ts"
import { send } from "../src/Testing.ts"

let server: TestServer
let account: { secret_key: string; signing_secret: string }
const METHODS = "/v1/payment-methods?country=US&currency=USD"
const options = () => ({ baseUrl: server.baseUrl, secretKey: account.secret_key, signingSecret: account.signing_secret })

beforeAll(async () => {
  server = await startTestServer()
  account = await Effect.runPromise(server.accounts.create({ name: "raw", mode: "test" }))
})
afterAll(() => server.close())

describe("signedFetch", () => {
  it("a signed GET: 200, the answer verified, its JSON read", async () => {
    const reply = await signedFetch(options(), "GET", METHODS)
    expect(reply).toMatchObject({ status: 200, verdict: "valid", verified: true })
    expect(reply.json.data.map((m: { code: string }) => m.code)).toContain("card")
  })

  it("a body malformed on purpose reaches the server as sent (400 malformed_request, still a verified answer)", async () => {
    const reply = await signedFetch(options(), "POST", "/v1/test_helpers/card_tokens", { body: "{\"number\": " })
    expect(reply).toMatchObject({ status: 400, verified: true, json: { code: "malformed_request" } })
  })

  it("no signature, or one under another secret: refused by the server; the answer's verdict is reported, not thrown", async () => {
    expect(await signedFetch(options(), "GET", METHODS, { signature: null })).toMatchObject({ status: 401, verified: true, json: { code: "malformed_signature_header" } })
    expect(await signedFetch(options(), "GET", METHODS, { signingSecret: "whsec_other" })).toMatchObject({ status: 401, verified: true, json: { code: "invalid_signature" } })
    // Holding the wrong signing secret, the caller cannot verify the answer: reported as invalid.
    const wrong = await signedFetch({ ...options(), signingSecret: "whsec_other" }, "GET", METHODS)
    expect(wrong).toMatchObject({ status: 401, verdict: "invalid", verified: false })
  })

  it("signs the path as the URL parser sends it (dot segments resolved)", async () => {
    const reply = await signedFetch(options(), "GET", "/v1/test_helpers/../payment-methods?country=US&currency=USD")
    expect(reply).toMatchObject({ status: 200, verified: true })
  })

  it("requestHeaders is the signature the server accepts (the typed client's and signedFetch's one function)", async () => {
    const response = await fetch(server.baseUrl + METHODS, { headers: requestHeaders({ secretKey: account.secret_key, signingSecret: account.signing_secret }, METHODS) })
    expect(response.status).toBe(200)
  })
})

describe("send checks every answer's signature", () => {
  it("passes a verified answer, whatever its status", async () => {
    expect((await send(server, account, "GET", "/v1/nothing-here")).status).toBe(404)
  })

  it("throws on an answer that does not verify (the test's signing secret is not the account's)", async () => {
    await expect(send(server, { ...account, signing_secret: "whsec_other" }, "GET", METHODS)).rejects.toThrow(/does not verify \(invalid\)/)
  })

  it("an unknown key's 401 is unsigned: accepted only when the test says so, and then it must be unsigned", async () => {
    const unknown = { ...account, secret_key: "sk_test_ffffffffffffffffffffffffffffffff" }
    await expect(send(server, unknown, "GET", METHODS)).rejects.toThrow(/does not verify \(missing\)/)
    expect((await send(server, unknown, "GET", METHODS, { unsigned: true })).status).toBe(401)
    await expect(send(server, account, "GET", METHODS, { unsigned: true })).rejects.toThrow(/expected an unsigned answer/)
  })

  it("with no credentials, nothing is signed and no Authorization is sent", async () => {
    const reply = await send(server, undefined, "GET", METHODS)
    expect(reply).toMatchObject({ status: 401, verdict: "missing", json: { code: "invalid_api_key" } })
  })
})
