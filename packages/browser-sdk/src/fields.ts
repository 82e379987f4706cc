/**
 * The secure card fields page's script (served at {fields_url}/fields/v1/card.js, loaded by
 * card.html inside the card element's iframe). It owns the card number, expiry and CVC: it validates
 * them, and only it sends them, to Tender's `/v1/client/card_tokens`. The merchant page learns
 * states (empty, complete, error, brand) and the resulting token, never the digits.
 *
 * The iframe's URL fragment names the parent's origin and the element id; messages go to that exact
 * origin only and are accepted only from it (and from the parent window).
 */
import { validateAppearance, cssProperty, VARIABLE_NAMES } from "./appearance.ts"
import { callApi } from "./api.ts"
import {
  cvcState, detectBrand, digitsOnly, ERROR_OF, expiryState, type FieldName, type FieldState, firstError, formatExpiry,
  formatNumber, numberState, parseExpiry
} from "./cardInput.ts"
import { readEnv } from "./env.ts"
import { resolveLocale, WORDING, type Locale } from "./locales.ts"
import {
  type ChangePayload, type CollectedCard, type ElementOptions, type Envelope, type FromFields, isEnvelope, type TenderErrorBody,
  type ToFields
} from "./protocol.ts"

/** Spec, Limits: the element holds first paint at most 300 ms (card on file secret, appearance). */
const FIRST_PAINT_HOLD_MS = 300

interface Session {
  readonly collect: "card" | "cvv"
  readonly saved_card: { readonly brand: string; readonly last4: string } | null
}

const env = readEnv()
const fragment = new URLSearchParams(location.hash.slice(1))
const parentOrigin = fragment.get("origin") ?? ""
const elementId = fragment.get("element") ?? ""

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T
const inputs: Record<FieldName, HTMLInputElement> = { number: $("number"), expiry: $("expiry"), cvc: $("cvc") }
const form = $<HTMLFormElement>("form")

let publishableKey = ""
let locale: Locale = resolveLocale(undefined, navigator.language)
let clientSecret: string | undefined
let mode: Session = { collect: "card", saved_card: null }
/** Fields the customer has left (or a collect attempted): their incomplete content is an error now. */
const final = new Set<FieldName>()
let painted = false
let sessionLoad = 0

const post = (message: FromFields) => {
  const envelope: Envelope<FromFields> = { ...message, tender: 1, element: elementId }
  parent.postMessage(envelope, parentOrigin)
}

const height = () => Math.ceil(document.documentElement.getBoundingClientRect().height)

const activeFields = (): ReadonlyArray<FieldName> => mode.collect === "cvv" ? ["cvc"] : ["number", "expiry", "cvc"]

const cvcBrand = () =>
  mode.collect === "cvv" ? (mode.saved_card?.brand ?? "unknown") : detectBrand(digitsOnly(inputs.number.value))

const states = (): Partial<Record<FieldName, FieldState>> => {
  const all: Record<FieldName, FieldState> = {
    number: numberState(inputs.number.value, final.has("number")),
    expiry: expiryState(inputs.expiry.value, new Date(), final.has("expiry")),
    cvc: cvcState(inputs.cvc.value, cvcBrand() as Parameters<typeof cvcState>[1], final.has("cvc"))
  }
  const active: Partial<Record<FieldName, FieldState>> = {}
  for (const field of activeFields()) active[field] = all[field]
  return active
}

const validationError = (code: TenderErrorBody["code"]): TenderErrorBody => ({
  type: "validation_error",
  code,
  message: WORDING[locale].errors[code as keyof typeof WORDING.en.errors] ?? code,
  correlationId: null
})

const render = () => {
  const current = states()
  const problem = firstError(current)
  for (const field of ["number", "expiry", "cvc"] as const) {
    inputs[field].setAttribute("aria-invalid", String(current[field]?.error !== undefined))
  }
  const brand = detectBrand(digitsOnly(inputs.number.value))
  $("brand").textContent = mode.collect === "card" && brand !== "unknown" ? brand : ""
  $("error").textContent = problem === undefined ? "" : WORDING[locale].errors[problem.code]
  return { current, problem, brand }
}

const emitChange = () => {
  const { current, problem, brand } = render()
  const fields: ChangePayload["fields"] = {}
  for (const [field, state] of Object.entries(current) as Array<[FieldName, FieldState]>) {
    fields[field] = field === "number" ? { ...state, brand } : state
  }
  post({
    kind: "change",
    payload: {
      complete: Object.values(current).every((s) => s.complete),
      error: problem === undefined ? null : validationError(problem.code),
      fields
    }
  })
}

const applyLocale = () => {
  const words = WORDING[locale]
  document.documentElement.lang = locale
  $("number-label").textContent = words.number
  $("expiry-label").textContent = words.expiry
  $("cvc-label").textContent = words.cvc
  $("saved-label").textContent = words.savedCard
  render()
}

const applyAppearance = (appearance: unknown) => {
  const accepted = validateAppearance(appearance)
  const style = document.documentElement.style
  // Every variable is set or removed: an update replaces the whole appearance (spec).
  for (const name of VARIABLE_NAMES) {
    const value = accepted[name]
    if (value === undefined) style.removeProperty(cssProperty(name))
    else style.setProperty(cssProperty(name), value)
  }
}

const applyMode = () => {
  const cvv = mode.collect === "cvv"
  $("number-row").hidden = cvv
  $("expiry-row").hidden = cvv
  $("saved").hidden = !cvv
  if (cvv && mode.saved_card !== null) {
    $("saved-brand").textContent = mode.saved_card.brand
    $("saved-last4").textContent = mode.saved_card.last4
  }
}

const paint = () => {
  if (painted) return
  painted = true
  document.body.classList.remove("hold")
  post({ kind: "ready", height: height() })
}

const clear = () => {
  for (const input of Object.values(inputs)) input.value = ""
  final.clear()
  emitChange()
}

/** Reads the secret's session: a `collect_cvv` secret turns the form into the CVC-only one. */
const loadSession = async (secret: string | undefined) => {
  const load = ++sessionLoad
  if (secret === undefined) {
    mode = { collect: "card", saved_card: null }
    return
  }
  const answer = await callApi<Session>(env.apiUrl, "/v1/client/session", publishableKey, { client_secret: secret })
  if (load !== sessionLoad) return
  // A refused secret keeps the full form; collecting with it reports the refusal.
  mode = answer.ok && answer.body.collect === "cvv"
    ? { collect: "cvv", saved_card: answer.body.saved_card }
    : { collect: "card", saved_card: null }
}

const useSecret = async (secret: string | undefined) => {
  clientSecret = secret
  const shape = mode.collect
  const hold = new Promise<void>((done) => setTimeout(done, FIRST_PAINT_HOLD_MS))
  const loading = loadSession(secret).then(() => {
    applyMode()
    // Only a form that changed shape (full card <-> CVC only) starts empty: a secret arriving for the
    // same form, even after first paint or right before a collect, keeps what the customer typed (spec:
    // the fields keep their contents); a merchant wanting empty fields calls clear().
    if (painted && mode.collect !== shape) {
      clear()
      post({ kind: "resize", height: height() })
    }
  })
  await Promise.race([loading, hold])
  applyMode()
}

const applyOptions = async (options: ElementOptions, named: (key: keyof ElementOptions) => boolean) => {
  if (named("locale")) {
    locale = resolveLocale(options.locale, navigator.language)
    applyLocale()
  }
  if (named("appearance")) applyAppearance(options.appearance)
  if (named("clientSecret")) await useSecret(typeof options.clientSecret === "string" ? options.clientSecret : undefined)
}

const collect = async (requestId: number, secret: string) => {
  const answer = (card: CollectedCard | null, error: TenderErrorBody | null) =>
    post({ kind: "collected", requestId, card, error })
  if (secret !== clientSecret) {
    // collectCard named another payment than the element's: its session decides the form (card or CVC only).
    clientSecret = secret
    await loadSession(secret)
    applyMode()
  }
  for (const field of activeFields()) final.add(field)
  const { current, problem } = render()
  emitChange()
  if (problem !== undefined || !Object.values(current).every((s) => s.complete)) {
    const code = problem?.code ?? ERROR_OF[activeFields().find((f) => !current[f]?.complete) ?? "number"]
    return answer(null, validationError(code))
  }
  const body: Record<string, unknown> = { client_secret: secret, cvc: inputs.cvc.value }
  if (mode.collect === "card") {
    const expiry = parseExpiry(inputs.expiry.value)!
    body.number = digitsOnly(inputs.number.value)
    body.exp_month = expiry.month
    body.exp_year = expiry.year
  }
  const result = await callApi<{
    token: string
    brand: string
    last4: string
    bin: string
    exp_month: number | null
    exp_year: number | null
  }>(env.apiUrl, "/v1/client/card_tokens", publishableKey, body)
  if (!result.ok) return answer(null, result.error)
  const card = result.body
  answer({
    token: card.token,
    brand: card.brand === "unknown" ? null : card.brand,
    last4: card.last4,
    bin: card.bin,
    expMonth: card.exp_month ?? null,
    expYear: card.exp_year ?? null
  }, null)
}

const onMessage = (event: MessageEvent) => {
  if (event.origin !== parentOrigin || event.source !== parent || !isEnvelope(event.data, elementId)) return
  const message = event.data as ToFields
  switch (message.kind) {
    case "init":
      publishableKey = message.publishableKey
      void applyOptions(message.options, () => true).then(paint)
      return
    case "update":
      void applyOptions(message.options, (key) => Object.prototype.hasOwnProperty.call(message.options, key)).then(() =>
        post({ kind: "resize", height: height() })
      )
      return
    case "clear":
      return clear()
    case "focus":
      return (mode.collect === "cvv" ? inputs.cvc : inputs.number).focus()
    case "blur":
      return (document.activeElement as HTMLElement | null)?.blur()
    case "collect":
      void collect(message.requestId, message.clientSecret ?? clientSecret)
      return
  }
}

const wire = () => {
  inputs.number.addEventListener("input", () => {
    inputs.number.value = formatNumber(inputs.number.value)
    if (numberState(inputs.number.value, false).complete && mode.collect === "card") inputs.expiry.focus()
    emitChange()
  })
  inputs.expiry.addEventListener("input", (event) => {
    const deleting = (event as InputEvent).inputType?.startsWith("delete") ?? false
    inputs.expiry.value = formatExpiry(inputs.expiry.value, deleting)
    if (expiryState(inputs.expiry.value, new Date(), false).complete) inputs.cvc.focus()
    emitChange()
  })
  inputs.cvc.addEventListener("input", () => {
    inputs.cvc.value = inputs.cvc.value.replace(/\D/g, "").slice(0, 4)
    emitChange()
  })
  for (const field of ["number", "expiry", "cvc"] as const) {
    inputs[field].addEventListener("focus", () => post({ kind: "focus", field }))
    inputs[field].addEventListener("blur", () => {
      if (inputs[field].value.length > 0) final.add(field)
      post({ kind: "blur", field })
      emitChange()
    })
  }
  // Enter in a field must not navigate the frame: the merchant's page decides when to collect.
  form.addEventListener("submit", (event) => event.preventDefault())
  new ResizeObserver(() => painted && post({ kind: "resize", height: height() })).observe(document.documentElement)
}

if (parentOrigin !== "" && elementId !== "" && window.parent !== window) {
  applyLocale()
  wire()
  window.addEventListener("message", onMessage)
  post({ kind: "hello" })
}
