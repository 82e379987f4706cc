/**
 * The hosted checkout page on its own: locale choice, rendering of every state and step in every
 * language, escaping, the posted form's parsing, and the routes over a stand-in for the `Sessions`
 * use case. The page in a real browser against the real server: CheckoutBrowser.test.ts.
 */
import type { AccountId, CheckoutSessionId, OrderId, TransactionId } from "@tender/domain"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { type CheckoutSession, Errors, type HostedView, PaymentMethods, PublicUrl, Sessions } from "@tender/domain"
import { Context, Effect, Option } from "effect"
import { HttpRouter } from "effect/http"
import {
  type CheckoutView,
  countriesFor,
  FIELD,
  type Field,
  parseSubmission,
  problemsFromError,
  refusalMessage,
  regionNames,
  renderCheckout,
  renderCheckoutPage,
  cardPolicy,
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
  publishable_key: "pk_test_acme",
  three_ds_display_mode: "inline",
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
      ["en", "en", { currency: "USD", amount: 123450 }, ["Pay with Card", "Pay $1,234.50", "Card payments need JavaScript.", "Cancel payment"]],
      ["es-MX", "es-MX", { currency: "MXN", amount: 25000, country: "MX" }, ["Pagar con Tarjeta", "Pagar $250.00", "Para pagar con tarjeta se necesita JavaScript.", "Cancelar pago"]],
      ["pt-BR", "pt-BR", { currency: "BRL", amount: 1050, country: "BR" }, ["Pagar com Cartão", "Pagar R$ 10,50", "Para pagar com cartão é preciso JavaScript.", "Cancelar pagamento"]],
      ["nl", "nl", { currency: "EUR", amount: 1050, country: "NL" }, ["Betalen met Kaart", "€ 10,50 betalen", "Voor betalen met een kaart is JavaScript nodig.", "Betaling annuleren"]],
      ["de", "de", { currency: "EUR", amount: 123450, country: "DE" }, ["Mit Karte bezahlen", "1.234,50 € bezahlen", "Für die Kartenzahlung wird JavaScript benötigt.", "Zahlung abbrechen"]]
    ]
    for (const [tag, lang, s, texts] of cases) {
      const markup = render(view(s), { locale: locale(tag) })
      expect(markup).toContain(`<html lang="${lang}">`)
      // The card element speaks the page's language.
      expect(markup).toContain(`data-locale="${lang.slice(0, 2)}"`)
      for (const text of texts) expect(markup, `${tag}: ${text}`).toContain(text)
    }
  })
})

describe("checkout page: open session", () => {
  it("fits phones; without a card method, loads nothing from elsewhere and runs no script", () => {
    const markup = render(view({ currency: "EUR", country: "NL" }, { methods: [method("ideal"), method("paypal")] }))
    expect(markup).toContain(`name="viewport" content="width=device-width,initial-scale=1"`)
    expect(markup).not.toMatch(/<script|<link(?! rel="icon" href="data:,">)|<iframe|src="https?:|url\(/i)
    expect(renderCheckoutPage(view({}, { methods: [method("paypal")] }), { locale: DEFAULT_LOCALE }).card).toBe(false)
  })

  it("the card method: tender.js and the page's glue, the element's mount point, and no card input at all", () => {
    const hosts = { api: "https://api.tender.test", fields: "https://fields.tender.test" }
    const rendered = renderCheckoutPage(view({}, { methods: [method("card"), method("paypal")] }), { locale: locale("es"), hosts })
    expect(rendered.card).toBe(true)
    const markup = rendered.html.value
    // Only external scripts, in order: the SDK from its host, then the glue Tender serves; nothing inline.
    expect([...markup.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])).toEqual([
      `<script src="https://api.tender.test/sdk/v1/tender.js" defer>`,
      `<script src="/hosted/v1/checkout.js" defer>`
    ])
    expect(markup).not.toMatch(/<script(?![^>]*\bsrc=)/)
    expect(markup).not.toMatch(/\son[a-z]+=/i)
    const form = /<form method="post" action="\/checkout\/cs_1" data-tender-card[^>]*>/.exec(markup)?.[0] ?? ""
    for (
      const attribute of [
        `data-publishable-key="pk_test_acme"`,
        `data-locale="es"`,
        `data-display-mode="inline"`,
        `data-start="/checkout/cs_1/card"`,
        `data-next="/checkout/cs_1/continue"`,
        `data-return-url="https://api.tender.test/checkout/cs_1"`,
        `data-msg-incomplete="Ingresa el número de tarjeta, la fecha de vencimiento y el código de seguridad."`
      ]
    ) expect(form).toContain(attribute)
    // Nothing to pay with yet: the secret comes with the card attempt, when the customer pays.
    expect(form).not.toContain("data-client-secret")
    expect(markup).toContain(`<div class="card-field" data-card-element></div>`)
    expect(inputs(markup).map(nameOf).filter((name) => /card|cvc|exp|number/i.test(name ?? ""))).toEqual([])
    expect(markup).not.toMatch(/autocomplete="cc-/)
    expect(cardPolicy(hosts)).toEqual({
      scripts: ["'self'", "https://api.tender.test"],
      frames: ["https://fields.tender.test"],
      connect: ["'self'", "https://api.tender.test"]
    })
  })

  it("loads tender.js from TENDER_SDK_URL's host when it is set apart, and the policy allows that host", () => {
    const apart = { api: "https://api.tender.test", fields: "https://fields.tender.test", sdk: "https://js.tender.test" }
    const markup = renderCheckoutPage(view(), { locale: DEFAULT_LOCALE, hosts: apart }).html.value
    expect([...markup.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])).toEqual([
      `<script src="https://js.tender.test/sdk/v1/tender.js" defer>`,
      `<script src="/hosted/v1/checkout.js" defer>`
    ])
    expect(cardPolicy(apart).scripts).toEqual(["'self'", "https://js.tender.test"])
  })

  it("one method: its form at once, every input labelled, the sandbox test card in test mode only", () => {
    const markup = render(view())
    expect(details(markup)).toEqual([])
    expect(markup).toContain(`<form method="post" action="/checkout/cs_1" data-tender-card`)
    expect(markup).toContain(`<input type="hidden" name="method" value="card">`)
    const fields = inputs(markup).filter((tag) => !tag.includes(`type="hidden"`))
    expect(fields.map(nameOf)).toEqual([FIELD.email])
    for (const tag of fields) expect(markup).toContain(`<label for="${idOf(tag)}">`)
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
    expect(markup.match(/<form method="post" action="\/checkout\/cs_1"[ >]/g)).toHaveLength(3)
    expect(markup.match(/data-tender-card/g)).toHaveLength(1)
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
      // The card form is still there: the customer may retry.
      expect(markup).toContain("data-card-element")
    }
    expect(render(view())).not.toContain(`<div class="alert"`)
  })

  it("a rejected post: the fields marked, what was typed kept", () => {
    const values: Partial<Record<Field, string>> = { [FIELD.email]: "ana@example <b>", [FIELD.phone]: "" }
    const markup = render(view({ collect_phone: true }), {
      form: { method: "card", values, problems: { [FIELD.email]: "invalid", [FIELD.phone]: "required" }, alert: "Some details are missing or not valid." }
    })
    expect(markup).toContain("Some details are missing or not valid.")
    expect(markup).toContain(`value="ana@example &lt;b&gt;"`)
    expect(markup).toContain(`aria-invalid="true" aria-describedby="card-email-error"`)
    expect(markup).toContain(`<p class="field-error" id="card-email-error">Check this field.</p>`)
    expect(markup).toContain(`<p class="field-error" id="card-phone-error">This field is required.</p>`)
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
    expect(markup).not.toContain("data-card-element")
    expect(renderCheckoutPage(pending({ type: "redirect", redirect_url: "https://tender.test/r" }), { locale: DEFAULT_LOCALE }).card).toBe(false)
    expect(render(pending({ type: "redirect", redirect_url: "javascript:alert(1)" }))).not.toContain("javascript:")
  })

  it("collect_card: the card attempt waits for the card, the element takes the attempt's own secret", () => {
    const action = { type: "collect_card" as const, client_secret: "ord_1_secret_abc", expires_at: "2026-03-04T09:45:00.000Z" }
    const rendered = renderCheckoutPage(pending(action, { locale: "pt" }), { locale: locale("pt") })
    expect(rendered.card).toBe(true)
    const markup = rendered.html.value.replace(/[\u00a0\u202f]/g, " ")
    expect(markup).toContain("<h1>Pagar com Cartão</h1>")
    expect(markup).toMatch(/<form method="post" action="\/checkout\/cs_1" data-tender-card[^>]* data-client-secret="ord_1_secret_abc">/)
    expect(markup).toContain(`data-locale="pt"`)
    // The customer fields went with the attempt's start: only the card is left, and the way out.
    expect(inputs(markup).map(nameOf)).toEqual([])
    expect(markup).toContain("Pagar US$ 10,50")
    expect(markup).toContain("Cancelar pagamento")
    expect(markup).toContain(TEST_CARD)
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

  it("card: no card data, the attempt waits for the card element; the peer IP only where the method needs it", () => {
    const parsed = parseSubmission(session(), method("card"), reader({ [FIELD.email]: " ana@example.com " }), "203.0.113.9")
    expect(parsed).toEqual({
      _tag: "Valid",
      input: { payment_method: { code: "card", details: { collect_card: true } }, customer: { email: "ana@example.com" } }
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
    expect(parseSubmission(session({ collect_address: true, collect_phone: true }), method("card"), reader({
      [FIELD.country]: "XX"
    }), undefined)).toEqual({
      _tag: "Invalid",
      problems: {
        [FIELD.phone]: "required",
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
      errors: [{ field: "customer.email", message: "must be an email address" }, { field: "payment_method.details.document_id", message: "is not a CPF" }]
    })
    expect(problemsFromError(invalid)).toEqual({ [FIELD.email]: "invalid", [FIELD.document]: "invalid" })
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
  const { handler, dispose } = HttpRouter.toWebHandler(CheckoutPage.layer({ fieldsUrl: "https://fields.tender.test/" }), { disableLogger: true })
  afterAll(() => dispose())

  const request = (method: string, path: string, init: { form?: string; headers?: Record<string, string> } = {}) =>
    handler(
      new Request(`http://tender.test${path}`, {
        method,
        redirect: "manual",
        headers: { ...(init.form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" }), ...init.headers },
        ...(init.form === undefined ? {} : { body: init.form })
      }),
      Context.make(Sessions, fake).pipe(Context.add(PublicUrl, "https://tender.test"))
    )

  const card = "method=card&email=ana%40example.com"
  const waiting = (secret = "ord_1_secret_abc") =>
    view({ status: "pending_action", attempts: 1, next_action: { type: "collect_card", client_secret: secret, expires_at: "2026-03-04T09:45:00.000Z" } })
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
    // The card method runs tender.js and the glue: scripts from the SDK host and this server, the
    // fields host framed, calls to the API; nothing inline, and only the service frames the page.
    expect(page.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; script-src 'self' https://tender.test; " +
        "frame-src https://fields.tender.test; connect-src 'self' https://tender.test; frame-ancestors 'self' https://fields.tender.test; base-uri 'none'"
    )
    expect(page.headers.get("cache-control")).toBe("no-store")
    const text = await page.text()
    expect(text).toContain("Pagar com Cartão")
    expect(text).toContain(`<script src="https://tender.test/sdk/v1/tender.js" defer></script>`)
    expect(text).toContain(`data-return-url="https://tender.test/checkout/cs_1"`)
    // Without a card method the page runs no script at all.
    reset(view({ currency: "EUR", country: "NL" }, { methods: [method("ideal")] }))
    const ideal = await request("GET", "/checkout/cs_1")
    expect(ideal.headers.get("content-security-policy")).not.toContain("script-src")
    expect(await ideal.text()).not.toContain("<script")
    reset(view({ locale: "de" }))
    expect(await (await request("GET", "/checkout/cs_1", { headers: { "accept-language": "es" } })).text()).toContain("Mit Karte bezahlen")
    const missing = await request("GET", "/checkout/cs_nope", { headers: { "accept-language": "nl" } })
    expect(missing.status).toBe(404)
    expect(await missing.text()).toContain("Betaalpagina niet gevonden")
  })

  it("serves the card glue as a script of its own", async () => {
    const script = await request("GET", "/hosted/v1/checkout.js")
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toContain("text/javascript")
    expect(script.headers.get("x-content-type-options")).toBe("nosniff")
    const text = await script.text()
    for (const call of [".create(\"card\"", "collectCard(", "tender.pay(", "card.update({ clientSecret"]) expect(text).toContain(call)
  })

  it("the card glue starts the card attempt with the customer fields only, and gets its collect_card secret", async () => {
    reset()
    onSubmit = () => Effect.succeed(waiting())
    const started = await request("POST", "/checkout/cs_1/card", { form: "method=card&email=ana%40example.com" })
    expect(started.status).toBe(200)
    expect(started.headers.get("content-type")).toContain("application/json")
    expect(await started.json()).toEqual({ client_secret: "ord_1_secret_abc" })
    expect(submitted).toEqual([{ payment_method: { code: "card", details: { collect_card: true } }, customer: { email: "ana@example.com" } }])

    // A second press (the card was refused by the fields): the same attempt, no new one.
    reset(waiting("ord_1_secret_again"))
    const again = await request("POST", "/checkout/cs_1/card", { form: "" })
    expect(await again.json()).toEqual({ client_secret: "ord_1_secret_again" })
    expect(submitted).toEqual([])
  })

  it("the card glue: what to fix in the customer's language, or where to go instead", async () => {
    reset(view({ collect_phone: true, locale: "es" }))
    const invalid = await request("POST", "/checkout/cs_1/card", { form: "email=x" })
    expect(invalid.status).toBe(400)
    expect(await invalid.json()).toEqual({ message: "Faltan datos o no son válidos.", problems: { phone: "required" } })
    expect(submitted).toEqual([])

    reset(view({}, { methods: [method("paypal")] }))
    const unavailable = await request("POST", "/checkout/cs_1/card", { form: "" })
    expect(unavailable.status).toBe(400)
    expect((await unavailable.json()).message).toBe("This payment method is not available for this payment.")

    reset()
    onSubmit = () => Effect.fail(new Errors.InvalidSessionState({ message: "Session is completed" }))
    expect(await (await request("POST", "/checkout/cs_1/card", { form: "" })).json()).toEqual({ location: "/checkout/cs_1" })
    reset(view({ status: "completed" }))
    expect(await (await request("POST", "/checkout/cs_1/card", { form: "" })).json()).toEqual({ location: "/checkout/cs_1" })
    const missing = await request("POST", "/checkout/cs_nope/card", { form: "" })
    expect(missing.status).toBe(404)
    expect(await missing.json()).toEqual({ location: "/checkout/cs_nope" })
  })

  it("posted without the glue (no script), the card form starts the attempt and lands on the card step", async () => {
    reset()
    onSubmit = () => Effect.succeed(waiting())
    const posted = await request("POST", "/checkout/cs_1", { form: card })
    expect(posted.status).toBe(303)
    expect(posted.headers.get("location")).toBe("/checkout/cs_1")
    expect(submitted).toEqual([{ payment_method: { code: "card", details: { collect_card: true } }, customer: { email: "ana@example.com" } }])
  })

  it("after pay: on to success_url, the form with the decline, the pending challenge, or the page", async () => {
    const next = async () => (await request("GET", "/checkout/cs_1/continue")).headers.get("location")
    reset(view({ status: "completed", attempts: 1 }))
    expect(await next()).toBe("https://shop.test/ok")
    reset(view({ attempts: 1 }, { attempts_left: 2, last_decline: "card_declined" }))
    expect(await next()).toBe("/checkout/cs_1?method=card")
    reset(view({ status: "pending_action", next_action: { type: "redirect", redirect_url: "https://tender.test/sandbox/3ds/txn_1" } }))
    expect(await next()).toBe("https://tender.test/sandbox/3ds/txn_1")
    reset(view({ status: "failed", attempts: 3 }))
    expect(await next()).toBe("/checkout/cs_1")
    expect((await request("GET", "/checkout/cs_nope/continue")).status).toBe(404)
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
    reset(view({ collect_phone: true }, { methods: [method("card"), method("paypal")] }))
    const unknown = await request("POST", "/checkout/cs_1", { form: "method=ideal" })
    expect(unknown.status).toBe(400)
    expect(await unknown.text()).toContain("This payment method is not available for this payment.")
    const incomplete = await request("POST", "/checkout/cs_1", { form: "method=paypal&email=ana%40example.com" })
    expect(incomplete.status).toBe(400)
    const text = await incomplete.text()
    expect(text).toContain("Some details are missing or not valid.")
    expect(text).toContain(`id="paypal-phone-error"`)
    expect(text).toContain(`value="ana@example.com"`)
    // The API's bounds hold for the form's fields: a 255-character email is refused on the page.
    const long = await request("POST", "/checkout/cs_1", { form: `method=paypal&phone=%2B34600000000&email=${"a".repeat(243)}%40example.com` })
    expect(long.status).toBe(400)
    expect(await long.text()).toContain(`aria-invalid="true" aria-describedby="paypal-email-error"`)
    expect(submitted).toEqual([])
  })

  it("shows the use case's refusals on the form, with its HTTP status", async () => {
    reset()
    onSubmit = () =>
      Effect.fail(new Errors.ValidationFailed({ message: "Invalid request", errors: [{ field: "customer.email", message: "must be an email address" }] }))
    const invalid = await request("POST", "/checkout/cs_1", { form: card })
    expect(invalid.status).toBe(400)
    const text = await invalid.text()
    expect(text).toContain(`aria-invalid="true" aria-describedby="card-email-error"`)
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

describe("the hosted page's country names", () => {
  it("10,000 distinct Accept-Language headers keep the cache within its bound, and names stay localised", () => {
    const languages = ["en", "es", "pt", "nl", "de"]
    const regions = ["US", "BR", "MX", "NL", "DE", "AT", "CH", "GB"]
    // the documented bound (CheckoutPage.regionNames)
    const BOUND = 64
    for (let i = 0; i < 10_000; i++) {
      // every header distinct: private-use and extension subtags on 40 language-region pairs
      const header = `${languages[i % 5]}-${regions[Math.floor(i / 5) % regions.length]}-u-nu-latn-x-c${i}, fr;q=0.5`
      countriesFor(resolveLocale(null, header))
    }
    expect(regionNames.size).toBeGreaterThan(0)
    expect(regionNames.size).toBeLessThanOrEqual(BOUND)
    const page = view({ collect_address: true }, { methods: [method("paypal")] })
    const german = renderCheckoutPage(page, { locale: resolveLocale(null, "de-DE-x-anything") }).html.value
    expect(german).toContain("Vereinigte Staaten")
  })
})
