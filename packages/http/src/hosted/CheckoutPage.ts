/**
 * The hosted checkout page at a session's url (`/checkout/{id}`): what the customer sees from the
 * merchant's "pay" button until they are sent back to the merchant.
 *
 * One server-rendered page, so it works on any phone and every step survives a reload:
 * - open: the amount, merchant and line items, then the methods the session allows (one form per
 *   method, the only one shown directly when the session pre-selected it), with a decline and the
 *   attempts left after a failed try;
 * - pending_action: the step the customer must finish (the card, the provider's page, a QR code, a
 *   voucher, bank-transfer details);
 * - completed, failed, expired, canceled: the outcome and the way back to the merchant (a
 *   completed page goes on to success_url by itself after a few seconds).
 *
 * Every method but the card works without a script: its form posts to this page (the service's own
 * origin) and the handler answers with a 303 every time it can (success_url, the provider's page, or
 * back here), so a reload never submits twice. The card is collected by the browser SDK's card
 * element, exactly as on a merchant's page (contract.md: "The hosted checkout page collects cards
 * through the same card element"), so this page never receives a card number: the card form's glue
 * (CheckoutScript.ts) starts the session's card attempt with the customer fields (`/card`), then
 * `collectCard` and `pay` run in tender.js, and `/continue` sends the browser where the session
 * stands, as the form's 303 did.
 *
 * Public and unsigned like any payment page: the session id in the path is the key, and the
 * `Sessions` use case decides what an id may still do.
 */
import { type CheckoutSession, Countries, Errors, type HostedView, Limits, type PaymentMethods, PublicUrl, Sessions } from "@tender/domain"
import { BoundedCache } from "@tender/domain/kernel/BoundedCache"
import { Effect, Option, Result } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpRouter, HttpServerRequest, HttpServerResponse, UrlParams } from "effect/http"
import * as ApiError from "../ApiError.ts"
import { CHECKOUT_SCRIPT, CHECKOUT_SCRIPT_PATH } from "./CheckoutScript.ts"
import { facts, formBody, Html, html, isAppLink, isWebUrl, localMoney, localTime, methodName, page, qrImage, response, sameSiteOnly, type ScriptPolicy } from "./Html.ts"
import { SDK_PATH } from "./SdkAssets.ts"
import { declineMessage, type Locale, type Messages, messages, regionalTag, resolveLocale } from "./i18n.ts"

/** What the page reads: the `Sessions` use case's hosted view (methods already confined). */
export type CheckoutView = HostedView

export const checkoutPath = (sessionId: string): string => `/checkout/${encodeURIComponent(sessionId)}`

/** Shown on test-mode card forms: the sandbox's approved card (contract.md, Sandbox). */
export const TEST_CARD = "4242 4242 4242 4242"

/**
 * The form's field names: the contract between the rendered form and the POST handler. No card
 * field: the card is typed into the card element's frame and never reaches this page.
 */
export const FIELD = {
  method: "method",
  document: "document_id",
  email: "email",
  phone: "phone",
  line1: "address_line1",
  city: "address_city",
  postalCode: "address_postal_code",
  country: "address_country"
} as const
export type Field = (typeof FIELD)[keyof typeof FIELD]

export type FieldProblem = "required" | "invalid"

/** A posted form being shown again: what was typed and what was wrong with it (no card data is ever posted). */
export interface FormState {
  readonly method: string
  readonly values: Readonly<Partial<Record<Field, string>>>
  readonly problems: Readonly<Partial<Record<Field, FieldProblem>>>
  /** A sentence over the form, already in the customer's language. */
  readonly alert?: string | undefined
}

/**
 * Where the card element comes from: tender.js on the API host (this server serves it, SdkAssets)
 * and the fields frame on the fields host (TENDER_FIELDS_URL). Absent: this server, same origin.
 */
export interface CardHosts {
  /** The API's (and tender.js's) base URL, e.g. `https://api.example.com`. */
  readonly api: string
  /** The secure fields' base URL. */
  readonly fields: string
  /** tender.js's base URL (TENDER_SDK_URL) when it is served apart from the API. */
  readonly sdk?: string | undefined
}

/** Where the card element's parts are served from when not from this server (contract.md, Browser SDK). */
export interface PageUrls {
  /** TENDER_FIELDS_URL */
  readonly fieldsUrl?: string | undefined
  /** TENDER_SDK_URL */
  readonly sdkUrl?: string | undefined
}

export interface RenderOptions {
  readonly locale: Locale
  readonly hosts?: CardHosts | undefined
  /** The method whose form starts open, e.g. the one whose attempt was just declined. */
  readonly openMethod?: string | undefined
  readonly form?: FormState | undefined
}

// ---------------------------------------------------------------------------------------------
// Rendering

interface Context {
  readonly view: CheckoutView
  readonly session: CheckoutSession.CheckoutSession
  readonly locale: Locale
  readonly t: Messages
  readonly amount: string
  readonly hosts: CardHosts | undefined
}

const displayName = (t: Messages, code: string): string => t.methodNames[code] ?? methodName(code)

/**
 * Country lists by `regionalTag`: at most a few dozen kept, however many distinct Accept-Language
 * headers arrive (each list is ~250 names; the cache was once keyed by the raw tag and grew without end).
 */
export const regionNames = new BoundedCache<string, ReadonlyArray<readonly [code: string, name: string]>>(64)

/** Every country, named and sorted in the customer's language (built once per language and region). */
export const countriesFor = (locale: Locale): ReadonlyArray<readonly [string, string]> => {
  const tag = regionalTag(locale)
  const cached = regionNames.get(tag)
  if (cached !== undefined) return cached
  const names = new Intl.DisplayNames([tag], { type: "region", fallback: "code" })
  const list = [...Countries.COUNTRIES]
    .map((code) => [code, names.of(code) ?? code] as const)
    .sort((a, b) => a[1].localeCompare(b[1], tag))
  regionNames.set(tag, list)
  return list
}

const attribute = (name: string, value: string | number | undefined | false): Html =>
  value === undefined || value === false ? new Html("") : html` ${new Html(name)}="${value}"`

interface InputSpec {
  readonly name: Field
  readonly label: string
  readonly type?: "text" | "email" | "tel"
  readonly autocomplete?: string
  readonly inputmode?: "numeric" | "email" | "tel"
  readonly required?: boolean
  readonly placeholder?: string
  readonly pattern?: string
  readonly maxlength?: number
  /** A value to start with when the form is first shown (the session's email or country). */
  readonly initial?: string | undefined
}

const fieldId = (method: string, name: Field) => `${method}-${name}`

const problemOf = (form: FormState | undefined, method: string, name: Field): FieldProblem | undefined =>
  form?.method === method ? form.problems[name] : undefined

const valueOf = (form: FormState | undefined, method: string, name: Field, initial: string | undefined): string | undefined =>
  form?.method === method ? form.values[name] ?? initial : initial

const labelFor = (ctx: Context, id: string, spec: { readonly label: string; readonly required?: boolean }) =>
  html`<label for="${id}">${spec.label}${spec.required === true ? "" : html` <span class="opt">(${ctx.t.optional})</span>`}</label>`

const problemText = (ctx: Context, id: string, problem: FieldProblem | undefined) =>
  problem !== undefined &&
  html`<p class="field-error" id="${id}-error">${problem === "required" ? ctx.t.fieldRequired : ctx.t.fieldInvalid}</p>`

const input = (ctx: Context, form: FormState | undefined, method: string, spec: InputSpec): Html => {
  const id = fieldId(method, spec.name)
  const problem = problemOf(form, method, spec.name)
  return html`<div>${labelFor(ctx, id, spec)}<input id="${id}" name="${spec.name}" type="${spec.type ?? "text"}"${
    attribute("autocomplete", spec.autocomplete)
  }${attribute("inputmode", spec.inputmode)}${attribute("placeholder", spec.placeholder)}${attribute("pattern", spec.pattern)}${
    attribute("maxlength", spec.maxlength)
  }${attribute("value", valueOf(form, method, spec.name, spec.initial))}${spec.required === true && new Html(" required")}${
    problem !== undefined && html` aria-invalid="true" aria-describedby="${id}-error"`
  }>${problemText(ctx, id, problem)}</div>`
}

const countrySelect = (ctx: Context, form: FormState | undefined, method: string): Html => {
  const id = fieldId(method, FIELD.country)
  const problem = problemOf(form, method, FIELD.country)
  const chosen = valueOf(form, method, FIELD.country, ctx.session.country ?? undefined)
  return html`<div>${labelFor(ctx, id, { label: ctx.t.country, required: true })}<select id="${id}" name="${FIELD.country}" autocomplete="country" required${
    problem !== undefined && html` aria-invalid="true" aria-describedby="${id}-error"`
  }><option value=""></option>${
    countriesFor(ctx.locale).map(([code, name]) =>
      html`<option value="${code}"${code === chosen && new Html(" selected")}>${name}</option>`
    )
  }</select>${problemText(ctx, id, problem)}</div>`
}

/**
 * Where the card element mounts (CheckoutScript.ts), and where its glue says what went wrong. The
 * element's frame carries its own labels, in the page's language.
 */
const cardElement = (ctx: Context): Html =>
  html`<div class="card-field" data-card-element></div><noscript><p class="field-error">${ctx.t.cardNeedsScript}</p></noscript><p class="field-error" role="alert" data-card-error hidden></p>`

/** What the card form's glue reads: whose element, in which language, and where to go. */
const cardFormData = (ctx: Context, clientSecret: string | undefined): Html => {
  const here = checkoutPath(ctx.session.id)
  const hosts = ctx.hosts
  return html` data-tender-card data-publishable-key="${ctx.view.publishable_key}" data-locale="${ctx.locale.language}" data-display-mode="${ctx.view.three_ds_display_mode}" data-start="${here}/card" data-next="${here}/continue" data-return-url="${
    hosts === undefined ? here : `${hosts.api}${here}`
  }" data-msg-incomplete="${ctx.t.cardIncomplete}" data-msg-invalid="${ctx.t.formInvalid}" data-msg-error="${ctx.t.genericError}"${
    clientSecret !== undefined && html` data-client-secret="${clientSecret}"`
  }`
}

/** The customer fields the session or the method asks for, the same for every method. */
const customerFields = (ctx: Context, form: FormState | undefined, method: PaymentMethods.PaymentMethod): Html => {
  const code = method.code
  return html`${
    method.document !== undefined &&
    input(ctx, form, code, {
      name: FIELD.document,
      label: ctx.t.documents[method.document],
      autocomplete: "off",
      required: true,
      maxlength: 32
    })
  }${
    input(ctx, form, code, {
      name: FIELD.email,
      label: ctx.t.email,
      type: "email",
      autocomplete: "email",
      inputmode: "email",
      maxlength: 254,
      initial: ctx.session.customer?.email
    })
  }${
    ctx.session.collect_phone &&
    input(ctx, form, code, { name: FIELD.phone, label: ctx.t.phone, type: "tel", autocomplete: "tel", inputmode: "tel", required: true, maxlength: 32 })
  }${
    ctx.session.collect_address &&
    html`<fieldset><legend>${ctx.t.billingAddress}</legend>${
      input(ctx, form, code, { name: FIELD.line1, label: ctx.t.addressLine1, autocomplete: "address-line1", required: true, maxlength: 200 })
    }<div class="pair">${
      input(ctx, form, code, { name: FIELD.postalCode, label: ctx.t.postalCode, autocomplete: "postal-code", required: true, maxlength: 20 })
    }${input(ctx, form, code, { name: FIELD.city, label: ctx.t.city, autocomplete: "address-level2", required: true, maxlength: 100 })}</div>${
      countrySelect(ctx, form, code)
    }</fieldset>`
  }`
}

const submitLabel = (ctx: Context, method: PaymentMethods.PaymentMethod): string => {
  switch (method.next_action_type) {
    case "redirect":
      return ctx.t.continueTo(displayName(ctx.t, method.code))
    case "qr":
      return ctx.t.showQr
    case "voucher":
      return ctx.t.getVoucher
    case "bank_transfer":
      return ctx.t.getTransferDetails
    default:
      return ctx.t.pay(ctx.amount)
  }
}

const isCard = (method: PaymentMethods.PaymentMethod) =>
  method.next_action_type === "collect_card" || method.next_action_type === "collect_cvv"

const testCardHint = (ctx: Context): Html | false => !ctx.session.livemode && html`<p class="hint">${ctx.t.testCardHint(TEST_CARD)}</p>`

const methodForm = (ctx: Context, form: FormState | undefined, method: PaymentMethods.PaymentMethod): Html =>
  html`<form method="post" action="${checkoutPath(ctx.session.id)}"${isCard(method) && cardFormData(ctx, undefined)}>
<input type="hidden" name="${FIELD.method}" value="${method.code}">${isCard(method) && html`${testCardHint(ctx)}${cardElement(ctx)}`}${
    customerFields(ctx, form, method)
  }${
    method.next_action_type === "redirect" && html`<p class="muted">${ctx.t.redirectNote(displayName(ctx.t, method.code))}</p>`
  }<div class="actions"><button type="submit" class="primary">${submitLabel(ctx, method)}</button></div></form>`

const cancelForm = (ctx: Context): Html =>
  html`<form method="post" action="${checkoutPath(ctx.session.id)}/cancel" class="actions"><button type="submit" class="neutral">${ctx.t.cancel}</button></form>`

const alertBox = (lines: ReadonlyArray<string>): Html =>
  html`<div class="alert" role="alert">${lines.map((line, i) => i === 0 ? html`<p><strong>${line}</strong></p>` : html`<p>${line}</p>`)}</div>`

const header = (ctx: Context): Html => {
  const items = ctx.session.line_items ?? []
  const { currency } = ctx.session
  return html`<header class="summary"><p class="merchant">${ctx.view.merchant_name}</p><p class="amount">${ctx.amount}</p><p class="muted">${
    ctx.t.orderReference(ctx.session.merchant_reference)
  }</p>${
    items.length > 0 &&
    html`<ul class="items" aria-label="${ctx.t.orderSummary}">${
      items.map((item) =>
        html`<li><span>${item.name}<span class="qty">${item.quantity} × ${localMoney(item.unit_amount, currency, ctx.locale.tag)}</span></span><span class="sum">${
          localMoney(item.quantity * item.unit_amount, currency, ctx.locale.tag)
        }</span></li>`
      )
    }<li class="total"><span>${ctx.t.total}</span><span class="sum">${ctx.amount}</span></li></ul>`
  }</header>`
}

const openBody = (ctx: Context, options: RenderOptions): Html => {
  const { view, t } = ctx
  const form = options.form
  const alert = form?.alert !== undefined
    ? alertBox([form.alert])
    : view.last_decline !== null
    ? alertBox([declineMessage(t, view.last_decline), `${t.tryAgain} ${t.attemptsLeft(view.attempts_left)}`])
    : false
  const [only] = view.methods
  if (view.methods.length === 1 && only !== undefined) {
    return html`${alert}<h1>${t.payWith(displayName(t, only.code))}</h1>${methodForm(ctx, form, only)}${cancelForm(ctx)}`
  }
  const open = form?.method ?? options.openMethod
  // Exclusive accordion (`name`): one method open at a time, each with its own form, so only the
  // visible form's required fields are checked when it is sent. No script needed.
  return html`${alert}<h1>${t.chooseMethod}</h1>${
    view.methods.map((method) =>
      html`<details class="method" name="method"${method.code === open && new Html(" open")}><summary><span><strong>${
        displayName(t, method.code)
      }</strong><span>${t.methodHints[method.next_action_type]}</span></span></summary>${methodForm(ctx, form, method)}</details>`
    )
  }${cancelForm(ctx)}`
}

const deadline = (ctx: Context, iso: string | undefined): ReadonlyArray<readonly [string, Html | string]> =>
  iso === undefined ? [] : [[ctx.t.payBefore, localTime(iso, ctx.locale.tag)]]

/** `undefined` (not `false`) when there is nothing, so `facts` leaves the row out. */
const code = (text: string | undefined): Html | undefined => text === undefined ? undefined : html`<code>${text}</code>`

const waitingTail = (ctx: Context): Html =>
  html`<p class="muted">${ctx.t.waiting}</p><div class="actions"><a class="button neutral" href="${
    checkoutPath(ctx.session.id)
  }">${ctx.t.checkStatus}</a></div>`

interface Step {
  readonly body: Html
  /** The step runs the card element (the SDK and the page's glue). */
  readonly card?: boolean
  /** Seconds until the page reloads itself to pick up the outcome. */
  readonly refreshSeconds?: number
  /** The step shows a provider's QR image by URL (no payload to draw it from). */
  readonly remoteImages?: boolean
}

const QR_REFRESH_SECONDS = 10

/**
 * A completed session's page goes on to success_url by itself after this long: customers come
 * back here from provider pages (and a QR page reloads into it), and the merchant expects them at
 * success_url. Long enough to read "Payment complete"; the link is there for the impatient.
 */
const FORWARD_SECONDS = 4

const stepBody = (ctx: Context, action: CheckoutSession.CheckoutSession["next_action"]): Step => {
  const { t } = ctx
  switch (action?.type) {
    case "collect_card":
    case "collect_cvv":
      // The session's card attempt waits for the card (a reload after the customer fields were
      // sent, or a card the fields refused): the element takes the attempt's own secret.
      return {
        card: true,
        body: html`<h1>${t.payWith(displayName(t, "card"))}</h1><form method="post" action="${checkoutPath(ctx.session.id)}"${
          cardFormData(ctx, action.client_secret)
        }>${testCardHint(ctx)}${cardElement(ctx)}<div class="actions"><button type="submit" class="primary">${t.pay(ctx.amount)}</button></div></form>`
      }
    case "redirect":
      return {
        body: html`<h1>${t.redirectTitle}</h1><p>${t.redirectText}</p>${
          action.redirect_url !== undefined && isWebUrl(action.redirect_url) &&
          html`<div class="actions"><a class="button primary" href="${action.redirect_url}">${t.continue}</a></div>`
        }`
      }
    case "qr": {
      const qr = action.qr ?? {}
      const image = qr.data !== undefined
        ? qrImage(qr.data, t.qrAlt)
        : qr.image_url !== undefined && isWebUrl(qr.image_url)
        ? html`<img class="qr" src="${qr.image_url}" alt="${t.qrAlt}">`
        : false
      const page = qr.redirect_url ?? action.redirect_url
      const links = (qr.deep_links ?? []).filter((link) => isAppLink(link.url))
      return {
        refreshSeconds: QR_REFRESH_SECONDS,
        remoteImages: qr.data === undefined && image !== false,
        body: html`<h1>${t.qrTitle}</h1>${image !== false && html`<p>${t.qrText}</p>${image}`}${
          qr.data !== undefined && html`<p>${t.qrCopy}</p><code class="code">${qr.data}</code>`
        }${
          facts([
            [t.cryptoAddress, code(qr.address)],
            [t.cryptoAmount, qr.amount],
            ...deadline(ctx, action.expires_at)
          ])
        }<div class="actions">${
          links.map((link, i) =>
            html`<a class="button ${i === 0 ? "primary" : "neutral"}" href="${link.url}">${link.target === "app" ? t.openApp : t.payInBrowser}</a>`
          )
        }${
          links.length === 0 && page !== undefined && isWebUrl(page) &&
          html`<a class="button ${image === false ? "primary" : "neutral"}" href="${page}">${t.openPaymentPage}</a>`
        }</div>${waitingTail(ctx)}`
      }
    }
    case "voucher": {
      const voucher = action.voucher
      return {
        body: html`<h1>${t.voucherTitle}</h1><p>${t.voucherText}</p>${
          facts([[t.amount, ctx.amount], [t.reference, code(voucher?.reference)], ...deadline(ctx, action.expires_at)])
        }${voucher?.barcode !== undefined && html`<p>${t.barcode}</p><code class="code">${voucher.barcode}</code>`}${
          voucher !== undefined && isWebUrl(voucher.document_url) &&
          html`<div class="actions"><a class="button primary" href="${voucher.document_url}">${t.openVoucher}</a></div>`
        }${waitingTail(ctx)}`
      }
    }
    case "bank_transfer": {
      const transfer = action.bank_transfer
      return {
        body: html`<h1>${t.transferTitle}</h1><p>${t.transferText}</p>${
          facts([
            [t.amount, ctx.amount],
            [t.clabe, code(transfer?.clabe)],
            [t.bank, transfer?.bank_name],
            [t.beneficiary, transfer?.beneficiary],
            [t.reference, code(transfer?.reference)],
            ...deadline(ctx, action.expires_at)
          ])
        }${waitingTail(ctx)}`
      }
    }
    default:
      // Nothing the customer can do on this page (a card step the hosted flow does not start): the
      // outcome arrives on its own.
      return { body: html`<h1>${t.redirectTitle}</h1>${waitingTail(ctx)}`, refreshSeconds: QR_REFRESH_SECONDS }
  }
}

const backLink = (ctx: Context, url: string, tone: "primary" | "neutral"): Html | false =>
  isWebUrl(url) &&
  html`<div class="actions"><a class="button ${tone}" href="${url}">${ctx.t.returnTo(ctx.view.merchant_name)}</a></div>`

const finalBody = (ctx: Context): Html => {
  const { session, t, view } = ctx
  switch (session.status) {
    case "completed":
      return html`<div class="final"><p class="mark status good" aria-hidden="true">✓</p><h1>${t.completedTitle}</h1><p>${
        t.completedText(view.merchant_name)
      }</p></div>${backLink(ctx, session.success_url, "primary")}`
    case "failed":
      return html`<div class="final"><p class="mark status bad" aria-hidden="true">✕</p><h1>${t.failedTitle}</h1></div>${
        view.last_decline !== null && alertBox([declineMessage(t, view.last_decline)])
      }<p>${t.failedText}</p>${backLink(ctx, session.cancel_url, "neutral")}`
    case "expired":
      return html`<div class="final"><h1>${t.expiredTitle}</h1><p>${t.expiredText}</p></div>${backLink(ctx, session.cancel_url, "neutral")}`
    default:
      return html`<div class="final"><h1>${t.canceledTitle}</h1><p>${t.canceledText}</p></div>${backLink(ctx, session.cancel_url, "neutral")}`
  }
}

export interface RenderedPage {
  readonly html: Html
  /** Whether the response may load images from other https origins (see `Html.response`). */
  readonly remoteImages: boolean
  /** Whether the page runs the card element: its response must allow the SDK's hosts. */
  readonly card: boolean
}

const sdkScript = (hosts: CardHosts | undefined) => `${hosts?.sdk ?? hosts?.api ?? ""}${SDK_PATH}`

const originOf = (url: string) => new URL(url).origin

/** The card element's hosts for the page's policy: tender.js and the glue, the fields frame, the API. */
export const cardPolicy = (hosts: CardHosts): ScriptPolicy => ({
  // The glue is this server's own (CHECKOUT_SCRIPT_PATH); tender.js is on the SDK host (the API host when none is set).
  scripts: ["'self'", originOf(hosts.sdk ?? hosts.api)],
  // The fields frame; an inline 3-D Secure challenge is framed inside a frame of the fields host too.
  frames: [originOf(hosts.fields)],
  // The glue's start of the card attempt (this page), tender.js's pay and payment_status (the API).
  connect: ["'self'", originOf(hosts.api)]
})

export const renderCheckoutPage = (view: CheckoutView, options: RenderOptions): RenderedPage => {
  const { session } = view
  const t = messages(options.locale)
  const ctx: Context = {
    view,
    session,
    locale: options.locale,
    t,
    amount: localMoney(session.amount, session.currency, options.locale.tag),
    hosts: options.hosts
  }
  const step = session.status === "pending_action" ? stepBody(ctx, session.next_action) : undefined
  const card = session.status === "open" ? view.methods.some(isCard) : step?.card === true
  const body = session.status === "open"
    ? openBody(ctx, options)
    : step !== undefined
    ? html`${step.body}${cancelForm(ctx)}`
    : finalBody(ctx)
  return {
    remoteImages: step?.remoteImages === true,
    card,
    html: page({
      title: `${t.checkout} · ${view.merchant_name}`,
      lang: options.locale.tag,
      scripts: card ? [sdkScript(options.hosts), CHECKOUT_SCRIPT_PATH] : undefined,
      banner: session.livemode ? undefined : t.testMode,
      refresh: step?.refreshSeconds !== undefined
        ? { seconds: step.refreshSeconds }
        : session.status === "completed"
        ? { seconds: FORWARD_SECONDS, url: session.success_url }
        : undefined,
      body: html`<div class="card">${header(ctx)}${body}</div><footer>${t.footer}</footer>`
    })
  }
}

export const renderCheckout = (view: CheckoutView, options: RenderOptions): Html => renderCheckoutPage(view, options).html

export const renderNotFound = (locale: Locale): Html => {
  const t = messages(locale)
  return page({
    title: t.notFoundTitle,
    lang: locale.tag,
    body: html`<div class="card"><h1>${t.notFoundTitle}</h1><p>${t.notFoundText}</p></div>`
  })
}

// ---------------------------------------------------------------------------------------------
// The posted form

export interface SubmitInput {
  readonly payment_method: {
    readonly code: string
    readonly details?: {
      /** The card method: the attempt waits for the card element (Sessions.SubmitInput). */
      readonly collect_card?: true
      readonly document_id?: string
    }
  }
  readonly customer?: {
    readonly email?: string
    readonly ip?: string
    readonly phone?: string
    readonly address?: { readonly line1?: string; readonly city?: string; readonly postal_code?: string; readonly country?: string }
  }
}

export type Parsed =
  | { readonly _tag: "Valid"; readonly input: SubmitInput }
  | { readonly _tag: "Invalid"; readonly problems: Readonly<Partial<Record<Field, FieldProblem>>> }

/**
 * The posted fields as the use case's input, or which fields are missing or malformed. Only what
 * the page can tell on its own is checked here (presence, shape); the use case validates the rest
 * (document checksums, the email's form) and its refusals are shown the same way. The card method
 * posts no card: its attempt waits for the card element (`collect_card`).
 */
/** The longest value each form field takes: the bound of the API field it becomes. */
const FIELD_MAX_LENGTH: Record<Field, number> = {
  method: Limits.MAX_CODE,
  document_id: Limits.MAX_CODE,
  email: Limits.MAX_EMAIL,
  phone: Limits.MAX_PHONE,
  address_line1: Limits.MAX_TEXT,
  address_city: Limits.MAX_TEXT,
  address_postal_code: Limits.MAX_TEXT,
  address_country: Limits.MAX_CODE
}

export const parseSubmission = (
  session: CheckoutSession.CheckoutSession,
  method: PaymentMethods.PaymentMethod,
  read: (field: Field) => string,
  clientIp: string | undefined
): Parsed => {
  const problems: Partial<Record<Field, FieldProblem>> = {}
  // The API's bounds (Limits.ts) hold for what the form posts too: the same values reach the order.
  const bounded = (field: Field): string => {
    const value = read(field).trim()
    if (value.length > FIELD_MAX_LENGTH[field]) problems[field] = "invalid"
    return value
  }
  const need = (field: Field): string => {
    const value = bounded(field)
    if (value === "") problems[field] = "required"
    return value
  }
  const optional = (field: Field): string | undefined => {
    const value = bounded(field)
    return value === "" ? undefined : value
  }

  const document = method.document === undefined ? undefined : need(FIELD.document)
  const email = optional(FIELD.email)
  const phone = session.collect_phone ? need(FIELD.phone) : undefined
  let address: NonNullable<SubmitInput["customer"]>["address"]
  if (session.collect_address) {
    const country = need(FIELD.country).toUpperCase()
    if (country !== "" && !Countries.isCountry(country)) problems[FIELD.country] = "invalid"
    address = { line1: need(FIELD.line1), city: need(FIELD.city), postal_code: need(FIELD.postalCode), country }
  }
  if (Object.keys(problems).length > 0) return { _tag: "Invalid", problems }

  const ip = method.required_fields.includes("customer.ip") ? clientIp : undefined
  const customer = {
    ...(email === undefined ? {} : { email }),
    ...(ip === undefined ? {} : { ip }),
    ...(phone === undefined ? {} : { phone }),
    ...(address === undefined ? {} : { address })
  }
  const details = { ...(isCard(method) ? { collect_card: true as const } : {}), ...(document === undefined ? {} : { document_id: document }) }
  return {
    _tag: "Valid",
    input: {
      payment_method: { code: method.code, ...(Object.keys(details).length === 0 ? {} : { details }) },
      ...(Object.keys(customer).length === 0 ? {} : { customer })
    }
  }
}

/** A `validation_failed` from the use case, pinned to the form's fields by the last path segment. */
const FIELD_BY_PATH_END: Readonly<Record<string, Field>> = {
  document_id: FIELD.document,
  email: FIELD.email,
  phone: FIELD.phone,
  line1: FIELD.line1,
  city: FIELD.city,
  postal_code: FIELD.postalCode,
  country: FIELD.country
}

export const problemsFromError = (error: Errors.DomainError): Partial<Record<Field, FieldProblem>> => {
  const problems: Partial<Record<Field, FieldProblem>> = {}
  for (const { field } of error.errors ?? []) {
    const name = FIELD_BY_PATH_END[field.split(".").pop() ?? ""]
    if (name !== undefined) problems[name] = "invalid"
  }
  return problems
}

const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  Errors.UnknownPaymentMethod.code,
  Errors.PaymentUnroutable.code,
  Errors.CountryNotAvailable.code,
  Errors.PaymentMethodNotFound.code,
  Errors.PaymentMethodNotSupportedByProvider.code
])

/** A refusal of the use case in the customer's words; its English message is for the merchant's logs. */
export const refusalMessage = (t: Messages, error: Errors.DomainError): string =>
  error.code === Errors.ValidationFailed.code
    ? t.formInvalid
    : UNAVAILABLE_CODES.has(error.code)
    ? t.methodUnavailable
    : t.declines[error.code] ?? t.genericError

// ---------------------------------------------------------------------------------------------
// Routes

/** A form post is a few hundred bytes; anything much larger is not from this page. */
const MAX_FORM_BYTES = ByteSize.bytes(16 * 1024)

const see = (location: string) => HttpServerResponse.redirect(location, { status: 303 })

const trimSlash = (url: string) => url.replace(/\/+$/, "")

const requestContext = (urls: PageUrls) =>
  Effect.gen(function*() {
    const { id } = yield* HttpRouter.params
    const request = yield* HttpServerRequest.HttpServerRequest
    const sessions = yield* Sessions
    const api = trimSlash(yield* PublicUrl)
    const view: Option.Option<CheckoutView> = id === undefined ? Option.none() : yield* sessions.hostedView(id)
    const acceptLanguage = request.headers["accept-language"]
    return {
      id: id ?? "",
      request,
      sessions,
      view,
      hosts: {
        api,
        fields: urls.fieldsUrl === undefined ? api : trimSlash(urls.fieldsUrl),
        sdk: urls.sdkUrl === undefined ? undefined : trimSlash(urls.sdkUrl)
      } satisfies CardHosts,
      locale: resolveLocale(Option.getOrUndefined(view)?.session.locale, acceptLanguage)
    }
  })

const notFound = (locale: Locale) => response(renderNotFound(locale), 404)

const show = (view: CheckoutView, options: RenderOptions & { readonly hosts: CardHosts }, status = 200) => {
  const rendered = renderCheckoutPage(view, options)
  return response(rendered.html, status, {
    remoteImages: rendered.remoteImages,
    // An inline 3-D Secure challenge ends by loading this page (the order's return URL) in the
    // issuer's frame, inside the fields host's frame, on this page: every ancestor must be allowed.
    // (With the fields on this host, that is 'self' alone, which older browsers' X-Frame-Options can say.)
    frameableBy: originOf(options.hosts.fields) === originOf(options.hosts.api) ? ["'self'"] : ["'self'", originOf(options.hosts.fields)],
    scripts: rendered.card ? cardPolicy(options.hosts) : undefined
  })
}

const searchParam = (request: HttpServerRequest.HttpServerRequest, name: string): string | undefined =>
  new URL(request.url, "http://localhost").searchParams.get(name) ?? undefined

const getPage = (urls: PageUrls) =>
  Effect.gen(function*() {
    const { hosts, locale, request, view } = yield* requestContext(urls)
    if (Option.isNone(view)) return notFound(locale)
    return show(view.value, { locale, hosts, openMethod: searchParam(request, FIELD.method) })
  })

/** Where the browser goes once the use case took the attempt (or the card element paid it). */
const afterSubmit = (view: CheckoutView, method: string): string => {
  const { session } = view
  const here = checkoutPath(session.id)
  if (session.status === "completed" && isWebUrl(session.success_url)) return session.success_url
  const redirect = session.next_action?.type === "redirect" ? session.next_action.redirect_url : undefined
  if (session.status === "pending_action" && redirect !== undefined && isWebUrl(redirect)) return redirect
  // A declined attempt: back to the form of the method just tried, which shows the decline.
  if (session.status === "open") return `${here}?${FIELD.method}=${encodeURIComponent(method)}`
  return here
}

/** The card attempt waiting for the card element: its collect_card (or collect_cvv) secret. */
const awaitedCardSecret = (view: CheckoutView): string | undefined => {
  const action = view.session.status === "pending_action" ? view.session.next_action : null
  return action?.type === "collect_card" || action?.type === "collect_cvv" ? action.client_secret : undefined
}

/** What a posted form came to, for the page (HTML, 303s) or the card glue (JSON). */
type Outcome =
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "See"; readonly location: string }
  | { readonly _tag: "Refused"; readonly view: CheckoutView; readonly form: FormState; readonly status: number }
  /** The session's card attempt waits for the card: the element takes this secret. */
  | { readonly _tag: "Card"; readonly clientSecret: string }

const attempt = (urls: PageUrls, only?: "card") =>
  Effect.gen(function*() {
    const context = yield* requestContext(urls)
    const { id, locale, request, sessions, view } = context
    const outcome = yield* Effect.gen(function*(): Effect.fn.Return<Outcome> {
      if (Option.isNone(view)) return { _tag: "NotFound" }
      const current = view.value
      // A second click after the card was refused: the attempt already waits, the same secret pays it.
      const waiting = awaitedCardSecret(current)
      if (only === "card" && waiting !== undefined) return { _tag: "Card", clientSecret: waiting }
      // Only an open session takes a new attempt; anything else shows where the session stands.
      if (current.session.status !== "open") return { _tag: "See", location: checkoutPath(id) }

      const form = yield* formBody(request, MAX_FORM_BYTES)
      const read = (field: Field): string => Option.getOrElse(UrlParams.getFirst(form, field), () => "")
      const t = messages(locale)
      const posted = only ?? read(FIELD.method)
      const method = current.methods.find((m) => m.code === posted) ??
        (posted === "" && current.methods.length === 1 ? current.methods[0] : undefined)
      const values = Object.fromEntries(Object.values(FIELD).map((field) => [field, read(field)]))
      if (method === undefined) {
        return { _tag: "Refused", view: current, form: { method: posted, values, problems: {}, alert: t.methodUnavailable }, status: 400 }
      }

      const parsed = parseSubmission(current.session, method, read, Option.getOrUndefined(request.remoteAddress))
      if (parsed._tag === "Invalid") {
        return { _tag: "Refused", view: current, form: { method: method.code, values, problems: parsed.problems, alert: t.formInvalid }, status: 400 }
      }

      const submitted = yield* Effect.result(sessions.submit(id, parsed.input))
      if (Result.isSuccess(submitted)) {
        const secret = awaitedCardSecret(submitted.success)
        return secret !== undefined ? { _tag: "Card", clientSecret: secret } : { _tag: "See", location: afterSubmit(submitted.success, method.code) }
      }
      const error = submitted.failure
      if (error.code === Errors.CheckoutSessionNotFound.code) return { _tag: "NotFound" }
      // The session moved on meanwhile (a second tab, a double click, expiry), or the first click's
      // attempt is still at the provider: show where it stands.
      if (error.code === Errors.InvalidSessionState.code || error.code === Errors.CardPaymentInProgress.code) {
        return { _tag: "See", location: checkoutPath(id) }
      }
      const now = Option.getOrElse(yield* sessions.hostedView(id), () => current)
      return {
        _tag: "Refused",
        view: now,
        form: { method: method.code, values, problems: problemsFromError(error), alert: refusalMessage(t, error) },
        status: ApiError.statusOf(error.code)
      }
    })
    return { ...context, outcome }
  })

const postPage = (urls: PageUrls) =>
  Effect.gen(function*() {
    const { hosts, id, locale, outcome } = yield* attempt(urls)
    switch (outcome._tag) {
      case "NotFound":
        return notFound(locale)
      case "See":
        return see(outcome.location)
      case "Card":
        // Posted without the glue (no script): the page shows the card step, which needs it.
        return see(checkoutPath(id))
      case "Refused":
        return show(outcome.view, { locale, hosts, form: outcome.form }, outcome.status)
    }
  })

const json = (body: unknown, status = 200) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" } })

/**
 * The card glue's start of the card attempt: the customer fields in, the attempt's collect_card
 * secret out (`{client_secret}`), or where to go instead (`{location}`), or what to fix
 * (`{message, problems}`), in the customer's language. No card data is ever posted here.
 */
const startCard = (urls: PageUrls) =>
  Effect.gen(function*() {
    const { id, outcome } = yield* attempt(urls, "card")
    switch (outcome._tag) {
      case "NotFound":
        return json({ location: checkoutPath(id) }, 404)
      case "See":
        return json({ location: outcome.location })
      case "Card":
        return json({ client_secret: outcome.clientSecret })
      case "Refused":
        return json({ message: outcome.form.alert, problems: outcome.form.problems }, outcome.status)
    }
  })

/** After tender.js's `pay`: on to where the session stands, as the form's 303 would have sent them. */
const continueCard = (urls: PageUrls) =>
  Effect.gen(function*() {
    const { locale, view } = yield* requestContext(urls)
    return Option.isNone(view) ? notFound(locale) : see(afterSubmit(view.value, "card"))
  })

const cancel = (urls: PageUrls) =>
  Effect.gen(function*() {
    const { id, locale, sessions, view } = yield* requestContext(urls)
    if (Option.isNone(view)) return notFound(locale)
    const canceled = yield* Effect.result(sessions.cancelByCustomer(id))
    if (Result.isSuccess(canceled) && isWebUrl(canceled.success.session.cancel_url)) {
      return see(canceled.success.session.cancel_url)
    }
    // Already final (paid meanwhile, expired): the page shows that instead.
    return see(checkoutPath(id))
  })

const script = HttpServerResponse.text(CHECKOUT_SCRIPT, {
  contentType: "text/javascript; charset=utf-8",
  headers: { "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff" }
})

const PAGE_ROUTE = "/checkout/:id"
const CANCEL_ROUTE = "/checkout/:id/cancel"
const CARD_ROUTE = "/checkout/:id/card"
const CONTINUE_ROUTE = "/checkout/:id/continue"

/** Method and path of every checkout route, for the gateway's route table (404 vs 405). */
export const CHECKOUT_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  { method: "GET", path: PAGE_ROUTE },
  { method: "POST", path: PAGE_ROUTE },
  { method: "POST", path: CANCEL_ROUTE },
  { method: "POST", path: CARD_ROUTE },
  { method: "GET", path: CONTINUE_ROUTE },
  { method: "GET", path: CHECKOUT_SCRIPT_PATH }
]

/**
 * The routes, to merge beside the API; they need the `Sessions` use case and the public URL.
 * The card fields and tender.js come from the public URL unless `urls` names their own hosts.
 */
export const layer = (options: PageUrls = {}) =>
  HttpRouter.addAll([
    HttpRouter.route("GET", PAGE_ROUTE, getPage(options)),
    // Every post changes the session (an attempt, a cancel): none is taken from another site.
    HttpRouter.route("POST", PAGE_ROUTE, sameSiteOnly(postPage(options))),
    HttpRouter.route("POST", CANCEL_ROUTE, sameSiteOnly(cancel(options))),
    HttpRouter.route("POST", CARD_ROUTE, sameSiteOnly(startCard(options), () => json({ message: "Refused: sent from another site" }, 403))),
    HttpRouter.route("GET", CONTINUE_ROUTE, continueCard(options)),
    HttpRouter.route("GET", CHECKOUT_SCRIPT_PATH, Effect.succeed(script))
  ])
