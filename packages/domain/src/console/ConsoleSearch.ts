/**
 * The console's search form, validated (issue 26): the form's raw strings and the operator's grant
 * become a `ConsoleQuery`, or a `validation_failed` naming the form field at fault. A filter the
 * searched kind does not have is refused rather than ignored, so an operator never reads a page of
 * results that silently dropped part of what they asked for.
 *
 * Also the console's small shared rules both storage adapters read: which kind an id is by its
 * prefix, the non-sensitive card facts of an instrument, and what a transaction says about routing.
 */
import { ID_PREFIXES } from "../kernel/Ids.ts"
import { invalidField, type ValidationFailed } from "../kernel/Errors.ts"
import { MAX_ID, MAX_PAGE, MAX_REFERENCE } from "../kernel/Limits.ts"
import { exponent, isCurrency, parseAmount } from "../kernel/Money.ts"
import { decodeCursor } from "../kernel/Search.ts"
import { hasControl } from "../kernel/Text.ts"
import { DESTINATIONS } from "../money-out/TransferRequest.ts"
import { OUTFLOW_STATUSES, TRANSFER_STATUSES } from "../money-out/MoneyOut.ts"
import type { AccountGrant } from "../operators/Operator.ts"
import { ORDER_STATUSES } from "../payments/Order.ts"
import { PAYMENT_METHODS } from "../payments/PaymentMethods.ts"
import { TRANSACTION_STATUSES } from "../payments/Transaction.ts"
import { SESSION_STATUSES } from "../sessions/CheckoutSession.ts"
import { type CardFacts, type ConsoleQuery, SEARCH_KINDS, type SearchKind } from "./ConsoleReads.ts"

/** The search form as submitted: every field a string, an empty one meaning "not given". */
export interface ConsoleSearchForm {
  readonly kind?: string | undefined
  readonly q?: string | undefined
  readonly reference?: string | undefined
  readonly amount?: string | undefined
  readonly currency?: string | undefined
  readonly status?: string | undefined
  readonly method?: string | undefined
  readonly channel?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly last4?: string | undefined
  readonly cursor?: string | undefined
  readonly limit?: string | undefined
}

/** The form's filter fields (not kind, cursor or limit). */
export type SearchFilter = "q" | "reference" | "amount" | "currency" | "status" | "method" | "channel" | "from" | "to" | "last4"

/** The console's default page size. */
export const DEFAULT_LIMIT = 25

const SESSION_AND_OUTFLOW: ReadonlyArray<SearchFilter> = ["q", "reference", "amount", "currency", "status", "from", "to"]

/**
 * The filters each kind has. Orders and transactions: everything, `last4` included (they carry a
 * card); transfers have no merchant reference of their own but a method and a channel; customers
 * only their id and creation date.
 */
export const FILTERS: Readonly<Record<SearchKind, ReadonlyArray<SearchFilter>>> = {
  orders: ["q", "reference", "amount", "currency", "status", "method", "channel", "from", "to", "last4"],
  transactions: ["q", "reference", "amount", "currency", "status", "method", "channel", "from", "to", "last4"],
  sessions: SESSION_AND_OUTFLOW,
  refunds: SESSION_AND_OUTFLOW,
  payouts: SESSION_AND_OUTFLOW,
  transfers: ["q", "amount", "currency", "status", "method", "channel", "from", "to"],
  customers: ["q", "from", "to"]
}

/** The statuses each kind has (the spec's tables); customers have none. */
export const STATUSES: Readonly<Record<SearchKind, ReadonlyArray<string>>> = {
  orders: ORDER_STATUSES,
  transactions: TRANSACTION_STATUSES,
  sessions: SESSION_STATUSES,
  refunds: OUTFLOW_STATUSES,
  payouts: OUTFLOW_STATUSES,
  transfers: TRANSFER_STATUSES,
  customers: []
}

/** Payment method codes a payment may name, and the destination codes a transfer may name. */
const METHODS: Readonly<Record<"payments" | "transfers", ReadonlySet<string>>> = {
  payments: new Set(PAYMENT_METHODS.map((m) => m.code)),
  transfers: new Set(DESTINATIONS.map((d) => d.code))
}

/** The id prefix of each kind (`ord`, `txn`, …). */
export const PREFIXES: Readonly<Record<SearchKind, string>> = {
  orders: ID_PREFIXES.order,
  transactions: ID_PREFIXES.transaction,
  sessions: ID_PREFIXES.checkoutSession,
  refunds: ID_PREFIXES.refund,
  payouts: ID_PREFIXES.payout,
  transfers: ID_PREFIXES.transfer,
  customers: ID_PREFIXES.customer
}

/** The kind an id is by its prefix (`evt_…` is an event); undefined for anything else. */
export const kindOfId = (id: string): SearchKind | "event" | undefined => {
  const prefix = id.slice(0, id.indexOf("_"))
  if (prefix === ID_PREFIXES.event) return "event"
  return SEARCH_KINDS.find((kind) => PREFIXES[kind] === prefix)
}

const ID = /^[a-z]+_[A-Za-z0-9]{8,64}$/
const DAY = /^\d{4}-\d{2}-\d{2}$/
const EARLIEST = Date.parse("1970-01-01T00:00:00Z")
/** Exclusive: a `to` day's bound is the next midnight, and PostgreSQL reads no year past 9999. */
const LATEST = Date.parse("9999-12-31T00:00:00Z")

const given = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === "" ? undefined : trimmed
}

/**
 * A date bound: `YYYY-MM-DD` is that UTC day (as `to`, the whole day: the bound is the next
 * midnight, exclusive), anything else an ISO 8601 timestamp taken as the instant it names.
 */
const dateBound = (field: "from" | "to", value: string): string | ValidationFailed => {
  const day = DAY.test(value)
  const parsed = Date.parse(day ? `${value}T00:00:00Z` : value)
  // A day-only string must round-trip (Date.parse rolls 2026-02-30 over into March).
  if (Number.isNaN(parsed) || (day && new Date(parsed).toISOString().slice(0, 10) !== value) || (!day && !value.includes("T"))) {
    return invalidField(field, "must be a date (YYYY-MM-DD) or an ISO 8601 timestamp")
  }
  if (parsed < EARLIEST || parsed >= LATEST) return invalidField(field, "must be between 1970-01-01 and 9999-12-30")
  return new Date(day && field === "to" ? parsed + 86_400_000 : parsed).toISOString()
}

/**
 * Validates the console's search form against the kind searched: `kind` (default orders), `q` an
 * exact id of the kind (or of its order, for the kinds that belong to one), no filter with a
 * control character, `amount` a decimal exact
 * to `currency`'s exponent and only with it, `status` one the kind has, `method` a known code,
 * `last4` four digits, `from`/`to` dates or timestamps, `limit` 1–100 (default 25). The grant is
 * what is searched: an operator never reads rows of accounts they are not granted.
 */
export const decodeConsoleSearch = (form: ConsoleSearchForm, grant: AccountGrant): ConsoleQuery | ValidationFailed => {
  const rawKind = given(form.kind) ?? "orders"
  const kind = SEARCH_KINDS.find((k) => k === rawKind)
  if (kind === undefined) return invalidField("kind", `must be one of ${SEARCH_KINDS.join(", ")}`)
  const filters = FILTERS[kind]
  const value = {} as Record<SearchFilter, string | undefined>
  for (const field of ["q", "reference", "amount", "currency", "status", "method", "channel", "from", "to", "last4"] as const) {
    const v = given(form[field])
    // Checked first and for every filter: a NUL reaching PostgreSQL would be its error, not the operator's.
    if (v !== undefined && hasControl(v)) return invalidField(field, "must not contain control characters")
    if (v !== undefined && !filters.includes(field)) return invalidField(field, `does not apply to ${kind}`)
    value[field] = v
  }

  const { q, reference, status, method, channel, last4 } = value
  if (q !== undefined) {
    const prefix = q.slice(0, q.indexOf("_"))
    const ownsOrder = kind !== "orders" && kind !== "customers" && prefix === ID_PREFIXES.order
    if (q.length > MAX_ID || !ID.test(q) || (prefix !== PREFIXES[kind] && !ownsOrder)) {
      const also = kind === "orders" || kind === "customers" ? "" : ` or of its order (${ID_PREFIXES.order}_…)`
      return invalidField("q", `must be an id of ${kind} (${PREFIXES[kind]}_…)${also}`)
    }
  }
  if (reference !== undefined && reference.length > MAX_REFERENCE) {
    return invalidField("reference", `must be at most ${MAX_REFERENCE} characters`)
  }

  const currency = value.currency?.toUpperCase()
  if (currency !== undefined && !isCurrency(currency)) return invalidField("currency", "must be an ISO 4217 currency code")
  let amount: number | undefined
  if (value.amount !== undefined) {
    if (currency === undefined) return invalidField("amount", "needs a currency: the same figure means different sums in different currencies")
    const parsed = parseAmount(value.amount, currency)
    if ("error" in parsed) {
      return invalidField("amount", `must be a positive decimal with at most ${exponent(currency)} decimals in ${currency}`)
    }
    amount = parsed.minor
  }

  if (status !== undefined && !STATUSES[kind].includes(status)) {
    return invalidField("status", `must be one of ${STATUSES[kind].join(", ")} for ${kind}`)
  }
  if (method !== undefined && !METHODS[kind === "transfers" ? "transfers" : "payments"].has(method)) {
    return invalidField("method", `is not a ${kind === "transfers" ? "transfer destination" : "payment method"} code`)
  }
  if (channel !== undefined && (channel.length > MAX_ID || !/^[a-z0-9_]+$/i.test(channel))) {
    return invalidField("channel", "must be a channel id (ch_…) or a provider name")
  }
  if (last4 !== undefined && !/^\d{4}$/.test(last4)) return invalidField("last4", "must be exactly 4 digits")

  const from = value.from === undefined ? undefined : dateBound("from", value.from)
  if (from instanceof Error) return from
  const to = value.to === undefined ? undefined : dateBound("to", value.to)
  if (to instanceof Error) return to

  const cursorText = given(form.cursor)
  const cursor = cursorText === undefined ? undefined : decodeCursor(cursorText)
  if (cursor instanceof Error) return cursor
  const limitText = given(form.limit)
  const limit = limitText === undefined ? DEFAULT_LIMIT : /^\d{1,3}$/.test(limitText) ? Number(limitText) : Number.NaN
  if (!(limit >= 1 && limit <= MAX_PAGE)) return invalidField("limit", `must be an integer from 1 to ${MAX_PAGE}`)

  return {
    kind,
    accounts: grant,
    id: q,
    reference,
    amount,
    currency,
    status,
    method,
    channel,
    created_from: from,
    created_to: to,
    last4,
    limit,
    cursor
  }
}

/** The card's non-sensitive fields from a stored instrument (none of a non-card one); never its BIN or holder. */
export const cardFactsOf = (instrument: {
  readonly type?: string | undefined
  readonly card_brand?: string | undefined
  readonly last4_digits?: string | undefined
  readonly card_funding?: string | undefined
  readonly country_code?: string | undefined
} | null): CardFacts | null =>
  instrument === null || instrument.type !== "card" ? null : {
    brand: instrument.card_brand ?? null,
    last4: instrument.last4_digits ?? null,
    // The stored instrument keeps no expiry (the vault does, behind the token): not the console's to read.
    exp_month: null,
    exp_year: null,
    funding: instrument.card_funding ?? null,
    country: instrument.country_code ?? null
  }

/** The channel a transaction went to: `channel ch_… (stripe)`, or the built-in `sandbox (built in)`. */
export const channelOf = (txn: { readonly provider: string; readonly channel_id: string | null }): string =>
  txn.channel_id === null ? `${txn.provider} (built in)` : `channel ${txn.channel_id} (${txn.provider})`

/**
 * What a transaction records about how its channel was chosen: the channel it went to (or the
 * built-in sandbox) and the processing profile that pinned it. Where it stands among the order's
 * attempts is the story's to say (Story.ts), which reads them all. A failover inside one attempt
 * (an unreachable channel, the call moved on to the next: ProviderStep's cascade) moves the
 * attempt's own row, so only the channel that answered is recorded.
 */
export const routingOf = (txn: {
  readonly provider: string
  readonly channel_id: string | null
  readonly processing_profile: string | null
}): string => {
  const via = channelOf(txn)
  return txn.processing_profile === null ? via : `${via}, processing profile ${txn.processing_profile}`
}
