/**
 * Validation of `POST /v1/transfers` beyond its JSON shape (contract.md, Transfers): the destination
 * codes and the instrument type each makes, the fields each type requires, where the sandbox can pay
 * each code to, and the returned instrument. Pure: the validated request or the spec's error.
 */
import { type Account, activeProfile } from "../accounts/Account.ts"
import {
  type CountryRequired,
  type FieldError,
  type MerchantReferenceRequired,
  PaymentMethodNotSupportedAsDestination,
  TransferCardTokenRequired,
  TransferDestinationInvalid,
  TransferUnroutable,
  UnknownPaymentMethod,
  ValidationFailed
} from "../kernel/Errors.ts"
import { type InstrumentType, type PaymentInstrument, presentAddress } from "../payments/Payment.ts"
import { findMethod } from "../payments/PaymentMethods.ts"
import { checkOrderBasics, type Dedicated, EMAIL, firstDedicated } from "../payments/RequestChecks.ts"
import type { VaultedCard } from "../cards/CardPorts.ts"

type Text = string | undefined

/** A postal address as a request gives it, before validation. */
export interface AddressInput {
  readonly line1?: Text
  readonly line2?: Text
  readonly city?: Text
  readonly state?: Text
  readonly postal_code?: Text
  readonly country?: Text
}

/** The spec's request-side union of destination fields; the ones a type does not use are ignored. */
export interface DestinationDetails {
  readonly iban?: Text
  readonly account_number?: Text
  readonly bic_swift?: Text
  readonly bank_code?: Text
  readonly branch_code?: Text
  readonly bank_name?: Text
  readonly account_type?: Text
  readonly wallet_address?: Text
  readonly account_reference?: Text
  readonly card_token?: Text
  readonly holder_name?: Text
  readonly holder_email?: Text
  readonly holder_phone?: Text
  readonly document_id?: Text
  readonly holder_address?: AddressInput | undefined
  readonly first_name?: Text
  readonly middle_name?: Text
  readonly last_name?: Text
  readonly date_of_birth?: Text
  readonly bank_address?: string | AddressInput | undefined
}

/** A create-transfer request's fields, before validation. */
export interface CreateTransferInput {
  readonly amount?: Text
  readonly currency?: Text
  readonly country?: Text
  readonly merchant_reference?: Text
  readonly payment_method?: { readonly code?: Text; readonly details?: DestinationDetails | undefined } | undefined
  readonly channel_id?: Text
  readonly processing_profile?: Text
}

/** A destination code (contract.md), the instrument type it makes, and where the sandbox pays it to. */
export interface Destination {
  readonly code: string
  readonly type: InstrumentType
  /** `undefined` = any. */
  readonly countries: ReadonlySet<string> | undefined
  readonly currencies: ReadonlySet<string> | undefined
}

const set = (...codes: Array<string>) => new Set(codes)
const MERCADOPAGO = { AR: "ARS", BR: "BRL", CL: "CLP", CO: "COP", MX: "MXN", PE: "PEN", UY: "UYU" }

/** Every destination code a transfer may name, with its instrument type and where it can be paid. */
export const DESTINATIONS: ReadonlyArray<Destination> = [
  { code: "bank_transfer", type: "bank_account", countries: undefined, currencies: undefined },
  // paypal: the countries and currencies of contract.md's Methods table
  { code: "paypal", type: "wallet", countries: findMethod("paypal")!.countries, currencies: findMethod("paypal")!.currencies },
  { code: "mercadopago", type: "wallet", countries: set(...Object.keys(MERCADOPAGO)), currencies: set(...Object.values(MERCADOPAGO)) },
  { code: "crypto", type: "crypto_wallet", countries: undefined, currencies: set("USD", "EUR") },
  { code: "pix", type: "real_time_payment", countries: set("BR"), currencies: set("BRL") },
  { code: "upi", type: "real_time_payment", countries: set("IN"), currencies: set("INR") },
  { code: "payid", type: "real_time_payment", countries: set("AU"), currencies: set("AUD") },
  { code: "card", type: "card", countries: undefined, currencies: undefined }
]

const BY_CODE = new Map(DESTINATIONS.map((d) => [d.code, d]))

/** The fields a type needs, at least one of each group (a card's token has its own code). */
const REQUIRED: Readonly<Record<Exclude<InstrumentType, "card">, ReadonlyArray<keyof DestinationDetails>>> = {
  bank_account: ["iban", "account_number"],
  wallet: ["holder_email", "holder_phone"],
  crypto_wallet: ["wallet_address"],
  real_time_payment: ["account_reference"]
}

/** The type-specific fields a returned instrument carries top level (spec, Payment instrument). */
const TYPE_FIELDS: Readonly<Record<Exclude<InstrumentType, "card">, ReadonlyArray<keyof DestinationDetails & keyof PaymentInstrument>>> = {
  bank_account: ["iban", "account_number", "bic_swift", "bank_code", "branch_code", "bank_name", "account_type"],
  wallet: [],
  crypto_wallet: ["wallet_address"],
  real_time_payment: ["account_reference"]
}

const HOLDER_FIELDS = ["holder_email", "holder_phone", "document_id"] as const

/** A transfer request that passed validation: amounts in minor units, its destination resolved. */
export interface ValidTransfer {
  readonly amount: number
  readonly currency: string
  readonly country: string
  readonly merchant_reference: string
  readonly destination: Destination
  readonly details: DestinationDetails
  /** A card destination's vaulted card. */
  readonly card_token: string | undefined
  readonly processing_profile: string | null
  readonly channel_id: string | null
}

const present = (value: Text): value is string => value !== undefined && value.trim() !== ""
const detail = (field: string) => `payment_method.details.${field}`

/**
 * The destination's own problems: a card without its token, a type missing what identifies it, an
 * email that is not one. `errors[]` names every offending field.
 */
export const checkDestination = (
  destination: Destination,
  details: DestinationDetails
): TransferCardTokenRequired | TransferDestinationInvalid | undefined => {
  if (destination.type === "card") {
    if (present(details.card_token)) return undefined
    const message = "is required for a card destination"
    return new TransferCardTokenRequired({ message: `card_token ${message}`, errors: [{ field: detail("card_token"), message }] })
  }
  const errors: Array<FieldError> = []
  const group = REQUIRED[destination.type]
  if (!group.some((field) => present(details[field] as Text))) {
    const message = `${group.join(" or ")} is required for a ${destination.type} destination`
    errors.push(...group.map((field) => ({ field: detail(field), message })))
  }
  if (details.holder_email !== undefined && !EMAIL.test(details.holder_email)) {
    errors.push({ field: detail("holder_email"), message: "must be an email address" })
  }
  if (details.iban !== undefined && !/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(details.iban.replace(/\s/g, "").toUpperCase())) {
    errors.push({ field: detail("iban"), message: "must be an IBAN (country code, check digits, 11–30 letters or digits)" })
  }
  if (errors.length === 0) return undefined
  return new TransferDestinationInvalid({ message: `Invalid ${destination.type} destination: ${errors.map((e) => e.field).join(", ")}`, errors })
}

type DedicatedError = MerchantReferenceRequired | CountryRequired | UnknownPaymentMethod | PaymentMethodNotSupportedAsDestination

/**
 * Every field in one pass (docs/decisions.md, Transfers): a dedicated code first (reference,
 * country, unknown code, a payment code that is no destination), then `validation_failed` for any
 * other field, then the destination's own codes. Routing is judged after, on a valid request.
 */
export const validateTransfer = (
  account: Account,
  input: CreateTransferInput
): ValidTransfer | ValidationFailed | DedicatedError | TransferCardTokenRequired | TransferDestinationInvalid => {
  const errors: Array<FieldError> = []
  const add = (field: string, message: string) => errors.push({ field, message })
  const dedicated: Array<Dedicated<DedicatedError>> = []

  const { reference, amount, currency, country } = checkOrderBasics(input, add, dedicated)

  const code = input.payment_method?.code
  const destination = code === undefined ? undefined : BY_CODE.get(code)
  if (code === undefined) add("payment_method.code", "is required")
  else if (destination === undefined && findMethod(code) !== undefined) {
    add("payment_method.code", `"${code}" cannot be a transfer destination`)
    dedicated.push({ message: `${code} cannot be a transfer destination`, make: (props) => new PaymentMethodNotSupportedAsDestination(props) })
  } else if (destination === undefined) {
    add("payment_method.code", `"${code}" is not a known payment method`)
    dedicated.push({ message: `Unknown payment_method.code "${code}"`, make: (props) => new UnknownPaymentMethod(props) })
  }

  let profile: string | null = null
  if (input.processing_profile !== undefined) {
    if (activeProfile(account, input.processing_profile) === undefined) {
      add("processing_profile", "is not an active processing profile of this account")
    } else profile = input.processing_profile
  }
  if (input.channel_id !== undefined && input.channel_id.trim() === "") add("channel_id", "must not be empty")

  const first = firstDedicated(dedicated, errors)
  if (first !== undefined) return first
  if (errors.length > 0 || destination === undefined) {
    return new ValidationFailed({ message: `Invalid transfer: ${errors.map((e) => e.field).join(", ")}`, errors })
  }
  const details = input.payment_method?.details ?? {}
  const invalid = checkDestination(destination, details)
  if (invalid !== undefined) return invalid
  return {
    amount,
    currency,
    country,
    merchant_reference: reference,
    destination,
    details,
    card_token: destination.type === "card" ? details.card_token : undefined,
    processing_profile: profile,
    channel_id: input.channel_id ?? null
  }
}

/** contract.md, Transfers: a code outside the countries and currencies it can be paid to. */
export const routeDestination = (valid: ValidTransfer): TransferUnroutable | undefined => {
  const { countries, currencies, code } = valid.destination
  return (countries === undefined || countries.has(valid.country)) && (currencies === undefined || currencies.has(valid.currency))
    ? undefined
    : new TransferUnroutable({ message: `No channel can pay a ${code} transfer to ${valid.country} in ${valid.currency}; supply channel_id` })
}

const defined = <K extends string, V>(key: K, value: V | undefined) => (value === undefined ? {} : { [key]: value } as { [P in K]: V })

/** The holder as a destination names it: holder_name, else first/middle/last joined, else `fallbackName`. */
const holderOf = (details: DestinationDetails, fallbackName: string | undefined) => {
  const joined = [details.first_name, details.middle_name, details.last_name].filter(present).map((n) => n.trim()).join(" ")
  const name = present(details.holder_name) ? details.holder_name : joined !== "" ? joined : fallbackName
  return {
    ...defined("holder_name", name),
    ...Object.fromEntries(HOLDER_FIELDS.filter((f) => details[f] !== undefined).map((f) => [f, details[f]])),
    ...defined("holder_address", presentAddress(details.holder_address))
  }
}

/** The returned instrument of a non-card destination: the transfer's country, the type's fields top level. */
export const destinationInstrument = (id: string, valid: ValidTransfer): PaymentInstrument => {
  const type = valid.destination.type as Exclude<InstrumentType, "card">
  return {
    id,
    type,
    country_code: valid.country,
    ...holderOf(valid.details, undefined),
    ...Object.fromEntries(TYPE_FIELDS[type].filter((f) => valid.details[f] !== undefined).map((f) => [f, valid.details[f]]))
  }
}

/**
 * The returned instrument of a card destination, from the vaulted card (never its token or expiry)
 * and the issuer facts of its BIN: the issuer's country is the instrument's.
 */
/** The holder fields a card destination's details give, over the vaulted card's own. */
export const cardHolderOf = (details: DestinationDetails, card: VaultedCard) => holderOf(details, card.holder_name ?? undefined)
