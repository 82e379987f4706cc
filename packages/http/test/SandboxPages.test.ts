/**
 * The sandbox pages on their own: rendering (escaping, buttons vs final status) and the routes over
 * a stand-in for the payments use case. The end-to-end flow runs in the payments integration tests.
 */
import type { AccountId, OrderId, TransactionId } from "@tender/domain"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Errors, type Payment, Payments } from "@tender/domain"
import { Context, Effect, Option } from "effect"
import { HttpRouter } from "effect/http"
import { escape, html } from "../src/hosted/Html.ts"
import { type Attempt, BANNER, renderNotFound, renderPage, SANDBOX_PAGES } from "../src/hosted/SandboxPages.ts"
import * as SandboxPages from "../src/hosted/SandboxPages.ts"

const order = (overrides: Partial<Payment.Order> = {}): Payment.Order => ({
  id: "ord_1" as OrderId,
  account_id: "acct_1" as AccountId,
  livemode: false,
  merchant_reference: "order-42",
  subtype: "direct_payment",
  checkout_session_id: null,
  status: "requires_action",
  amount: 1050,
  currency: "BRL",
  country: "BR",
  payment_method: "pix",
  capture_method: "automatic",
  processing_profile: null,
  customer: null,
  success_url: "https://shop.test/ok",
  cancel_url: "https://shop.test/cancel",
  card_token: null,
  payment_instrument: null,
  received_amount: null,
  refunded_amount: 0,
  customer_id: null,
  card_storage_consent: null,
  request_hash: null,
  retry_until: null,
  created_at: "2026-03-01T09:30:00.000Z",
  updated_at: "2026-03-01T09:30:00.000Z",
  version: 1,
  ...overrides
})

const transaction = (overrides: Partial<Payment.Transaction> = {}): Payment.Transaction => ({
  id: "txn_1" as TransactionId,
  order_id: "ord_1" as OrderId,
  account_id: "acct_1" as AccountId,
  livemode: false,
  kind: "payment",
  status: "processing",
  amount: 1050,
  currency: "BRL",
  payment_method: "pix",
  processing_profile: null,
  provider: "sandbox",
  channel_id: null,
  provider_transaction_id: "sbx_lpm_x_0",
  decline_code: null,
  payment_instrument: null,
  parent_transaction_id: null,
  final: null,
  multicapture: null,
  next_action: {
    type: "qr",
    redirect_url: "https://tender.test/sandbox/redirect/txn_1",
    qr: { data: "00020101021226", image_url: "https://tender.test/sandbox/qr/txn_1.svg" }
  },
  three_ds: null,
  customer_return_url: null,
  browser_flow: false,
  expires_at: "2026-03-01T10:00:00.000Z",
  pending_call: null,
  settlement_check_at: null,
  routing: null,
  created_at: "2026-03-01T09:30:00.000Z",
  updated_at: "2026-03-01T09:30:00.000Z",
  version: 1,
  ...overrides
})

const attempt = (o: Partial<Payment.Order> = {}, t: Partial<Payment.Transaction> = {}): Attempt => ({
  order: order(o),
  transaction: transaction(t)
})

const buttons = (markup: string) => [...markup.matchAll(/<button[^>]*value="([^"]+)"[^>]*>([^<]*)</g)].map((m) => [m[1], m[2]])

describe("Html", () => {
  it("escapes text and leaves markup alone", () => {
    expect(escape(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
    const inner = html`<b>${"<i>"}</b>`
    expect(html`<p>${inner}${["<", inner]}${null}${false}${3}</p>`.value).toBe("<p><b>&lt;i&gt;</b>&lt;<b>&lt;i&gt;</b>3</p>")
  })
})

describe("sandbox page rendering", () => {
  it("labels every page as the Tender sandbox and fits phones", () => {
    for (const markup of [renderPage(SANDBOX_PAGES.redirect, attempt()).value, renderNotFound().value]) {
      expect(markup).toContain(BANNER)
      expect(markup).toContain("Tender sandbox")
      expect(markup).toContain(`name="viewport"`)
      expect(markup).not.toMatch(/<script|<link(?! rel="icon" href="data:,">)|src="https?:/)
    }
  })

  it("redirect page: amount, method, QR and the three outcomes while the attempt waits", () => {
    const markup = renderPage(SANDBOX_PAGES.redirect, attempt()).value
    expect(markup).toContain("10.50 BRL")
    expect(markup).toContain("Pix")
    expect(markup).toContain(`src="/sandbox/qr/txn_1.svg"`)
    expect(markup).toContain("00020101021226")
    expect(buttons(markup)).toEqual([["succeed", "Succeed"], ["fail", "Fail"], ["cancel", "Cancel"]])
  })

  it("escapes every merchant-provided value", () => {
    const markup = renderPage(
      SANDBOX_PAGES.redirect,
      attempt({ merchant_reference: `<script>alert("x")</script>`, payment_method: `"><img>` })
    ).value
    expect(markup).not.toContain("<script>")
    expect(markup).not.toContain(`"><img>`)
    expect(markup).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;")
  })

  it("shows the final status, not buttons, once the attempt ended, with a way back", () => {
    const cases: ReadonlyArray<[Partial<Payment.Transaction>, string, string]> = [
      [{ status: "completed" }, "Payment succeeded", "https://shop.test/ok"],
      [{ status: "failed" }, "Payment failed", "https://shop.test/cancel"],
      [{ status: "canceled", decline_code: "canceled_by_customer" }, "Payment canceled", "https://shop.test/cancel"],
      [{ status: "canceled", decline_code: "expired" }, "Payment window expired", "https://shop.test/cancel"]
    ]
    for (const [t, text, link] of cases) {
      const markup = renderPage(SANDBOX_PAGES.redirect, attempt({}, t)).value
      expect(buttons(markup)).toEqual([])
      expect(markup).toContain(text)
      expect(markup).toContain(`href="${link}"`)
    }
    const unsafe = renderPage(SANDBOX_PAGES.redirect, attempt({ success_url: "javascript:alert(1)" }, { status: "completed" })).value
    expect(unsafe).not.toContain("javascript:")
  })

  it("3-D Secure page: approve or deny while required, then the answer", () => {
    const card = {
      payment_method: "card",
      next_action: { type: "redirect" as const, redirect_url: "https://tender.test/sandbox/3ds/txn_1" },
      payment_instrument: { type: "card" as const, card_brand: "visa", last4_digits: "3220" }
    }
    const waiting = renderPage(SANDBOX_PAGES.challenge, attempt({ payment_method: "card" }, { ...card, three_ds: "required" })).value
    expect(buttons(waiting)).toEqual([["approve", "Approve"], ["deny", "Deny"]])
    expect(waiting).toContain("visa •••• 3220")
    const approved = renderPage(SANDBOX_PAGES.challenge, attempt({ payment_method: "card" }, { ...card, three_ds: "approved" })).value
    expect(buttons(approved)).toEqual([])
    expect(approved).toContain("Verification approved")
    expect(approved).toContain(`href="https://shop.test/ok"`)
    // The browser SDK's redirect mode kept its own way back on the attempt: answered either way, that is the link.
    const back = "https://shop.test/pay?tender_payment_id=ord_1"
    for (const three_ds of ["approved", "denied"] as const) {
      const kept = renderPage(SANDBOX_PAGES.challenge, attempt({ payment_method: "card" }, { ...card, three_ds, customer_return_url: back })).value
      expect(kept).toContain(`href="${back}"`)
      expect(kept).not.toContain("shop.test/ok")
    }
    // A card attempt is not a provider-page attempt: its redirect page offers nothing to press.
    expect(buttons(renderPage(SANDBOX_PAGES.redirect, attempt({ payment_method: "card" }, { ...card, three_ds: "required" })).value)).toEqual([])
  })

  it("voucher page: barcode or reference, amount and expiry; paid or expired", () => {
    const boleto = renderPage(
      SANDBOX_PAGES.voucher,
      attempt({ payment_method: "boleto" }, {
        payment_method: "boleto",
        expires_at: "2026-03-04T09:30:00.000Z",
        next_action: { type: "voucher", voucher: { document_url: "https://tender.test/sandbox/voucher/txn_1", barcode: "9".repeat(47) } }
      })
    ).value
    expect(boleto).toContain("9".repeat(47))
    expect(boleto).toContain("2026-03-04 09:30 UTC")
    expect(boleto).toContain("10.50 BRL")
    expect(buttons(boleto)).toEqual([["succeed", "Mark as paid"], ["expire", "Let it expire"]])

    const spei = renderPage(
      SANDBOX_PAGES.voucher,
      attempt({ payment_method: "spei", currency: "MXN", amount: 25000 }, {
        payment_method: "spei",
        next_action: {
          type: "bank_transfer",
          bank_transfer: { clabe: "646180123456789012", bank_name: "STP", reference: "1234567", beneficiary: "Tender Sandbox" }
        }
      })
    ).value
    for (const text of ["646180123456789012", "STP", "1234567", "Tender Sandbox", "250.00 MXN"]) expect(spei).toContain(text)
  })
})

describe("sandbox page routes", () => {
  const calls: Array<string> = []
  let current = attempt()
  const fake = Payments.of({
    hostedAttempt: (id: string) => Effect.succeed(id === current.transaction.id ? Option.some(current) : Option.none()),
    providerOutcome: (id: string, outcome: string) =>
      Effect.sync(() => {
        calls.push(`${outcome}:${id}`)
        current = attempt({}, { status: outcome === "succeed" ? "completed" : "failed" })
        return { return_url: outcome === "succeed" ? "https://shop.test/ok" : null }
      }),
    answerChallenge: () => Effect.fail(new Errors.PaymentUnexpectedState({ message: "No 3-D Secure challenge is awaiting an answer" }))
  } as unknown as Payments["Service"])
  const { handler, dispose } = HttpRouter.toWebHandler(SandboxPages.layer, { disableLogger: true })
  afterAll(() => dispose())

  const request = (method: string, path: string, form?: string) =>
    handler(
      new Request(`http://tender.test${path}`, {
        method,
        redirect: "manual",
        ...(form === undefined ? {} : { body: form, headers: { "content-type": "application/x-www-form-urlencoded" } })
      }),
      Context.make(Payments, fake)
    )

  it("serves the page, 404 for an unknown id", async () => {
    current = attempt()
    const page = await request("GET", "/sandbox/redirect/txn_1")
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    expect(await page.text()).toContain("Succeed")
    // The 3-D Secure challenge alone may be framed: tender.js shows it over the merchant's page (inline).
    current = attempt({ payment_method: "card" }, { payment_method: "card", three_ds: "required" })
    const challenge = await request("GET", "/sandbox/3ds/txn_1")
    expect(challenge.status).toBe(200)
    expect(challenge.headers.get("content-security-policy")).toContain("frame-ancestors *")
    const missing = await request("GET", "/sandbox/voucher/txn_nope")
    expect(missing.status).toBe(404)
    expect(await missing.text()).toContain("Payment not found")
  })

  it("posts an outcome and sends the customer on with 303, or re-renders without a return URL", async () => {
    current = attempt()
    calls.length = 0
    const paid = await request("POST", "/sandbox/redirect/txn_1", "outcome=succeed")
    expect(paid.status).toBe(303)
    expect(paid.headers.get("location")).toBe("https://shop.test/ok")
    current = attempt()
    const failed = await request("POST", "/sandbox/redirect/txn_1", "outcome=fail")
    expect(failed.status).toBe(200)
    const text = await failed.text()
    expect(text).toContain("Recorded: Fail.")
    expect(text).toContain("Payment failed")
    expect(calls).toEqual(["succeed:txn_1", "fail:txn_1"])
  })

  it("refuses an outcome the page does not offer, and shows a refusal from the use case", async () => {
    current = attempt()
    calls.length = 0
    const bogus = await request("POST", "/sandbox/redirect/txn_1", "outcome=expire")
    expect(bogus.status).toBe(400)
    expect(calls).toEqual([])
    current = attempt({ payment_method: "card" }, { payment_method: "card", three_ds: "required" })
    const refused = await request("POST", "/sandbox/3ds/txn_1", "outcome=approve")
    expect(refused.status).toBe(409)
    expect(await refused.text()).toContain("No 3-D Secure challenge is awaiting an answer")
    expect((await request("POST", "/sandbox/3ds/txn_nope", "outcome=approve")).status).toBe(404)
  })

  it("draws the QR code of the attempt as SVG", async () => {
    current = attempt()
    const image = await request("GET", "/sandbox/qr/txn_1.svg")
    expect(image.status).toBe(200)
    expect(image.headers.get("content-type")).toContain("image/svg+xml")
    expect(await image.text()).toMatch(/^<svg[\s\S]*<\/svg>\s*$/)
    current = attempt({}, { next_action: { type: "redirect", redirect_url: "https://tender.test/sandbox/redirect/txn_1" } })
    expect((await request("GET", "/sandbox/qr/txn_1.svg")).status).toBe(404)
  })
})
