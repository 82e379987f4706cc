/**
 * The payment-method catalog (contract.md, Methods): where each method can be routed and what it
 * needs from the merchant. Routing and discovery (`GET /v1/payment-methods`) both read this table.
 */

export type NextActionType = "redirect" | "qr" | "voucher" | "bank_transfer" | "collect_card" | "collect_cvv"

/** One method of the catalog: where it can be routed, how the customer completes it, what it needs. */
export interface PaymentMethod {
  readonly code: string
  /** `undefined` = any country. */
  readonly countries: ReadonlySet<string> | undefined
  /** `undefined` = any currency. */
  readonly currencies: ReadonlySet<string> | undefined
  /** The action a customer-present payment starts with. */
  readonly next_action_type: NextActionType
  /** Request fields this method requires beyond the common ones, as dotted paths. */
  readonly required_fields: ReadonlyArray<string>
  /** Which document the method's country expects in `payment_method.details.document_id`. */
  readonly document?: "cpf" | "curp_or_rfc" | "cedula"
}

const set = (...codes: Array<string>) => new Set(codes)
const LOCAL_FIELDS = ["payment_method.details.document_id", "customer.ip"]

/** Every payment method Tender knows, in catalog order. */
export const PAYMENT_METHODS: ReadonlyArray<PaymentMethod> = [
  { code: "card", countries: undefined, currencies: undefined, next_action_type: "collect_card", required_fields: [] },
  {
    code: "paypal",
    countries: set("US", "GB", "DE", "NL", "FR", "ES", "IT", "BR", "MX"),
    currencies: set("USD", "EUR", "GBP", "BRL", "MXN"),
    next_action_type: "redirect",
    required_fields: ["success_url", "cancel_url"]
  },
  {
    code: "ideal",
    countries: set("NL"),
    currencies: set("EUR"),
    next_action_type: "redirect",
    required_fields: ["success_url", "cancel_url"]
  },
  {
    code: "pse",
    countries: set("CO"),
    currencies: set("COP"),
    next_action_type: "redirect",
    required_fields: ["success_url", "cancel_url", ...LOCAL_FIELDS],
    document: "cedula"
  },
  {
    code: "pix",
    countries: set("BR"),
    currencies: set("BRL"),
    next_action_type: "qr",
    required_fields: LOCAL_FIELDS,
    document: "cpf"
  },
  { code: "mach", countries: set("CL"), currencies: set("CLP"), next_action_type: "qr", required_fields: [] },
  {
    code: "boleto",
    countries: set("BR"),
    currencies: set("BRL"),
    next_action_type: "voucher",
    required_fields: LOCAL_FIELDS,
    document: "cpf"
  },
  {
    code: "oxxo",
    countries: set("MX"),
    currencies: set("MXN"),
    next_action_type: "voucher",
    required_fields: LOCAL_FIELDS,
    document: "curp_or_rfc"
  },
  {
    code: "spei",
    countries: set("MX"),
    currencies: set("MXN"),
    next_action_type: "bank_transfer",
    required_fields: LOCAL_FIELDS,
    document: "curp_or_rfc"
  },
  { code: "crypto", countries: undefined, currencies: set("USD", "EUR"), next_action_type: "qr", required_fields: [] }
]

const BY_CODE = new Map(PAYMENT_METHODS.map((m) => [m.code, m]))

/** The catalog's method with this code, if any. */
export const findMethod = (code: string): PaymentMethod | undefined => BY_CODE.get(code)

/** Whether the method is offered for this country and currency. */
export const routable = (method: PaymentMethod, country: string, currency: string): boolean =>
  (method.countries === undefined || method.countries.has(country)) &&
  (method.currencies === undefined || method.currencies.has(currency))

/** Methods live for a country and currency, in catalog order. */
export const methodsFor = (country: string, currency: string): ReadonlyArray<PaymentMethod> =>
  PAYMENT_METHODS.filter((m) => routable(m, country, currency))

/**
 * Where a currency is at home, for routing a checkout session that names no country (contract.md).
 * ISO 4217 codes start with their country's code; the euro is routed as the Netherlands, so that
 * iDEAL is offered beside cards and PayPal.
 */
export const homeCountry = (currency: string): string => (currency === "EUR" ? "NL" : currency.slice(0, 2))
