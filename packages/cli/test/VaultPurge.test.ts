/**
 * `tender vault purge --unused-for 400d [--dry-run]` against a running `serve`'s database: a card
 * last used 401 days ago (its column set back) is counted by the dry run, then purged; a card used
 * today and a card charged since it was stored (its last use moved by the charge) stay; the
 * purged card's payment keeps its brand and last four, and a new charge with its token is 404
 * payment_method_not_found. A malformed period is a validation_failed naming the flag.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHome, merchantClient, type Merchant, type Served } from "./support/Tender.ts"

const home = makeHome("tender-vault-cli-")
let served: Served
let shop: Merchant
const merchant = merchantClient(() => shop)
const DAY = 86_400_000

const tokenize = async () =>
  (await merchant.post(served, "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token as string
const charge = (token: string, reference: string) =>
  merchant.post(served, "/v1/payments", {
    amount: "10.00", currency: "USD", country: "US", merchant_reference: reference,
    payment_method: { code: "card", details: { card_token: token } }, collect_cvv: false
  })

beforeAll(async () => {
  served = await home.serve()
  shop = await home.runJson("accounts", "create", "--name", "Vault shop")
}, 120_000)

afterAll(async () => {
  if (served !== undefined) await served.stop()
  await home.cleanup()
}, 120_000)

describe("tender vault purge", () => {
  it("purges cards unused for the period, keeps the others; payments keep brand and last four; the token is then unknown", async () => {
    const stale = await tokenize()
    const fresh = await tokenize()
    const charged = await tokenize()
    const paid = await charge(stale, `stale-${Date.now()}`)
    expect(paid.status).toBe(200)
    const db = home.database()
    try {
      // Stored (and, for `stale`, charged) long ago; `charged` was stored long ago but charged today.
      await db.query(`UPDATE card_vault SET last_used_at = now() - interval '401 days', created_at = now() - interval '401 days' WHERE token = ANY($1)`, [[stale, charged]])
      expect((await charge(charged, `charged-${Date.now()}`)).status).toBe(200)

      const dry = await home.runJson("vault", "purge", "--unused-for", "400d", "--dry-run")
      expect(dry).toMatchObject({ dry_run: true, cards: 1 })
      expect(Math.abs(Date.parse(dry.unused_since) - (Date.now() - 400 * DAY))).toBeLessThan(120_000)
      expect((await db.query(`SELECT count(*)::int AS n FROM card_vault WHERE token = $1`, [stale])).rows[0].n).toBe(1)

      const text = await home.run("vault", "purge", "--unused-for", "400d")
      expect(text.code, text.stderr).toBe(0)
      expect(text.stdout).toMatch(/^Purged 1 vaulted card unused since /)
      const left = (await db.query(`SELECT token FROM card_vault WHERE token = ANY($1)`, [[stale, fresh, charged]])).rows.map((r) => r.token)
      expect(left.sort()).toEqual([fresh, charged].sort())
    } finally {
      await db.end()
    }

    const order = await merchant.get(served, `/v1/orders/${paid.json.order_id}`)
    expect(order.status).toBe(200)
    expect(order.json).toMatchObject({ payment_instrument: { card_brand: "visa", last4_digits: "4242" } })

    const again = await charge(stale, `again-${Date.now()}`)
    expect({ status: again.status, code: again.json.code }).toEqual({ status: 404, code: "payment_method_not_found" })
  })

  it("a malformed period is validation_failed naming --unused-for; nothing is purged", async () => {
    for (const bad of ["400", "0d", "1.5d", "forever"]) {
      const error = await home.runJsonError("vault", "purge", "--unused-for", bad)
      expect(error).toMatchObject({ code: "validation_failed", errors: [{ field: "unused-for" }] })
    }
  })
})
