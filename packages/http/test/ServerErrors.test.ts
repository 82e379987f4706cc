/**
 * Issue 21, item 10: the spec's 5xx codes, each where docs/decisions.md ("Server errors") says it is
 * produced, from a real fault, through the public API (PostgreSQL storage; test-mode Stripe and
 * Adyen channels on the wire-level fakes):
 *
 * Spec, Errors: "`internal_error` | 500 | Unexpected server error." (a defect of the HTTP layer:
 * Gateway.test.ts, "internal_error (500)"); "`general_error` | 500 | Unexpected error below the API
 * layer."; "`downstream_error` | 502 | Downstream service failed; message relays its report."
 */
import { type Credentials, send } from "@tender/client/Testing"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { browserPost, type Merchant, type Rig, startRigOnFreshPostgres } from "./support/ProviderKit.ts"

let rig: Rig
let shop: Merchant
let seq = 0
const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
const URLS = { success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" }
const CARD = { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" }

beforeAll(async () => {
  rig = await startRigOnFreshPostgres()
  shop = await rig.merchant("test")
}, 120_000)
afterAll(() => rig?.close())

const post = (as: Credentials, path: string, body: unknown) => rig.post(as, path, body)

const sql = (statement: string) =>
  rig.server.run(Effect.gen(function*() {
    yield* (yield* SqlClient.SqlClient).unsafe(statement)
  }) as Effect.Effect<void, unknown, never>)

describe("general_error (500): a storage failure below the API layer", () => {
  it("the vault's table gone: the merchant API answers general_error, signed; the SDK's route general_error in its error object; back once it returns", async () => {
    const collecting = (await post(shop, "/v1/payments", { amount: "25.00", currency: "USD", country: "US", merchant_reference: ref("collect"), payment_method: { code: "card" }, ...URLS })).json
    await sql("ALTER TABLE card_vault RENAME TO card_vault_away")
    try {
      // `send` checks that the answer verifies under the account's signing secret.
      const merchantApi = await post(shop, "/v1/test_helpers/card_tokens", CARD)
      expect({ status: merchantApi.status, code: merchantApi.json.code }).toEqual({ status: 500, code: "general_error" })
      expect(merchantApi.json.message).toBe("Unexpected error below the API layer; safe to retry idempotently")
      expect(merchantApi.text).not.toMatch(/card_vault|relation|SqlError/)
      const fields = await browserPost(rig.server.baseUrl, shop.publishable_key, "/v1/client/card_tokens", { client_secret: collecting.next_action.client_secret, ...CARD })
      expect(fields.status).toBe(500)
      expect(fields.json.error).toMatchObject({ type: "api_error", code: "general_error" })
    } finally {
      await sql("ALTER TABLE card_vault_away RENAME TO card_vault")
    }
    // The spec: "500 … safe to retry idempotently": the same request again, once storage is back.
    expect((await post(shop, "/v1/test_helpers/card_tokens", CARD)).status).toBe(201)
  })
})

describe.each(["stripe", "adyen"] as const)("downstream_error (502): the %s channel answers 500 with a report", (provider) => {
  let merchant: Merchant

  beforeAll(async () => {
    merchant = await rig.merchant("test")
    await rig.addChannel(merchant, provider, "test")
  })

  it("a merchant-initiated charge: 502 downstream_error relaying the provider's words; the payment stays in flight for reconciliation", async () => {
    const token = (await post(merchant, "/v1/test_helpers/card_tokens", CARD)).json.token as string
    if (provider === "stripe") rig.fakes.stripe.fault("create", "5xx")
    else rig.fakes.adyen.fault("payments", "5xx")
    const reference = ref(provider)
    const reply = await post(merchant, "/v1/payments", {
      amount: "20.00", currency: "USD", country: "US", merchant_reference: reference,
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "recurring" } } }
    })
    expect({ status: reply.status, code: reply.json.code }).toEqual({ status: 502, code: "downstream_error" })
    // The fakes' 500 bodies: Stripe's api_error "An unknown error occurred", Adyen's "An unexpected error occurred".
    expect(reply.json.message).toContain(provider === "stripe" ? "Stripe answered 500 api_error: An unknown error occurred" : "Adyen answered 500 000: An unexpected error occurred")
    const order = (await send(rig.server, merchant, "GET", `/v1/orders/by-reference/${reference}`)).json
    const [attempt] = await rig.transactionsOf(order.id)
    // Not recorded as failed: the provider did not say it applied nothing. Its call stays reserved
    // for reconciliation to ask about by its key (Reconcile.ts), as for a lost answer.
    expect(attempt).toMatchObject({ status: "processing", pending_call: { operation: "authorize" } })
    expect(order.status).not.toBe("failed")
  })

  it("a call whose answer was lost (no report) is still 409 card_payment_in_progress", async () => {
    const token = (await post(merchant, "/v1/test_helpers/card_tokens", CARD)).json.token as string
    // Twice: the Stripe SDK resends a closed connection once under the same key.
    if (provider === "stripe") rig.fakes.stripe.fault("create", "applyThenDrop", 2)
    else rig.fakes.adyen.fault("payments", "applyThenDrop", 2)
    const reply = await post(merchant, "/v1/payments", {
      amount: "21.00", currency: "USD", country: "US", merchant_reference: ref(provider),
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
    })
    expect({ status: reply.status, code: reply.json.code }).toEqual({ status: 409, code: "card_payment_in_progress" })
  })
})
