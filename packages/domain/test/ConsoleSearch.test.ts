/** The console search form's validation: every filter, the kind's own filters, and the grant carried through. */
import { describe, expect, it } from "vitest"
import type { ConsoleQuery } from "../src/console/ConsoleReads.ts"
import { cardFactsOf, decodeConsoleSearch, kindOfId, routingOf } from "../src/console/ConsoleSearch.ts"
import { ValidationFailed } from "../src/kernel/Errors.ts"
import { encodeCursor } from "../src/kernel/Search.ts"

const ok = (form: Parameters<typeof decodeConsoleSearch>[0], grant: ConsoleQuery["accounts"] = "all") => {
  const query = decodeConsoleSearch(form, grant)
  if (query instanceof ValidationFailed) throw new Error(`refused: ${query.message}`)
  return query
}
/** The form field a refusal names. */
const refused = (form: Parameters<typeof decodeConsoleSearch>[0]) => {
  const result = decodeConsoleSearch(form, "all")
  expect(result, JSON.stringify(form)).toBeInstanceOf(ValidationFailed)
  return (result as ValidationFailed).errors?.map((e) => e.field)
}

describe("console search form", () => {
  it("an empty form searches the grant's orders, 25 a page; empty fields are not filters", () => {
    expect(ok({}, ["acct_1", "acct_2"])).toEqual({
      kind: "orders", accounts: ["acct_1", "acct_2"], id: undefined, reference: undefined, amount: undefined,
      currency: undefined, status: undefined, method: undefined, channel: undefined, created_from: undefined,
      created_to: undefined, last4: undefined, limit: 25, cursor: undefined
    })
    expect(ok({ kind: "", q: " ", reference: "", last4: "", status: "" })).toMatchObject({ kind: "orders", id: undefined, last4: undefined })
  })

  it("every filter of an order, decoded", () => {
    const cursor = encodeCursor({ created_at: "2026-01-02T03:04:05.000Z", id: "ord_abcdefgh" })
    expect(ok({
      kind: "orders", q: "ord_abcdefgh12", reference: "inv-9", amount: "10.50", currency: "usd", status: "authorized",
      method: "card", channel: "ch_12345678", from: "2026-01-01", to: "2026-01-31", last4: "4242", cursor, limit: "100"
    })).toEqual({
      kind: "orders", accounts: "all", id: "ord_abcdefgh12", reference: "inv-9", amount: 1050, currency: "USD",
      status: "authorized", method: "card", channel: "ch_12345678", created_from: "2026-01-01T00:00:00.000Z",
      // `to` as a day is the whole day: the bound is the next midnight
      created_to: "2026-02-01T00:00:00.000Z", last4: "4242", limit: 100,
      cursor: { created_at: "2026-01-02T03:04:05.000Z", id: "ord_abcdefgh" }
    })
  })

  it("amounts are exact to the currency's exponent, and only with a currency", () => {
    expect(ok({ amount: "1000", currency: "JPY" }).amount).toBe(1000)
    expect(ok({ amount: "1.234", currency: "KWD" }).amount).toBe(1234)
    expect(ok({ currency: "EUR" })).toMatchObject({ currency: "EUR", amount: undefined })
    expect(refused({ amount: "10.00" })).toEqual(["amount"])
    expect(refused({ amount: "10.5", currency: "JPY" })).toEqual(["amount"])
    expect(refused({ amount: "10.001", currency: "USD" })).toEqual(["amount"])
    expect(refused({ amount: "-1", currency: "USD" })).toEqual(["amount"])
    expect(refused({ amount: "ten", currency: "USD" })).toEqual(["amount"])
    expect(refused({ amount: "1", currency: "XXX" })).toEqual(["currency"])
  })

  it("a status must be one of the kind's own", () => {
    expect(ok({ kind: "transactions", status: "completed" }).status).toBe("completed")
    expect(ok({ kind: "sessions", status: "expired" }).status).toBe("expired")
    expect(ok({ kind: "transfers", status: "processing" }).status).toBe("processing")
    expect(refused({ kind: "orders", status: "completed" })).toEqual(["status"])
    expect(refused({ kind: "refunds", status: "authorized" })).toEqual(["status"])
  })

  it("methods: a payment method for payments, a destination for transfers", () => {
    expect(ok({ method: "pix" }).method).toBe("pix")
    expect(ok({ kind: "transfers", method: "upi" }).method).toBe("upi")
    expect(refused({ method: "upi" })).toEqual(["method"])
    expect(refused({ method: "cash" })).toEqual(["method"])
  })

  it("last four: exactly four digits, and only for kinds that have cards", () => {
    expect(ok({ kind: "transactions", last4: "0005" }).last4).toBe("0005")
    for (const last4 of ["424", "42424", "42a4"]) expect(refused({ last4 })).toEqual(["last4"])
    expect(decodeConsoleSearch({ kind: "refunds", last4: "4242" }, "all")).toMatchObject({ message: "Invalid request: last4 does not apply to refunds" })
  })

  it("a filter the kind does not have is refused, naming it", () => {
    expect(refused({ kind: "customers", status: "open" })).toEqual(["status"])
    expect(refused({ kind: "customers", amount: "1", currency: "USD" })).toEqual(["amount"])
    expect(refused({ kind: "customers", reference: "x" })).toEqual(["reference"])
    expect(refused({ kind: "transfers", reference: "x" })).toEqual(["reference"])
    expect(refused({ kind: "sessions", channel: "sandbox" })).toEqual(["channel"])
    expect(refused({ kind: "payouts", method: "card" })).toEqual(["method"])
    expect(refused({ kind: "invoices" })).toEqual(["kind"])
  })

  it("a control character in any filter is refused, naming the field (PostgreSQL refuses a NUL: it would be a 500)", () => {
    for (const field of ["q", "reference", "amount", "currency", "status", "method", "channel", "from", "to", "last4"] as const) {
      for (const bad of ["inv\u00009", "inv\u00019", "inv\u007f9", "inv\u00859", "a\nb"]) {
        expect(refused({ [field]: bad })).toEqual([field])
      }
    }
    // Named as the field even where the kind has no such filter.
    expect(refused({ kind: "customers", reference: "x\u0000" })).toEqual(["reference"])
    expect(decodeConsoleSearch({ reference: "inv\u00009" }, "all")).toMatchObject({ message: expect.stringContaining("control characters") })
    // Other text passes as sent: a reference may hold any printable character.
    expect(ok({ reference: "Bestellung «ü-9» ☕" }).reference).toBe("Bestellung «ü-9» ☕")
  })

  it("the id: of the kind, or of its order for the kinds that belong to one", () => {
    expect(ok({ kind: "refunds", q: "ord_abcdefgh" }).id).toBe("ord_abcdefgh")
    expect(ok({ kind: "refunds", q: "re_abcdefgh" }).id).toBe("re_abcdefgh")
    expect(ok({ kind: "customers", q: "cus_abcdefgh" }).id).toBe("cus_abcdefgh")
    expect(refused({ kind: "orders", q: "txn_abcdefgh" })).toEqual(["q"])
    expect(refused({ kind: "customers", q: "ord_abcdefgh" })).toEqual(["q"])
    expect(refused({ q: "ord_' OR 1=1" })).toEqual(["q"])
  })

  it("dates: days or timestamps, real ones, in range", () => {
    expect(ok({ from: "2026-03-01T10:00:00+02:00", to: "2026-03-01T12:00:00Z" })).toMatchObject({
      created_from: "2026-03-01T08:00:00.000Z", created_to: "2026-03-01T12:00:00.000Z"
    })
    for (const from of ["2026-02-30", "yesterday", "2026-13-01", "0001-01-01", "1 March 2026"]) expect(refused({ from })).toEqual(["from"])
    expect(refused({ to: "2026-1-1" })).toEqual(["to"])
    // The last day whose whole (to the next midnight) a timestamp column can hold.
    expect(ok({ to: "9999-12-30" }).created_to).toBe("9999-12-31T00:00:00.000Z")
    for (const to of ["9999-12-31", "9999-12-31T12:00:00Z", "+010000-01-01T00:00:00Z"]) expect(refused({ to })).toEqual(["to"])
  })

  it("paging: limit 1 to 100, a cursor of ours", () => {
    expect(ok({ limit: "1" }).limit).toBe(1)
    for (const limit of ["0", "101", "2.5", "x"]) expect(refused({ limit })).toEqual(["limit"])
    expect(refused({ cursor: "not-a-cursor" })).toEqual(["cursor"])
  })

  it("ids name their kind by prefix", () => {
    expect(kindOfId("ord_abc")).toBe("orders")
    expect(kindOfId("txn_abc")).toBe("transactions")
    expect(kindOfId("cs_abc")).toBe("sessions")
    expect(kindOfId("re_abc")).toBe("refunds")
    expect(kindOfId("po_abc")).toBe("payouts")
    expect(kindOfId("tr_abc")).toBe("transfers")
    expect(kindOfId("cus_abc")).toBe("customers")
    expect(kindOfId("evt_abc")).toBe("event")
    expect(kindOfId("acct_abc")).toBeUndefined()
    expect(kindOfId("nothing")).toBeUndefined()
  })

  it("card facts carry no BIN or holder; routing says the channel and the pinning profile", () => {
    const facts = cardFactsOf({ type: "card", card_brand: "visa", last4_digits: "4242", card_funding: "credit", country_code: "US", bin: "424242", holder_name: "A" } as never)
    expect(facts).toEqual({ brand: "visa", last4: "4242", exp_month: null, exp_year: null, funding: "credit", country: "US" })
    expect(cardFactsOf({ type: "bank_account" })).toBeNull()
    expect(cardFactsOf(null)).toBeNull()
    expect(routingOf({ provider: "sandbox", channel_id: null, processing_profile: null })).toBe("sandbox (built in)")
    expect(routingOf({ provider: "stripe", channel_id: "ch_1", processing_profile: "eu" })).toBe("channel ch_1 (stripe), processing profile eu")
  })
})
