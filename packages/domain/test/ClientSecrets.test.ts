/**
 * The client-secret operations' pure decisions (payments/client-secrets, ClientSecretViews): whose
 * grant a secret is, what `card_tokens` accepts for it, what `pay` refuses and answers, and how the
 * browser sees a payment (contract.md, Browser SDK). The shells run through HTTP in
 * packages/http/test/ClientRoutesSuite.ts.
 */
import { Option, Result } from "effect"
import { describe, expect, it } from "vitest"
import type { Account } from "../src/accounts/Account.ts"
import type { AccountId } from "../src/kernel/Ids.ts"
import type { ClientSecretRecord } from "../src/payments/ClientSecretPorts.ts"
import { statusOf } from "../src/payments/ClientSecretViews.ts"
import { cardInputPlan } from "../src/payments/client-secrets/CardToken.ts"
import { endsAt } from "../src/payments/client-secrets/Expire.ts"
import { grantOf } from "../src/payments/client-secrets/Grant.ts"
import { payAnswer, payRefusal } from "../src/payments/client-secrets/Pay.ts"
import type { Transaction } from "../src/payments/Payment.ts"
import { order as anOrder, T0, txn } from "./Fixtures.ts"

const T15 = "2026-11-01T10:15:00.000Z"
const order = anOrder()

const account = (mode: "test" | "live" = "test") => ({ id: "acct_1" as AccountId, mode }) as unknown as Account

const secret = (overrides: Partial<ClientSecretRecord> = {}): ClientSecretRecord => ({
  hash: "h",
  account_id: "acct_1",
  order_id: "ord_1",
  kind: "payment",
  collect: "card",
  created_at: T0,
  expires_at: T15,
  expired_by_helper: false,
  used_at: null,
  card_token: null,
  token_mints: 0,
  ...overrides
})

const attempt = (overrides: Partial<Transaction>) => txn({ status: "processing", ...overrides })

describe("grantOf (authorize)", () => {
  it("contract.md: a secret acts only for the key's account, for 15 minutes: another account's is invalid, a past one expired", () => {
    expect(Result.isSuccess(grantOf(account(), Option.some(secret()), Date.parse(T15) - 1))).toBe(true)
    const other = grantOf(account(), Option.some(secret({ account_id: "acct_2" })), Date.parse(T0))
    expect(Result.isFailure(other) && other.failure._tag).toBe("ClientSecretInvalid")
    expect(Result.isFailure(grantOf(account(), Option.none(), Date.parse(T0)))).toBe(true)
    const past = grantOf(account(), Option.some(secret()), Date.parse(T15))
    expect(Result.isFailure(past) && past.failure._tag).toBe("ClientSecretExpired")
    const ended = grantOf(account(), Option.some(secret({ expired_by_helper: true })), Date.parse(T0))
    expect(Result.isFailure(ended) && ended.failure._tag).toBe("ClientSecretExpired")
  })
})

describe("cardInputPlan (card_tokens)", () => {
  it("a card secret needs the number and expiry, naming each one missing; a cvv secret takes the code alone", () => {
    const missing = cardInputPlan("card", { cvc: "123", number: "4242424242424242" })
    expect(missing).toMatchObject({ code: "validation_failed", errors: [{ field: "exp_month" }, { field: "exp_year" }] })
    expect(cardInputPlan("card", { cvc: "123", number: "4242424242424242", exp_month: 12, exp_year: 2030 })).toMatchObject({ _tag: "Card" })
    expect(cardInputPlan("cvv", { cvc: "123" })).toEqual({ _tag: "Cvc", cvc: "123" })
    expect(cardInputPlan("cvv", { cvc: "123", number: "4242424242424242" })).toMatchObject({ code: "validation_failed", errors: [{ field: "number" }] })
  })
})

describe("pay", () => {
  it("a card transfer's secret is never paid; a live account's return_url must be https", () => {
    expect(payRefusal({ account: account(), secret: secret({ kind: "transfer" }) }, undefined)?.code).toBe("invalid_request")
    expect(payRefusal({ account: account("live"), secret: secret() }, "http://shop.example/back")?.code).toBe("validation_failed")
    expect(payRefusal({ account: account("live"), secret: secret() }, "https://shop.example/back")).toBeUndefined()
    expect(payRefusal({ account: account("test"), secret: secret() }, "http://localhost/back")).toBeUndefined()
  })

  it("the display mode rides along with a challenge only", () => {
    expect(payAnswer({ status: "requires_action", payment_id: "ord_1", challenge_url: "https://acs.example" }, "popup")).toMatchObject({ display_mode: "popup" })
    expect(payAnswer({ status: "succeeded", payment_id: "ord_1" }, "popup")).toEqual({ status: "succeeded", payment_id: "ord_1" })
  })
})

describe("statusOf (the browser's view of a payment)", () => {
  it("authorized counts as succeeded; a declined attempt under an order awaiting a retry is failed; a challenge shows its URL", () => {
    expect(statusOf({ ...order, status: "authorized" }, undefined).status).toBe("succeeded")
    expect(statusOf({ ...order, status: "failed" }, attempt({ status: "failed", decline_code: "do_not_honor" }))).toEqual({ status: "failed", payment_id: "ord_1", decline_code: "do_not_honor" })
    expect(statusOf(order, attempt({ status: "failed", decline_code: "insufficient_funds" })).status).toBe("failed")
    expect(statusOf({ ...order, status: "requires_action" }, attempt({ three_ds: "required", next_action: { type: "redirect", redirect_url: "https://acs.example" } })))
      .toEqual({ status: "requires_action", payment_id: "ord_1", challenge_url: "https://acs.example" })
  })
})

describe("endsAt (the sandbox's expire helper)", () => {
  it("now, unless the secret had ended already", () => {
    expect(endsAt(T0, T15)).toBe(T0)
    expect(endsAt(T15, T0)).toBe(T0)
  })
})
