/**
 * The sandbox provider's hosted pages: what a customer sees when a test-mode payment sends them
 * "to the provider" (redirect and QR methods, 3-D Secure challenges, vouchers and bank transfers),
 * with buttons that decide the outcome. Public and unsigned like any provider page: the transaction
 * id in the path is the only key, and the pages act only on test-mode attempts still awaiting the
 * customer.
 *
 * Every page is plainly labelled "Tender sandbox" so that nobody mistakes it for a live provider.
 */
import { Errors, isInFlight, Payment, Payments, type ProviderOutcome } from "@tender/domain"
import { SANDBOX_PATHS } from "@tender/adapters/providers/sandbox/SandboxPaths"
import { Effect, Option, Result } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpRouter, HttpServerRequest, HttpServerResponse, UrlParams } from "effect/http"
import QRCode from "qrcode"
import { facts, formBody, type Html, html, isWebUrl, methodName, money, page, response, sameSiteOnly, utcTime } from "./Html.ts"

export interface Attempt {
  readonly order: Payment.Order
  readonly transaction: Payment.Transaction
}

type Answer = Effect.Effect<{ readonly return_url: string | null }, Errors.DomainError>

/** A button: the form value it posts, and what it asks the payments use case to do. */
export interface Choice {
  readonly outcome: string
  readonly label: string
  readonly tone: "primary" | "danger" | "neutral"
  readonly act: (payments: Payments["Service"], transactionId: string) => Answer
}

export interface SandboxPage {
  readonly path: `/${string}`
  readonly choices: ReadonlyArray<Choice>
  /** Whether the customer still has the say; otherwise the page shows how the attempt ended. */
  readonly awaiting: (attempt: Attempt) => boolean
  readonly content: (attempt: Attempt) => { readonly title: string; readonly intro: string; readonly body: Html }
  /** How the attempt ended, from this page's point of view. */
  readonly ending: (attempt: Attempt) => Ending
  /** Whether a merchant's page may frame it (the 3-D Secure challenge, shown inline by tender.js). */
  readonly frameable?: boolean
}

interface Ending {
  readonly text: string
  readonly good: boolean
}

export const BANNER = "Tender sandbox · test mode · no real money moves"

const outcome = (value: ProviderOutcome, label: string, tone: Choice["tone"]): Choice => ({
  outcome: value,
  label,
  tone,
  act: (payments, id) => payments.providerOutcome(id, value)
})

const challengeAnswer = (approved: boolean, label: string, tone: Choice["tone"]): Choice => ({
  outcome: approved ? "approve" : "deny",
  label,
  tone,
  act: (payments, id) => payments.answerChallenge(id, approved)
})

const amountOf = ({ order }: Attempt) => money(order.amount, order.currency)

const transactionEnding = (transaction: Payment.Transaction): Ending => {
  switch (transaction.status) {
    case "completed":
      return { text: "Payment succeeded", good: true }
    case "failed":
      return { text: "Payment failed", good: false }
    case "canceled":
      return { text: transaction.decline_code === "expired" ? "Payment window expired" : "Payment canceled", good: false }
    case "returned":
      return { text: "Payment returned", good: false }
    default:
      return { text: "Processing", good: true }
  }
}

/** Redirect, QR, voucher and bank-transfer attempts wait on the customer while in flight. */
const awaitsProvider = ({ transaction }: Attempt) => transaction.payment_method !== "card" && isInFlight(transaction.status)

const qrImagePath = (transactionId: string) => `${SANDBOX_PATHS.qr}/${encodeURIComponent(transactionId)}.svg`

const redirectPage: SandboxPage = {
  path: SANDBOX_PATHS.redirect,
  choices: [outcome("succeed", "Succeed", "primary"), outcome("fail", "Fail", "danger"), outcome("cancel", "Cancel", "neutral")],
  awaiting: awaitsProvider,
  ending: ({ transaction }) => transactionEnding(transaction),
  content: (attempt) => {
    const { order, transaction } = attempt
    const method = methodName(order.payment_method)
    const qrData = transaction.next_action?.qr?.data
    return {
      title: `${method} payment`,
      intro: `A simulated ${method} page: choose how this payment ends.`,
      body: html`${
        facts([
          ["Amount", amountOf(attempt)],
          ["Method", method],
          ["Merchant reference", order.merchant_reference],
          ["Transaction", transaction.id]
        ])
      }${
        qrData !== undefined && html`<img class="qr" src="${qrImagePath(transaction.id)}" alt="QR code to scan">
<code class="code">${qrData}</code>`
      }`
    }
  }
}

const challengePage: SandboxPage = {
  path: SANDBOX_PATHS.challenge,
  frameable: true,
  choices: [challengeAnswer(true, "Approve", "primary"), challengeAnswer(false, "Deny", "danger")],
  awaiting: ({ transaction }) => transaction.three_ds === "required" && isInFlight(transaction.status),
  ending: ({ transaction }) =>
    transaction.three_ds === "approved" && isInFlight(transaction.status)
      ? { text: "Verification approved", good: true }
      : transaction.three_ds === "denied" && isInFlight(transaction.status)
      ? { text: "Verification denied", good: false }
      : transactionEnding(transaction),
  content: (attempt) => {
    const instrument = attempt.transaction.payment_instrument
    return {
      title: "3-D Secure verification",
      intro: "A simulated card issuer challenge: approve or deny this payment.",
      body: facts([
        ["Amount", amountOf(attempt)],
        ["Card", instrument?.last4_digits && `${instrument.card_brand ?? "card"} •••• ${instrument.last4_digits}`],
        ["Merchant reference", attempt.order.merchant_reference],
        ["Transaction", attempt.transaction.id]
      ])
    }
  }
}

const voucherPage: SandboxPage = {
  path: SANDBOX_PATHS.voucher,
  choices: [outcome("succeed", "Mark as paid", "primary"), outcome("expire", "Let it expire", "neutral")],
  awaiting: awaitsProvider,
  ending: ({ transaction }) => transactionEnding(transaction),
  content: (attempt) => {
    const { order, transaction } = attempt
    const action = transaction.next_action
    const expires = transaction.expires_at ?? action?.expires_at
    const deadline = expires === undefined || expires === null ? undefined : utcTime(expires)
    const transfer = action?.bank_transfer
    if (transfer !== undefined) {
      return {
        title: `${methodName(order.payment_method)} bank transfer`,
        intro: "Simulated transfer instructions: mark the transfer as received, or let the window close.",
        body: facts([
          ["Amount", amountOf(attempt)],
          ["CLABE", html`<code>${transfer.clabe}</code>`],
          ["Bank", transfer.bank_name],
          ["Beneficiary", transfer.beneficiary],
          ["Reference", transfer.reference],
          ["Pay before", deadline]
        ])
      }
    }
    const voucher = action?.voucher
    return {
      title: `${methodName(order.payment_method)} voucher`,
      intro: "A simulated payment voucher: mark it as paid, or let it expire.",
      body: html`${
        facts([
          ["Amount", amountOf(attempt)],
          ["Reference", voucher?.reference && html`<code>${voucher.reference}</code>`],
          ["Pay before", deadline],
          ["Transaction", transaction.id]
        ])
      }${voucher?.barcode !== undefined && html`<p>Barcode line</p><code class="code">${voucher.barcode}</code>`}`
    }
  }
}

export const SANDBOX_PAGES = { redirect: redirectPage, challenge: challengePage, voucher: voucherPage } as const

/** Where the customer goes back to once the attempt ended, when the merchant gave a web address. */
const returnLink = ({ order, transaction }: Attempt, ending: Ending): Html | false => {
  const url = Payment.customerReturnUrl(order, transaction, ending.good)
  return url !== null && isWebUrl(url) && html`<p><a href="${url}">Return to the merchant</a></p>`
}

export const renderPage = (sandboxPage: SandboxPage, attempt: Attempt, notice?: string): Html => {
  const { title, intro, body } = sandboxPage.content(attempt)
  let tail: Html
  if (sandboxPage.awaiting(attempt)) {
    tail = html`<form method="post" class="actions">${
      sandboxPage.choices.map((choice) =>
        html`<button type="submit" name="outcome" value="${choice.outcome}" class="${choice.tone}">${choice.label}</button>`
      )
    }</form>`
  } else {
    const ending = sandboxPage.ending(attempt)
    tail = html`<p class="status ${ending.good ? "good" : "bad"}" role="status">${ending.text}</p>${returnLink(attempt, ending)}`
  }
  return page({
    title: `${title} · Tender sandbox`,
    banner: BANNER,
    body: html`<div class="card">${notice !== undefined && html`<div class="notice" role="status">${notice}</div>`}<h1>${title}</h1><p>${intro}</p>${body}${tail}</div>`
  })
}

export const renderNotFound = (): Html =>
  page({
    title: "Payment not found · Tender sandbox",
    banner: BANNER,
    body: html`<div class="card"><h1>Payment not found</h1><p>This sandbox page does not belong to any payment. Check the link the merchant sent you.</p></div>`
  })

const notFound = () => response(renderNotFound(), 404)

const currentAttempt = Effect.fnUntraced(function*() {
  const { id } = yield* HttpRouter.params
  const payments = yield* Payments
  const found = id === undefined ? Option.none<Attempt>() : yield* payments.hostedAttempt(id)
  // The sandbox serves test mode only: a live attempt is not one of its payments, so its pages
  // neither show it nor take an outcome for it (no live money is ever "paid" by a button here).
  const attempt = Option.filter(found, ({ order, transaction }) => !order.livemode && !transaction.livemode)
  return { payments, attempt }
})

/** A form post is a handful of bytes; anything larger is not from our page. */
const MAX_FORM_BYTES = ByteSize.bytes(4096)

const readOutcome = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  return UrlParams.getFirst(yield* formBody(request, MAX_FORM_BYTES), "outcome")
})

const show = (sandboxPage: SandboxPage) =>
  Effect.gen(function*() {
    const { attempt } = yield* currentAttempt()
    return Option.match(attempt, { onNone: notFound, onSome: (a) => response(renderPage(sandboxPage, a), 200, { frameable: sandboxPage.frameable }) })
  })

const submit = (sandboxPage: SandboxPage) =>
  Effect.gen(function*() {
    const { attempt, payments } = yield* currentAttempt()
    if (Option.isNone(attempt)) return notFound()
    const posted = yield* readOutcome
    const choice = sandboxPage.choices.find((c) => Option.contains(posted, c.outcome))
    const framing = { frameable: sandboxPage.frameable }
    if (choice === undefined) return response(renderPage(sandboxPage, attempt.value, "Choose one of the buttons below."), 400, framing)

    const answered = yield* Effect.result(choice.act(payments, attempt.value.transaction.id))
    if (Result.isSuccess(answered) && answered.success.return_url !== null) {
      return HttpServerResponse.redirect(answered.success.return_url, { status: 303 })
    }
    if (Result.isFailure(answered) && answered.failure.code === Errors.TransactionNotFound.code) return notFound()
    // Re-read: the page shows where the attempt stands now (a double click lands here too).
    const now = Option.getOrElse(yield* payments.hostedAttempt(attempt.value.transaction.id), () => attempt.value)
    return Result.isSuccess(answered)
      ? response(renderPage(sandboxPage, now, `Recorded: ${choice.label}.`), 200, framing)
      : response(renderPage(sandboxPage, now, answered.failure.message), 409, framing)
  })

const qrImage = Effect.gen(function*() {
  const { attempt } = yield* currentAttempt()
  const data = Option.getOrUndefined(attempt)?.transaction.next_action?.qr?.data
  if (data === undefined) return notFound()
  const svg = yield* Effect.promise(() => QRCode.toString(data, { type: "svg", errorCorrectionLevel: "M", margin: 2 }))
  return HttpServerResponse.text(svg, {
    contentType: "image/svg+xml",
    headers: { "x-content-type-options": "nosniff", "cache-control": "private, max-age=300" }
  })
})

const PAGE_LIST: ReadonlyArray<SandboxPage> = Object.values(SANDBOX_PAGES)

const QR_ROUTE = `${SANDBOX_PATHS.qr}/:id.svg` as const

/** Method and path of every sandbox route, for the gateway's route table (404 vs 405). */
export const SANDBOX_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  ...PAGE_LIST.flatMap((p) => [{ method: "GET", path: `${p.path}/:id` }, { method: "POST", path: `${p.path}/:id` }]),
  { method: "GET", path: QR_ROUTE }
]

/** The routes, to merge beside the API; they need the `Payments` use case. */
export const layer = HttpRouter.addAll([
  ...PAGE_LIST.flatMap((p) => [
    HttpRouter.route("GET", `${p.path}/:id`, show(p)),
    // An answer (approve, pay, cancel…) decides the payment: none is taken from another site.
    HttpRouter.route("POST", `${p.path}/:id`, sameSiteOnly(submit(p)))
  ]),
  HttpRouter.route("GET", QR_ROUTE, qrImage)
])
