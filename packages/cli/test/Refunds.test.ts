/**
 * contract.md, Operator set-up: `tender refunds create ORDER_ID [--transaction TXN] [--amount A]`,
 * `tender refunds get ID`, `tender payouts get ID`, against the database a running `serve` owns;
 * tables by default, one JSON document with `--json`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHome, merchantClient, type Merchant, type Served } from "./support/Tender.ts"

const home = makeHome("tender-refunds-cli-")
let served: Served
let shop: Merchant
const merchant = merchantClient(() => shop)

beforeAll(async () => {
  served = await home.serve()
  shop = await home.runJson("accounts", "create", "--name", "Refunds shop")
}, 120_000)

afterAll(async () => {
  if (served !== undefined) await served.stop()
  await home.cleanup()
}, 120_000)

const charge = async (reference: string, extra: Record<string, unknown> = {}) => {
  const token = (await merchant.post(served, "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
  const reply = await merchant.post(served, "/v1/payments", {
    amount: "50.00",
    currency: "USD",
    country: "US",
    merchant_reference: reference,
    payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } },
    ...extra
  })
  return reply.json as { order_id: string; transaction_id: string }
}

describe("tender refunds / payouts", () => {
  it("refunds create (part, then the rest) and get, of any account; the API sees the same refund", async () => {
    const paid = await charge("cli-refund")
    const part = await home.runJson("refunds", "create", paid.order_id, "--amount", "20.00")
    expect(part).toMatchObject({ id: expect.stringMatching(/^re_/), status: "succeeded", amount: 20, order_id: paid.order_id, original_transaction_id: paid.transaction_id })
    const rest = await home.runJson("refunds", "create", paid.order_id)
    expect(rest).toMatchObject({ status: "succeeded", amount: 30 })
    expect(await home.runJson("refunds", "get", part.id)).toEqual(part)
    expect((await merchant.get(served, `/v1/refunds/${rest.id}`)).json).toEqual(rest)
    expect((await merchant.get(served, `/v1/orders/${paid.order_id}`)).json.refunded_amount).toBe(50)
    const table = await home.run("refunds", "get", part.id)
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/status\s+succeeded/)
    expect(table.stdout).toMatch(/amount\s+20 USD/)
    expect(await home.runJsonError("refunds", "create", paid.order_id)).toMatchObject({ code: "refund_already_fully_refunded" })
  }, 60_000)

  it("--transaction names one capture of a payment captured in parts; errors are the API's codes", async () => {
    const auth = await charge("cli-parts", { capture_method: "manual" })
    const first = (await merchant.post(served, "/v1/payments/capture", { order_id: auth.order_id, amount: "10.00", final: false })).json
    await merchant.post(served, "/v1/payments/capture", { order_id: auth.order_id, amount: "15.00", final: false })
    expect(await home.runJsonError("refunds", "create", auth.order_id)).toMatchObject({ code: "refund_requires_transaction_target" })
    expect(await home.runJson("refunds", "create", auth.order_id, "--transaction", first.transaction_id)).toMatchObject({ amount: 10, original_transaction_id: first.transaction_id })
    const other = await charge("cli-other")
    expect(await home.runJsonError("refunds", "create", other.order_id, "--transaction", first.transaction_id)).toMatchObject({ code: "original_transaction_not_found" })
    expect(await home.runJsonError("refunds", "create", "ord_doesnotexist00000000")).toMatchObject({ code: "original_transaction_not_found" })
    expect(await home.runJsonError("refunds", "create", other.order_id, "--amount", "abc")).toMatchObject({ code: "validation_failed", errors: [{ field: "amount" }] })
    expect(await home.runJsonError("refunds", "get", "re_doesnotexist0000")).toMatchObject({ code: "not_found" })
  }, 60_000)

  it("payouts get, of any account: the instrument as the API shows it", async () => {
    const paid = await charge("cli-payout")
    const payout = (await merchant.post(served, "/v1/payouts", { order_id: paid.order_id, amount: "5.00" })).json
    expect(payout.status).toBe("succeeded")
    expect(await home.runJson("payouts", "get", payout.id)).toEqual(payout)
    const table = await home.run("payouts", "get", payout.id)
    expect(table.stdout).toMatch(/instrument\s+card visa 4242/)
    expect(await home.runJsonError("payouts", "get", "po_doesnotexist0000")).toMatchObject({ code: "payout_not_found" })
  }, 60_000)
})
