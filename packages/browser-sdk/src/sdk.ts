/**
 * tender.js: `window.Tender(publishableKey)` (spec, Browser SDK). Bundled into one self-contained
 * script. The card element is an iframe on the fields host; this side only relays options and
 * events and never sees the card number. `pay()` talks to the API directly: it sends a token, no
 * card data.
 */
import { type ApiResult, callApi, readPaymentStatus } from "./api.ts"
import { readEnv } from "./env.ts"
import {
  type ChangePayload, type CollectedCard, type ElementOptions, type Envelope, type FromFields, isEnvelope, type TenderErrorBody,
  type ToFields
} from "./protocol.ts"

/** contract.md: IFRAME_BLOCKED when the iframe has not answered the handshake within 3 seconds. */
const HANDSHAKE_TIMEOUT_MS = 3000
/** How often the outcome of a 3-D Secure challenge is read while the customer is in it. */
const CHALLENGE_POLL_MS = 1000

const env = readEnv()
const fieldsOrigin = new URL(env.fieldsUrl).origin

/** What the SDK throws on developer misuse (spec: `integration_error` throws). */
class TenderError extends Error implements TenderErrorBody {
  readonly type: TenderErrorBody["type"]
  readonly code: string
  readonly correlationId: string | null
  constructor(body: TenderErrorBody) {
    super(body.message)
    this.name = "TenderError"
    this.type = body.type
    this.code = body.code
    this.correlationId = body.correlationId
  }
}

const integrationError = (code: string, message: string) =>
  new TenderError({ type: "integration_error", code, message, correlationId: null })

const notMounted = (): TenderErrorBody => ({
  type: "integration_error",
  code: "card_element_not_mounted",
  message: "The card element was unmounted before it could collect the card.",
  correlationId: null
})

const bodyOf = (error: TenderError): TenderErrorBody => ({
  type: error.type, code: error.code, message: error.message, correlationId: error.correlationId
})

type EventName = "ready" | "change" | "focus" | "blur" | "submitting" | "loaderror"
type Handler = (payload?: unknown) => void
const EVENTS: ReadonlySet<string> = new Set(["ready", "change", "focus", "blur", "submitting", "loaderror"])
const OPTION_KEYS = ["locale", "appearance", "clientSecret"] as const

let nextElement = 0
let nextRequest = 0
/** Mount order across elements: a counter, as two mounts can fall in the same millisecond. */
let nextMount = 0

class CardElement {
  private readonly id = `tender-card-${++nextElement}-${Math.random().toString(36).slice(2, 10)}`
  private readonly handlers = new Map<string, Set<Handler>>()
  private options: ElementOptions
  private iframe: HTMLIFrameElement | null = null
  private listener: ((event: MessageEvent) => void) | null = null
  private handshake: ReturnType<typeof setTimeout> | undefined
  private answered = false
  /** The handshake timed out (IFRAME_BLOCKED): a late `hello` must not turn the element ready after `loaderror`. */
  private blocked = false
  private destroyed = false
  private pending = new Map<number, (answer: { card: CollectedCard | null; error: TenderErrorBody | null }) => void>()
  private readyPromise: Promise<void>
  private settleReady: { resolve: () => void; reject: (error: TenderError) => void } = { resolve: () => {}, reject: () => {} }
  /** Set by mount(): `collectCard` uses the element mounted most recently. */
  mountedAt = 0

  private readonly publishableKey: string
  private readonly onDestroy: (e: CardElement) => void

  constructor(publishableKey: string, options: ElementOptions, onDestroy: (e: CardElement) => void) {
    this.publishableKey = publishableKey
    this.onDestroy = onDestroy
    this.options = options
    this.readyPromise = this.freshReady()
  }

  private freshReady() {
    const promise = new Promise<void>((resolve, reject) => {
      this.settleReady = { resolve, reject }
    })
    // `ready` may be left unawaited; a blocked frame is reported by `loaderror` as well.
    promise.catch(() => {})
    return promise
  }

  /** Resolves once the fields are interactive (and the appearance was applied). */
  get ready(): Promise<void> {
    return this.readyPromise
  }

  get mounted(): boolean {
    return this.iframe !== null
  }

  private emit(event: EventName, payload?: unknown) {
    for (const handler of [...(this.handlers.get(event) ?? [])]) {
      try {
        handler(payload)
      } catch (error) {
        // A merchant's handler failing must not stop the others or the element.
        setTimeout(() => {
          throw error
        })
      }
    }
  }

  private send(message: ToFields) {
    const frame = this.iframe?.contentWindow
    if (frame === null || frame === undefined || !this.answered) return
    const envelope: Envelope<ToFields> = { ...message, tender: 1, element: this.id }
    frame.postMessage(envelope, fieldsOrigin)
  }

  mount(target: string | Element): void {
    if (this.destroyed) throw integrationError("element_destroyed", "This element was destroyed; create a new one.")
    const container = typeof target === "string" ? document.querySelector(target) : target
    if (!(container instanceof Element)) {
      throw integrationError("mount_target_missing", `No element matches the mount target ${String(target)}.`)
    }
    if (this.iframe !== null) this.unmount()
    const iframe = document.createElement("iframe")
    iframe.src = `${env.fieldsUrl}/fields/v1/card.html#${new URLSearchParams({ origin: location.origin, element: this.id })}`
    iframe.title = "Secure card payment input"
    iframe.name = this.id
    iframe.setAttribute("frameborder", "0")
    iframe.setAttribute("scrolling", "no")
    iframe.setAttribute("allowtransparency", "true")
    iframe.style.cssText = "border:0;width:100%;height:120px;display:block;overflow:hidden;background:transparent"
    this.listener = (event) => this.receive(event)
    window.addEventListener("message", this.listener)
    this.iframe = iframe
    this.answered = false
    this.blocked = false
    this.mountedAt = ++nextMount
    container.appendChild(iframe)
    this.handshake = setTimeout(() => {
      if (this.answered || this.iframe !== iframe) return
      this.blocked = true
      const error: TenderErrorBody = {
        type: "integration_error",
        code: "IFRAME_BLOCKED",
        message: `The card fields did not load. Allow ${fieldsOrigin} in the page's Content-Security-Policy frame-src.`,
        correlationId: null
      }
      this.settleReady.reject(new TenderError(error))
      this.emit("loaderror", { error })
    }, HANDSHAKE_TIMEOUT_MS)
  }

  private receive(event: MessageEvent) {
    if (event.origin !== fieldsOrigin || this.iframe === null || event.source !== this.iframe.contentWindow) return
    if (this.blocked) return
    if (!isEnvelope(event.data, this.id)) return
    const message = event.data as FromFields
    switch (message.kind) {
      case "hello":
        this.answered = true
        clearTimeout(this.handshake)
        this.send({ kind: "init", publishableKey: this.publishableKey, options: this.options })
        return
      case "ready":
        this.resize(message.height)
        this.settleReady.resolve()
        this.emit("ready")
        return
      case "resize":
        return this.resize(message.height)
      case "change":
        return this.emit("change", message.payload satisfies ChangePayload)
      case "focus":
      case "blur":
        return this.emit(message.kind, { field: message.field })
      case "collected": {
        const settle = this.pending.get(message.requestId)
        this.pending.delete(message.requestId)
        settle?.({ card: message.card, error: message.error })
        return
      }
    }
  }

  private resize(height: number) {
    if (this.iframe !== null && Number.isFinite(height) && height > 0) this.iframe.style.height = `${Math.ceil(height)}px`
  }

  unmount(): void {
    clearTimeout(this.handshake)
    if (this.listener !== null) window.removeEventListener("message", this.listener)
    this.listener = null
    this.iframe?.remove()
    this.iframe = null
    this.answered = false
    for (const settle of this.pending.values()) settle({ card: null, error: notMounted() })
    this.pending.clear()
    // The frame awaited is gone: whoever awaits its readiness (a collect among them) learns it now
    // (a no-op once ready). A later mount loads a new frame, whose readiness is a new promise.
    this.settleReady.reject(new TenderError(notMounted()))
    this.readyPromise = this.freshReady()
  }

  destroy(): void {
    if (this.destroyed) return
    this.unmount()
    this.handlers.clear()
    this.destroyed = true
    this.onDestroy(this)
  }

  update(options: ElementOptions): void {
    if (typeof options !== "object" || options === null) throw integrationError("invalid_options", "update() takes an options object.")
    const named: Record<string, unknown> = {}
    for (const key of OPTION_KEYS) {
      if (Object.prototype.hasOwnProperty.call(options, key)) named[key] = options[key]
    }
    this.options = { ...this.options, ...named }
    this.send({ kind: "update", options: named as ElementOptions })
  }

  clear(): void {
    this.send({ kind: "clear" })
  }

  focus(): void {
    this.iframe?.focus()
    this.send({ kind: "focus" })
  }

  blur(): void {
    this.send({ kind: "blur" })
  }

  on(event: EventName, handler: Handler): this {
    if (!EVENTS.has(event)) throw integrationError("unknown_event", `Unknown event ${String(event)}.`)
    if (typeof handler !== "function") throw integrationError("invalid_handler", "on() takes a function.")
    const set = this.handlers.get(event) ?? new Set()
    set.add(handler)
    this.handlers.set(event, set)
    return this
  }

  off(event: EventName, handler: Handler): this {
    this.handlers.get(event)?.delete(handler)
    return this
  }

  /** collectCard's leg: the iframe validates, tokenizes with Tender and answers with the token. */
  async collect(clientSecret: string): Promise<{ card: CollectedCard | null; error: TenderErrorBody | null }> {
    try {
      await this.readyPromise
    } catch (error) {
      // A frame that never loaded (IFRAME_BLOCKED) or went away: collectCard resolves with the error.
      return { card: null, error: bodyOf(error as TenderError) }
    }
    // Unmounted between the readiness and this turn: no frame would ever answer.
    if (!this.mounted) return { card: null, error: notMounted() }
    this.emit("submitting")
    const requestId = ++nextRequest
    const answer = new Promise<{ card: CollectedCard | null; error: TenderErrorBody | null }>((resolve) => {
      this.pending.set(requestId, resolve)
    })
    this.send({ kind: "collect", requestId, clientSecret })
    return answer
  }
}

interface PayAnswer {
  readonly status: "succeeded" | "failed" | "requires_action"
  readonly payment_id: string
  readonly decline_code?: string
  readonly challenge_url?: string
  readonly display_mode?: "inline" | "popup" | "redirect"
}

export interface PayResult {
  readonly status: "succeeded" | "failed" | "requires_action"
  readonly paymentId?: string
  readonly declineCode?: string
  readonly error?: TenderErrorBody
}

const toResult = (answer: PayAnswer): PayResult => ({
  status: answer.status,
  paymentId: answer.payment_id,
  ...(answer.status === "failed" && typeof answer.decline_code === "string" ? { declineCode: answer.decline_code } : {})
})

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

class Client {
  /** Every card element created and not destroyed, mounted or not (not `elements`: that is the public method). */
  private readonly cardElements = new Set<CardElement>()

  private readonly publishableKey: string

  constructor(publishableKey: string) {
    this.publishableKey = publishableKey
  }

  elements(defaults: { locale?: string; appearance?: unknown } = {}) {
    const client = this
    return {
      create(type: string, options: ElementOptions = {}) {
        if (type !== "card") throw integrationError("unknown_element_type", `Unknown element type ${String(type)}; use "card".`)
        const element: CardElement = new CardElement(
          client.publishableKey,
          { locale: defaults.locale, appearance: defaults.appearance, ...options },
          (e) => client.cardElements.delete(e)
        )
        client.cardElements.add(element)
        return element
      }
    }
  }

  /** Collects the mounted card: `{card, error}`, never throwing on a refusal (spec). */
  async collectCard(clientSecret: string): Promise<{ card: CollectedCard | null; error: TenderErrorBody | null }> {
    if (typeof clientSecret !== "string" || clientSecret.length === 0) {
      throw integrationError("client_secret_required", "collectCard() needs the payment's client_secret.")
    }
    const mounted = [...this.cardElements].filter((e) => e.mounted)
    const element = mounted.reduce<CardElement | undefined>((last, e) => last === undefined || e.mountedAt > last.mountedAt ? e : last, undefined)
    if (element === undefined) throw integrationError("card_element_not_mounted", "Mount a card element before collectCard().")
    return element.collect(clientSecret)
  }

  async pay(clientSecret: string, token: string, options: { returnUrl?: string } = {}): Promise<PayResult> {
    if (typeof clientSecret !== "string" || typeof token !== "string") {
      throw integrationError("invalid_arguments", "pay() needs the client_secret and the token from collectCard().")
    }
    // A relative returnUrl means this page's neighbour; the server alone judges the result (http(s),
    // length), so a refusal reads the same whichever way the URL came.
    const returnUrl = resolveAgainstPage(options.returnUrl ?? location.href)
    const paid = await callApi<PayAnswer>(env.apiUrl, "/v1/client/pay", this.publishableKey, {
      client_secret: clientSecret,
      token,
      return_url: returnUrl
    })
    if (!paid.ok) return this.afterFailedPay(clientSecret, paid)
    const answer = paid.body
    if (answer.status !== "requires_action" || typeof answer.challenge_url !== "string") return toResult(answer)
    switch (answer.display_mode) {
      case "redirect":
        // The page goes away; on return (returnUrl + tender_payment_id) the merchant re-reads the payment.
        setTimeout(() => location.assign(answer.challenge_url!))
        return toResult(answer)
      case "popup": {
        const popup = window.open(answer.challenge_url, "tender_3ds", "popup,width=480,height=640")
        if (popup !== null) return this.awaitChallenge(clientSecret, answer, () => popup.closed, () => popup.close())
        // A blocked popup falls back to the inline challenge.
        return this.inlineChallenge(clientSecret, answer)
      }
      default:
        return this.inlineChallenge(clientSecret, answer)
    }
  }

  /**
   * Only a 400 or 401 is a refusal before anything was charged. Any other failure (network, 5xx, 409
   * card_payment_in_progress) may hide an authorization that went through: the payment's status says
   * what happened (spec: anything not `failed` is not refused), with the error attached.
   */
  private async afterFailedPay(clientSecret: string, paid: ApiResult<PayAnswer> & { ok: false }): Promise<PayResult> {
    if (paid.httpStatus === 400 || paid.httpStatus === 401) return { status: "failed", error: paid.error }
    const status = await this.readStatus(clientSecret)
    if (!status.ok) return { status: "requires_action", error: paid.error }
    return { ...toResult(status.body), error: paid.error }
  }

  private readStatus(clientSecret: string): Promise<ApiResult<PayAnswer>> {
    return readPaymentStatus<PayAnswer>(env.apiUrl, this.publishableKey, clientSecret)
  }

  private inlineChallenge(clientSecret: string, answer: PayAnswer): Promise<PayResult> {
    const overlay = document.createElement("div")
    overlay.setAttribute("role", "dialog")
    overlay.setAttribute("aria-modal", "true")
    overlay.style.cssText = "position:fixed;inset:0;z-index:2147483647;background:rgba(0,0,0,.55);display:flex;align-items:center;justify-content:center"
    const frame = document.createElement("iframe")
    // Not the challenge itself: the merchant's CSP allows the fields host only (spec), so a page there
    // frames the payment's challenge (challenge.ts). The fragment never reaches a server.
    frame.src = `${env.fieldsUrl}/fields/v1/challenge.html#${new URLSearchParams({ key: this.publishableKey, secret: clientSecret })}`
    frame.title = "3-D Secure"
    frame.style.cssText = "border:0;border-radius:8px;background:#fff;width:min(480px,96vw);height:min(640px,92vh)"
    let closed = false
    const close = document.createElement("button")
    close.type = "button"
    close.textContent = "×"
    close.setAttribute("aria-label", "Close")
    close.style.cssText = "position:absolute;top:12px;right:16px;font:28px/1 sans-serif;color:#fff;background:none;border:0;cursor:pointer"
    close.onclick = () => {
      closed = true
    }
    overlay.append(frame, close)
    document.body.appendChild(overlay)
    return this.awaitChallenge(clientSecret, answer, () => closed, () => overlay.remove())
  }

  /** Reads the outcome until the challenge ends or the customer closes it, then reads it once more. */
  private async awaitChallenge(clientSecret: string, answer: PayAnswer, isClosed: () => boolean, dispose: () => void): Promise<PayResult> {
    try {
      for (;;) {
        await sleep(CHALLENGE_POLL_MS)
        const closed = isClosed()
        const status = await this.readStatus(clientSecret)
        if (!status.ok) {
          // A failed read does not end the wait while the customer is still in the challenge: only a
          // rejected secret (nothing more can be read) or a closed challenge does.
          if (status.error.type === "authentication_error" || closed) {
            return { status: "requires_action", paymentId: answer.payment_id, error: status.error }
          }
          continue
        }
        if (status.body.status !== "requires_action" || closed) return toResult({ ...status.body, payment_id: status.body.payment_id ?? answer.payment_id })
      }
    } finally {
      dispose()
    }
  }
}

/** `Tender(publishableKey)`: a `pk_test_`/`pk_live_` key; a secret key or none throws. */
function Tender(publishableKey: unknown) {
  if (typeof publishableKey === "string" && publishableKey.startsWith("sk_")) {
    throw integrationError("secret_key_not_allowed", "Tender() takes a publishable key (pk_…); never put a secret key in a browser.")
  }
  if (typeof publishableKey !== "string" || !/^pk_(test|live)_\S+$/.test(publishableKey)) {
    throw integrationError("publishable_key_required", "Tender() needs a publishable key (pk_test_… or pk_live_…).")
  }
  return new Client(publishableKey)
}

const resolveAgainstPage = (url: string): string => {
  try {
    return new URL(url, location.href).href
  } catch {
    return url
  }
}

;(window as unknown as { Tender: typeof Tender }).Tender = Tender
