/**
 * The hosted checkout page on its own: locale choice, rendering of every state and step in every
 * language, escaping, the posted form's parsing, and the routes over a stand-in for the `Sessions`
 * use case. The page in a real browser against the real server: CheckoutBrowser.test.ts.
 */
import type { AccountId, CheckoutSessionId, OrderId, TransactionId } from "@tender/domain"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { type CheckoutSession, Errors, type HostedView, PaymentMethods, Sessions } from "@tender/domain"
import { Context, Effect, Option } from "effect"
import { HttpRouter } from "effect/http"
import {
  type CheckoutView,
  FIELD,
  type Field,
  parseExpiry,
  parseSubmission,
  problemsFromError,
  refusalMessage,
  renderCheckout,
  renderCheckoutPage,
  renderNotFound,
  type RenderOptions,
  TEST_CARD
} from "../src/hosted/CheckoutPage.ts"
import * as CheckoutPage from "../src/hosted/CheckoutPage.ts"
import { DEFAULT_LOCALE, LANGUAGES, type Locale, MESSAGES, resolveLocale, toLocale } from "../src/hosted/i18n.ts"

const method = (code: string): PaymentMethods.PaymentMethod => {
  const found = PaymentMethods.findMethod(code)
  if (found === undefined) throw new Error(`no method ${code}`)
  return found
}

const session = (overrides: Partial<CheckoutSession.CheckoutSession> = {}): CheckoutSession.CheckoutSession => ({
  id: "cs_1" as CheckoutSessionId,
  account_id: "acct_1" as AccountId,
  livemode: false,
  order_id: "ord_1" as OrderId,
  merchant_reference: "order-42",
  status: "open",
  amount: 1050,
  currency: "USD",
  country: "US",
  capture_method: "automatic",
  payment_methods: null,
  straight_through: false,
  max_payment_attempts: 3,
  attempts: 0,
  expires_at: "2026-03-04T10:30:00.000Z",
  transaction_id: null,
  next_action: null,
  customer: null,
  success_url: "https://shop.test/ok",
  cancel_url: "https://shop.test/cancel",
  locale: null,
  line_items: null,
  collect_address: false,
  collect_phone: false,
  processing_profile: null,
  created_at: "2026-03-04T09:30:00.000Z",
  updated_at: "2026-03-04T09:30:00.000Z",
  version: 1,
  ...overrides
})

const view = (
  s: Partial<CheckoutSession.CheckoutSession> = {},
  v: Partial<Omit<HostedView, "session">> = {}
): CheckoutView => ({
  session: session(s),
  merchant_name: "Acme Coffee",
  methods: [method("card")],
  attempts_left: 3,
  last_decline: null,
  ...v
})

const locale = (tag: string): Locale => toLocale(tag) ?? DEFAULT_LOCALE

/** Rendered markup with Intl's non-breaking spaces made plain, so expectations read naturally. */
const render = (v: CheckoutView, options: Partial<RenderOptions> = {}): string =>
  renderCheckout(v, { locale: DEFAULT_LOCALE, ...options }).value.replace(/[\u00a0\u202f]/g, " ")

const inputs = (markup: string) => [...markup.matchAll(/<(?:input|select)\b[^>]*>/g)].map((m) => m[0])
const idOf = (tag: string) => /\bid="([^"]+)"/.exec(tag)?.[1]
const nameOf = (tag: string) => /\bname="([^"]+)"/.exec(tag)?.[1]
const details = (markup: string) => [...markup.matchAll(/<details class="method" name="method"( open)?>/g)].map((m) => m[1] === " open")

describe("locale", () => {
  it("takes the session's locale, else the first supported Accept-Language entry, else English", () => {
    expect(resolveLocale("pt-BR", "de")).toEqual({ language: "pt", tag: "pt-BR" })
    expect(resolveLocale("es_mx", undefined)).toEqual({ language: "es", tag: "es-MX" })
    expect(resolveLocale("fr", "nl-BE,nl;q=0.9,en;q=0.8")).toEqual({ language: "nl", tag: "nl-BE" })
    expect(resolveLocale(null, "fr-FR, de;q=0.5, es;q=0.7")).toEqual({ language: "es", tag: "es" })
    expect(resolveLocale(null, "en;q=0, de")).toEqual({ language: "de", tag: "de" })
    expect(resolveLocale(null, "*, fr")).toEqual(DEFAULT_LOCALE)
    expect(resolveLocale("not a tag!", "ja")).toEqual(DEFAULT_LOCALE)
    expect(resolveLocale(undefined, undefined)).toEqual(DEFAULT_LOCALE)
  })

  it("has every string in every language, none empty, the same declines everywhere", () => {
    const keys = Object.keys(MESSAGES.en).sort()
    for (const language of LANGUAGES) {
      const t = MESSAGES[language]
      expect(Object.keys(t).sort()).toEqual(keys)
      expect(Object.keys(t.declines).sort()).toEqual(Object.keys(MESSAGES.en.declines).sort())
      for (const [key, value] of Object.entries(t)) {
        if (typeof value === "string") expect(value, `${language}.${key}`).not.toBe("")
      }
    }
  })

  it("renders each language with its words, its money format and its lang attribute", () => {
    const cases: ReadonlyArray<[string, string, Partial<CheckoutSession.CheckoutSession>, ReadonlyArray<string>]> = [
      ["en", "en", { currency: "USD", amount: 123450 }, ["Pay with Card", "Pay $1,234.50", "Card number", "Cancel payment"]],
      ["es-MX", "es-MX", { currency: "MXN", amount: 25000, country: "MX" }, ["Pagar con Tarjeta", "Pagar $250.00", "Número de tarjeta", "Cancelar pago"]],
      ["pt-BR", "pt-BR", { currency: "BRL", amount: 1050, country: "BR" }, ["Pagar com Cartão", "Pagar R$ 10,50", "Número do cartão", "Cancelar pagamento"]],
      ["nl", "nl", { currency: "EUR", amount: 1050, country: "NL" }, ["Betalen met Kaart", "€ 10,50 betalen", "Kaartnummer", "Betaling annuleren"]],
      ["de", "de", { currency: "EUR", amount: 123450, country: "DE" }, ["Mit Karte bezahlen", "1.234,50 € bezahlen", "Kartennummer", "Zahlung abbrechen"]]
    ]
    for (const [tag, lang, s, texts] of cases) {
      const markup = render(view(s), { locale: locale(tag) })
      expect(markup).toContain(`<html lang="${lang}">`)
      for (const text of texts) expect(markup, `${tag}: ${text}`).toContain(text)
    }
  })
})

describe("checkout page: open session", () => {
  it("fits phones, loads nothing from elsewhere and runs no script", () => {
    const markup = render(view({}, { methods: [method("card"), method("paypal")] }))
    expect(markup).toContain(`name="viewport" content="width=device-width,initial-scale=1"`)
    expect(markup).not.toMatch(/<script|<link(?! rel="icon" href="data:,">)|<iframe|src="https?:|url\(/i)
  })

  it("one method: its form at once, every input labelled, the sandbox test card in test mode only", () => {
    const markup = render(view())
    expect(details(markup)).toEqual([])
    expect(markup).toContain(`<form method="post" action="/checkout/cs_1">`)
    expect(markup).toContain(`<input type="hidden" name="method" value="card">`)
    const fields = inputs(markup).filter((tag) => !tag.includes(`type="hidden"`))
    expect(fields.map(nameOf)).toEqual([FIELD.cardNumber, FIELD.cardExpiry, FIELD.cardCvc, FIELD.cardHolder, FIELD.email])
    for (const tag of fields) expect(markup).toContain(`<label for="${idOf(tag)}">`)
    expect(fields.find((tag) => nameOf(tag) === FIELD.cardNumber)).toMatch(/autocomplete="cc-number".*inputmode="numeric".* required/)
    expect(markup).toContain(TEST_CARD)
    expect(markup).toContain("Test mode · no real money moves")
    const live = render(view({ livemode: true }))
    expect(live).not.toContain(TEST_CARD)
    expect(live).not.toContain("Test mode")
  })

  it("several methods: a chooser with one form per method, the one just tried open", () => {
    const methods = [method("card"), method("paypal"), method("crypto")]
    const markup = render(view({}, { methods }))
    expect(markup).toContain("<h1>Choose how to pay</h1>")
    expect(details(markup)).toEqual([false, false, false])
    expect(markup.match(/<form method="post" action="\/checkout\/cs_1">/g)).toHaveLength(3)
    expect(markup).toContain("Continue to PayPal")
    expect(markup).toContain("You will finish the payment on the PayPal page.")
    expect(markup).toContain("Show QR code")
    // Field ids stay unique across the forms.
    const ids = inputs(markup).map(idOf).filter((id) => id !== undefined)
    expect(new Set(ids).size).toBe(ids.length)
    expect(details(render(view({}, { methods }), { openMethod: "paypal" }))).toEqual([false, true, false])
  })

  it("line items: name, quantity × unit price, line total and the total", () => {
    const markup = render(view({
      amount: 1650,
      line_items: [{ name: "Flat white", quantity: 2, unit_amount: 450 }, { name: "Croissant", quantity: 3, unit_amount: 250 }]
    }))
    for (const text of ["Flat white", "2 × $4.50", "$9.00", "Croissant", "3 × $2.50", "$7.50", "Total", "$16.50", "Order order-42", "Acme Coffee"]) {
      expect(markup).toContain(text)
    }
    expect(render(view())).not.toContain(`class="items"`)
  })

  it("asks for phone and address when the session says so, the country pre-selected and named in the customer's language", () => {
    const markup = render(view({ collect_phone: true, collect_address: true, country: "DE", currency: "EUR" }), { locale: locale("de") })
    const names = inputs(markup).map(nameOf)
    for (const field of [FIELD.phone, FIELD.line1, FIELD.postalCode, FIELD.city, FIELD.country]) expect(names).toContain(field)
    expect(markup).toContain("Rechnungsadresse")
    expect(markup).toContain(`<option value="DE" selected>Deutschland</option>`)
    expect(markup).toContain(`<option value="NL">Niederlande</option>`)
    expect(inputs(markup).find((tag) => nameOf(tag) === FIELD.phone)).toMatch(/type="tel".* required/)
    expect(inputs(render(view())).map(nameOf)).not.toContain(FIELD.phone)
  })

  it("asks for the document the method's country uses", () => {
    const pix = render(view({ currency: "BRL", country: "BR" }, { methods: [method("pix")] }), { locale: locale("pt-BR") })
    expect(pix).toContain(">CPF<")
    expect(inputs(pix).map(nameOf)).toContain(FIELD.document)
    expect(pix).toContain("Gerar QR code")
    const oxxo = render(view({ currency: "MXN", country: "MX" }, { methods: [method("oxxo"), method("spei")] }), { locale: locale("es-MX") })
    expect(oxxo).toContain("CURP o RFC")
    expect(oxxo).toContain("Obtener la ficha de pago")
    expect(oxxo).toContain("Ver los datos de la transferencia")
    expect(oxxo).toContain("Transferencia SPEI")
  })

  it("after a decline: the reason, an invitation to retry and the attempts left, in the customer's language", () => {
    const cases: ReadonlyArray<[string, string, number, ReadonlyArray<string>]> = [
      ["en", "card_declined", 2, ["Your card was declined.", "Try again or choose another payment method. 2 attempts left."]],
      ["es", "insufficient_funds", 1, ["Tu tarjeta no tiene fondos suficientes.", "Te queda 1 intento."]],
      ["pt-BR", "expired_card", 2, ["Seu cartão está vencido.", "Restam 2 tentativas."]],
      ["nl", "authentication_failed", 1, ["Je bank kon de betaling niet verifiëren.", "Nog 1 poging over."]],
      ["de", "something_new", 2, ["Die Zahlung ist nicht durchgegangen.", "Noch 2 Versuche."]]
    ]
    for (const [tag, code, left, texts] of cases) {
      const markup = render(view({ attempts: 3 - left }, { last_decline: code, attempts_left: left }), { locale: locale(tag) })
      expect(markup).toContain(`<div class="alert" role="alert">`)
      for (const text of texts) expect(markup, `${tag}: ${text}`).toContain(text)
      // The form is still there: the customer may retry.
      expect(inputs(markup).map(nameOf)).toContain(FIELD.cardNumber)
    }
    expect(render(view())).not.toContain(`role="alert"`)
  })

  it("a rejected post: the fields marked, what was typed kept, the card number and CVC never echoed", () => {
    const values: Partial<Record<Field, string>> = {
      [FIELD.cardNumber]: "4242424242424242",
      [FIELD.cardCvc]: "123",
      [FIELD.cardExpiry]: "13/99",
      [FIELD.cardHolder]: "Ana <b>",
      [FIELD.email]: "ana@example.com"
    }
    const markup = render(view(), {
      form: { method: "card", values, problems: { [FIELD.cardExpiry]: "invalid", [FIELD.cardCvc]: "required" }, alert: "Some details are missing or not valid." }
    })
    expect(markup).toContain("Some details are missing or not valid.")
    expect(markup).not.toContain("4242424242424242")
    expect(markup).not.toContain(`value="123"`)
    expect(markup).toContain(`value="13/99"`)
    expect(markup).toContain(`value="Ana &lt;b&gt;"`)
    expect(markup).toContain(`value="ana@example.com"`)
    expect(markup).toContain(`aria-invalid="true" aria-describedby="card-card_expiry-error"`)
    expect(markup).toContain(`<p class="field-error" id="card-card_expiry-error">Check this field.</p>`)
    expect(markup).toContain(`<p class="field-error" id="card-card_cvc-error">This field is required.</p>`)
  })

  it("escapes every merchant- and customer-provided value", () => {
    const evil = `<script>alert("x")</script>`
    const markup = render(
      view(
        { merchant_reference: evil, line_items: [{ name: evil, quantity: 1, unit_amount: 1050 }], customer: { email: `"><img src=x>` } },
        { merchant_name: evil, last_decline: evil }
      )
    )
    expect(markup).not.toContain("<script>")
    expect(markup).not.toContain(`"><img`)
    expect(markup).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;")
    expect(renderNotFound(DEFAULT_LOCALE).value).not.toContain("<script")
  })
})

describe("checkout page: the step to finish", () => {
  const pending = (nextAction: CheckoutSession.CheckoutSession["next_action"], s: Partial<CheckoutSession.CheckoutSession> = {}) =>
    view({ status: "pending_action", next_action: nextAction, attempts: 1, ...s })

  it("redirect: a button to the provider's page", () => {
    const markup = render(pending({ type: "redirect", redirect_url: "https://tender.test/sandbox/redirect/txn_1" }))
    expect(markup).toContain(`<a class="button primary" href="https://tender.test/sandbox/redirect/txn_1">Continue</a>`)
    expect(markup).toContain("Cancel payment")
    expect(inputs(markup).map(nameOf)).not.toContain(FIELD.cardNumber)
    expect(render(pending({ type: "redirect", redirect_url: "javascript:alert(1)" }))).not.toContain("javascript:")
  })

  it("qr (Pix): the code drawn as an image, the copy-and-paste payload, the deadline; the page reloads itself", () => {
    const rendered = renderCheckoutPage(
      pending(
        {
          type: "qr",
          redirect_url: "https://tender.test/sandbox/redirect/txn_1",
          expires_at: "2026-03-04T10:00:00.000Z",
          qr: { data: "00020101021226", image_url: "https://tender.test/sandbox/qr/txn_1.svg", redirect_url: "https://tender.test/sandbox/redirect/txn_1" }
        },
        { currency: "BRL", country: "BR" }
      ),
      { locale: locale("pt-BR") }
    )
    const markup = rendered.html.value.replace(/[\u00a0\u202f]/g, " ")
    expect(rendered.remoteImages).toBe(false)
    expect(markup).toMatch(/<img class="qr" src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+" alt="QR code do pagamento">/)
    const svg = Buffer.from(/base64,([^"]+)"/.exec(markup)![1]!, "base64").toString()
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox="0 0 \d+ \d+"[\s\S]*<path fill="#000" d="M[\d hvzM-]+"\/><\/svg>$/)
    expect(markup).toContain(`<code class="code">00020101021226</code>`)
    expect(markup).toContain("Escaneie para pagar")
    expect(markup).toContain("Pague até")
    expect(markup).toContain("4 de mar. de 2026, 10:00 UTC")
    expect(markup).toContain(`<meta http-equiv="refresh" content="10">`)
    expect(markup).toContain(`href="https://tender.test/sandbox/redirect/txn_1">Abrir a página de pagamento</a>`)
    expect(markup).toContain(`<a class="button neutral" href="/checkout/cs_1">Verificar o status do pagamento</a>`)
  })

  it("qr (MACH): deep links by target, unsafe schemes dropped; a provider image by URL widens the image policy", () => {
    const markup = render(pending({
      type: "qr",
      qr: {
        deep_links: [
          { label: "Pay with the MACH app", url: "mach://sandbox/pay/txn_1", target: "app" },
          { label: "Pay in the browser", url: "https://tender.test/sandbox/redirect/txn_1", target: "web" },
          { label: "evil", url: "javascript:alert(1)", target: "web" }
        ]
      }
    }, { currency: "CLP", country: "CL" }), { locale: locale("es-CL") })
    expect(markup).toContain(`<a class="button primary" href="mach://sandbox/pay/txn_1">Abrir la app</a>`)
    expect(markup).toContain(`<a class="button neutral" href="https://tender.test/sandbox/redirect/txn_1">Pagar en el navegador</a>`)
    expect(markup).not.toContain("javascript:")
    expect(markup).not.toContain(`<img`)

    const remote = renderCheckoutPage(pending({ type: "qr", qr: { image_url: "https://provider.test/qr.png" } }), { locale: DEFAULT_LOCALE })
    expect(remote.remoteImages).toBe(true)
    expect(remote.html.value).toContain(`<img class="qr" src="https://provider.test/qr.png" alt="QR code for the payment">`)
  })

  it("qr (crypto): the address and the amount in coin beside the payment URI", () => {
    const markup = render(pending({
      type: "qr",
      qr: { data: "bitcoin:tb1qexample?amount=0.000175", address: "tb1qexample", amount: "0.000175" }
    }), { locale: locale("nl") })
    expect(markup).toContain("Scan om te betalen")
    expect(markup).toContain("<code>tb1qexample</code>")
    expect(markup).toContain("Te versturen bedrag")
    expect(markup).toContain("0.000175")
  })

  it("voucher: reference or barcode, deadline and a link to the document", () => {
    const markup = render(pending({
      type: "voucher",
      redirect_url: "https://tender.test/sandbox/voucher/txn_1",
      expires_at: "2026-03-07T09:30:00.000Z",
      voucher: { document_url: "https://tender.test/sandbox/voucher/txn_1", barcode: "9".repeat(47) }
    }, { currency: "BRL", country: "BR" }), { locale: locale("pt-BR") })
    expect(markup).toContain("Seu documento de pagamento")
    expect(markup).toContain("Linha digitável")
    expect(markup).toContain("9".repeat(47))
    expect(markup).toContain("R$ 10,50")
    expect(markup).toContain("7 de mar. de 2026, 09:30 UTC")
    expect(markup).toContain(`<a class="button primary" href="https://tender.test/sandbox/voucher/txn_1">Abrir o documento</a>`)
    expect(markup).not.toContain(`http-equiv="refresh"`)
    // No empty rows: the Boleto voucher has a barcode but no reference.
    expect(markup).not.toContain("<dd></dd>")
    const oxxo = render(pending({ type: "voucher", voucher: { document_url: "https://tender.test/v", reference: "93000012345678" } }), { locale: locale("es-MX") })
    expect(oxxo).toContain("<code>93000012345678</code>")
    expect(oxxo).toContain("Referencia")
  })

  it("bank transfer: CLABE, bank, beneficiary, reference and amount", () => {
    const markup = render(pending({
      type: "bank_transfer",
      expires_at: "2026-03-07T09:30:00.000Z",
      bank_transfer: { clabe: "646180123456789012", bank_name: "STP (Tender sandbox)", reference: "1234567", beneficiary: "Tender Sandbox" }
    }, { currency: "MXN", amount: 25000, country: "MX" }), { locale: locale("es-MX") })
    for (const text of ["Paga con una transferencia", "CLABE", "<code>646180123456789012</code>", "STP (Tender sandbox)", "Beneficiario", "Tender Sandbox", "<code>1234567</code>", "$250.00"]) {
      expect(markup).toContain(text)
    }
  })
})

describe("checkout page: final states", () => {
  it("completed: thanks and the way to success_url; nothing to submit", () => {
    const markup = render(view({ status: "completed", attempts: 1, transaction_id: "txn_1" as TransactionId }), { locale: locale("es") })
    expect(markup).toContain("Pago completado")
    expect(markup).toContain("¡Gracias! Acme Coffee recibió tu pago.")
    expect(markup).toContain(`<a class="button primary" href="https://shop.test/ok">Volver a Acme Coffee</a>`)
    // Customers return here from provider pages: the page goes on to success_url by itself.
    expect(markup).toContain(`<meta http-equiv="refresh" content="4; url=https://shop.test/ok">`)
    expect(markup).not.toContain("<form")
  })

  it("failed, expired, canceled: what happened and the way to cancel_url", () => {
    const failed = render(view({ status: "failed", attempts: 3 }, { attempts_left: 0, last_decline: "card_declined" }), { locale: locale("de") })
    expect(failed).toContain("Zahlung fehlgeschlagen")
    expect(failed).toContain("Ihre Karte wurde abgelehnt.")
    expect(failed).toContain("Für diese Zahlung sind keine Versuche mehr übrig.")
    expect(failed).toContain(`href="https://shop.test/cancel">Zurück zu Acme Coffee</a>`)
    expect(failed).not.toContain("<form")
    // The customer reads why before leaving: no automatic forward on failure.
    expect(failed).not.toContain(`http-equiv="refresh"`)
    expect(render(view({ status: "expired" }))).toContain("This payment link has expired")
    const canceled = render(view({ status: "canceled" }), { locale: locale("nl") })
    expect(canceled).toContain("Betaling geannuleerd")
    expect(canceled).toContain(`href="https://shop.test/cancel">Terug naar Acme Coffee</a>`)
  })

  it("never links a URL that is not a web address", () => {
    const markup = render(view({ status: "completed", success_url: "javascript:alert(1)" }))
    expect(markup).not.toContain("javascript:")
    expect(markup).not.toContain(`http-equiv="refresh"`)
    expect(markup).toContain("Payment complete")
  })

  it("not found, in the visitor's language", () => {
    expect(renderNotFound(locale("pt")).value).toContain("Página de pagamento não encontrada")
  })
})

describe("the posted form", () => {
  const reader = (values: Partial<Record<Field, string>>) => (field: Field) => values[field] ?? ""

  it("reads expiry dates the ways people type them", () => {
    expect(parseExpiry("12/30")).toEqual({ month: 12, year: 2030 })
    expect(parseExpiry(" 1 / 2031 ")).toEqual({ month: 1, year: 2031 })
    expect(parseExpiry("0630")).toEqual({ month: 6, year: 2030 })
    expect(parseExpiry("06-30")).toEqual({ month: 6, year: 2030 })
    expect(parseExpiry("13/30")).toBeUndefined()
    expect(parseExpiry("00/30")).toBeUndefined()
    expect(parseExpiry("12/3")).toBeUndefined()
    expect(parseExpiry("soon")).toBeUndefined()
  })

  it("card: the number without spaces, the expiry split, the holder when given; the peer IP only where the method needs it", () => {
    const parsed = parseSubmission(session(), method("card"), reader({
      [FIELD.cardNumber]: "4242 4242 4242 4242",
      [FIELD.cardExpiry]: "12/30",
      [FIELD.cardCvc]: "123",
      [FIELD.cardHolder]: " Ana Lima ",
      [FIELD.email]: "ana@example.com"
    }), "203.0.113.7")
    expect(parsed).toEqual({
      _tag: "Valid",
      input: {
        payment_method: { code: "card", details: { card: { number: "4242424242424242", exp_month: 12, exp_year: 2030, cvc: "123", holder_name: "Ana Lima" } } },
        customer: { email: "ana@example.com" }
      }
    })
  })

  it("local methods: the document and the customer's IP; phone and address when the session asks", () => {
    const parsed = parseSubmission(
      session({ currency: "BRL", country: "BR", collect_phone: true, collect_address: true }),
      method("pix"),
      reader({
        [FIELD.document]: "123.456.789-09",
        [FIELD.phone]: "+55 11 91234 5678",
        [FIELD.line1]: "Rua A, 1",
        [FIELD.city]: "São Paulo",
        [FIELD.postalCode]: "01000-000",
        [FIELD.country]: "br"
      }),
      "198.51.100.4"
    )
    expect(parsed).toEqual({
      _tag: "Valid",
      input: {
        payment_method: { code: "pix", details: { document_id: "123.456.789-09" } },
        customer: {
          ip: "198.51.100.4",
          phone: "+55 11 91234 5678",
          address: { line1: "Rua A, 1", city: "São Paulo", postal_code: "01000-000", country: "BR" }
        }
      }
    })
    expect(parseSubmission(session(), method("paypal"), reader({}), "198.51.100.4")).toEqual({
      _tag: "Valid",
      input: { payment_method: { code: "paypal" } }
    })
  })

  it("names every missing or malformed field at once", () => {
    expect(parseSubmission(session({ collect_address: true }), method("card"), reader({
      [FIELD.cardNumber]: "4242",
      [FIELD.cardCvc]: "12a",
      [FIELD.country]: "XX"
    }), undefined)).toEqual({
      _tag: "Invalid",
      problems: {
        [FIELD.cardNumber]: "invalid",
        [FIELD.cardExpiry]: "required",
        [FIELD.cardCvc]: "invalid",
        [FIELD.country]: "invalid",
        [FIELD.line1]: "required",
        [FIELD.city]: "required",
        [FIELD.postalCode]: "required"
      }
    })
    expect(parseSubmission(session(), method("boleto"), reader({}), undefined)).toEqual({ _tag: "Invalid", problems: { [FIELD.document]: "required" } })
  })

  it("pins the use case's field errors on the form and words its refusals for the customer", () => {
    const invalid = new Errors.ValidationFailed({
      message: "Invalid request",
      errors: [{ field: "number", message: "fails the Luhn check" }, { field: "payment_method.details.document_id", message: "is not a CPF" }]
    })
    expect(problemsFromError(invalid)).toEqual({ [FIELD.cardNumber]: "invalid", [FIELD.document]: "invalid" })
    const t = MESSAGES.es
    expect(refusalMessage(t, invalid)).toBe(t.formInvalid)
    expect(refusalMessage(t, new Errors.PaymentUnroutable({ message: "no route" }))).toBe(t.methodUnavailable)
    expect(refusalMessage(t, new Errors.ProviderUnavailable({ message: "down" }))).toBe(t.declines.provider_unavailable)
    expect(refusalMessage(t, new Errors.Conflict({ message: "busy" }))).toBe(t.genericError)
  })
})

describe("checkout routes", () => {
  const submitted: Array<unknown> = []
  let current: CheckoutView = view()
  let onSubmit: (input: unknown) => Effect.Effect<CheckoutView, Errors.DomainError> = () => Effect.succeed(current)
  const fake = Sessions.of({
    hostedView: (id: string) => Effect.succeed(id === current.session.id ? Option.some(current) : Option.none()),
    submit: (_id: string, input: unknown) =>
      Effect.suspend(() => {
        submitted.push(input)
        return onSubmit(input)
      }),
    cancelByCustomer: () =>
      Effect.sync(() => {
        current = { ...current, session: { ...current.session, status: "canceled" } }
        return current
      })
  } as unknown as Sessions["Service"])
  const { handler, dispose } = HttpRouter.toWebHandler(CheckoutPage.layer, { disableLogger: true })
  afterAll(() => dispose())

  const request = (method: string, path: string, init: { form?: string; headers?: Record<string, string> } = {}) =>
    handler(
      new Request(`http://tender.test${path}`, {
        method,
        redirect: "manual",
        headers: { ...(init.form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" }), ...init.headers },
        ...(init.form === undefined ? {} : { body: init.form })
      }),
      Context.make(Sessions, fake)
    )

  const card = "method=card&card_number=4242+4242+4242+4242&card_expiry=12%2F30&card_cvc=123"
  const reset = (v: CheckoutView = view()) => {
    current = v
    submitted.length = 0
    onSubmit = () => Effect.succeed(current)
  }

  it("serves the page with the hosted-page headers, in the Accept-Language when the session has no locale", async () => {
    reset()
    const page = await request("GET", "/checkout/cs_1", { headers: { "accept-language": "pt-BR,pt;q=0.9" } })
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
    expect(page.headers.get("content-security-policy")).toContain("img-src 'self' data:;")
    expect(page.headers.get("cache-control")).toBe("no-store")
    expect(await page.text()).toContain("Pagar com Cartão")
    reset(view({ locale: "de" }))
    expect(await (await request("GET", "/checkout/cs_1", { headers: { "accept-language": "es" } })).text()).toContain("Mit Karte bezahlen")
    const missing = await request("GET", "/checkout/cs_nope", { headers: { "accept-language": "nl" } })
    expect(missing.status).toBe(404)
    expect(await missing.text()).toContain("Betaalpagina niet gevonden")
  })

  it("a paid card: the parsed attempt goes to the use case and the browser to success_url", async () => {
    reset()
    onSubmit = () => Effect.succeed(view({ status: "completed", attempts: 1 }))
    const paid = await request("POST", "/checkout/cs_1", { form: `${card}&card_holder=Ana` })
    expect(paid.status).toBe(303)
    expect(paid.headers.get("location")).toBe("https://shop.test/ok")
    expect(submitted).toEqual([{
      payment_method: { code: "card", details: { card: { number: "4242424242424242", exp_month: 12, exp_year: 2030, cvc: "123", holder_name: "Ana" } } }
    }])
  })

  it("a decline: back to the page with the tried method open; the page shows the decline", async () => {
    reset()
    onSubmit = () => Effect.succeed(view({ attempts: 1 }, { attempts_left: 2, last_decline: "card_declined" }))
    const declined = await request("POST", "/checkout/cs_1", { form: card })
    expect(declined.status).toBe(303)
    expect(declined.headers.get("location")).toBe("/checkout/cs_1?method=card")
  })

  it("a redirect method: straight to the provider; other steps: back to the page that shows them", async () => {
    reset(view({}, { methods: [method("card"), method("paypal"), method("crypto")] }))
    onSubmit = () => Effect.succeed(view({ status: "pending_action", next_action: { type: "redirect", redirect_url: "https://tender.test/sandbox/redirect/txn_1" } }))
    const redirected = await request("POST", "/checkout/cs_1", { form: "method=paypal" })
    expect(redirected.headers.get("location")).toBe("https://tender.test/sandbox/redirect/txn_1")
    onSubmit = () => Effect.succeed(view({ status: "pending_action", next_action: { type: "qr", qr: { data: "bitcoin:x" } } }))
    const qr = await request("POST", "/checkout/cs_1", { form: "method=crypto" })
    expect(qr.status).toBe(303)
    expect(qr.headers.get("location")).toBe("/checkout/cs_1")
  })

  it("refuses what the page can tell is wrong without calling the use case", async () => {
    reset(view({}, { methods: [method("card"), method("paypal")] }))
    const unknown = await request("POST", "/checkout/cs_1", { form: "method=ideal" })
    expect(unknown.status).toBe(400)
    expect(await unknown.text()).toContain("This payment method is not available for this payment.")
    const incomplete = await request("POST", "/checkout/cs_1", { form: "method=card&card_number=4242424242424242" })
    expect(incomplete.status).toBe(400)
    const text = await incomplete.text()
    expect(text).toContain("Some details are missing or not valid.")
    expect(text).toContain(`id="card-card_expiry-error"`)
    expect(text).not.toContain("4242424242424242")
    expect(submitted).toEqual([])
  })

  it("shows the use case's refusals on the form, with its HTTP status", async () => {
    reset()
    onSubmit = () =>
      Effect.fail(new Errors.ValidationFailed({ message: "Invalid request", errors: [{ field: "number", message: "fails the Luhn check" }] }))
    const invalid = await request("POST", "/checkout/cs_1", { form: card })
    expect(invalid.status).toBe(400)
    const text = await invalid.text()
    expect(text).toContain(`aria-invalid="true" aria-describedby="card-card_number-error"`)
    onSubmit = () => Effect.fail(new Errors.InvalidSessionState({ message: "Session is completed" }))
    const moved = await request("POST", "/checkout/cs_1", { form: card })
    expect(moved.status).toBe(303)
    expect(moved.headers.get("location")).toBe("/checkout/cs_1")
  })

  it("a session that is not open takes no attempt: the post lands back on the page", async () => {
    reset(view({ status: "pending_action", next_action: { type: "redirect", redirect_url: "https://tender.test/r" } }))
    const again = await request("POST", "/checkout/cs_1", { form: card })
    expect(again.status).toBe(303)
    expect(again.headers.get("location")).toBe("/checkout/cs_1")
    expect(submitted).toEqual([])
    expect((await request("POST", "/checkout/cs_nope", { form: card })).status).toBe(404)
  })

  it("cancel: the session is canceled and the browser sent to cancel_url", async () => {
    reset()
    const canceled = await request("POST", "/checkout/cs_1/cancel")
    expect(canceled.status).toBe(303)
    expect(canceled.headers.get("location")).toBe("https://shop.test/cancel")
    expect(current.session.status).toBe("canceled")
    expect((await request("POST", "/checkout/cs_nope/cancel")).status).toBe(404)
  })
})
