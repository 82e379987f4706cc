/**
 * The card instrument of a payment attempt (spec, Payment instrument): the vaulted card's
 * non-sensitive fields, its issuer facts from the provider's BIN lookup, and what the payment says
 * of its holder. Fields with no value are omitted; the card token and expiry never appear.
 */
import { Effect, Option } from "effect"
import type { CustomerRecord } from "../../customers/Customer.ts"
import { type Customer, type PaymentInstrument, presentAddress, type Transaction } from "../Payment.ts"
import { type BinFacts, PaymentProvider } from "../ProviderPorts.ts"
import { CardVault, type VaultedCard } from "../../cards/CardPorts.ts"

export interface Holder {
  readonly email?: string | undefined
  readonly phone?: string | undefined
  readonly document_id?: string | undefined
  readonly address?: Customer["address"] | undefined
}

export interface InstrumentFacts {
  /** `pi_…`: the order's instrument id (`instrumentId`). */
  readonly id?: string | undefined
  readonly issuer?: BinFacts | undefined
  readonly holder?: Holder | undefined
}

/** Drops the keys whose value is undefined, so that "fields with no value are omitted". */
const present = <A extends object>(fields: A): A =>
  Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as A

/** `country`: the issuer's country when the caller already knows it; else the BIN lookup's. */
export const cardInstrument = (card: VaultedCard, country: string | undefined, facts: InstrumentFacts = {}): PaymentInstrument => {
  return present({
    id: facts.id,
    type: "card" as const,
    country_code: country ?? facts.issuer?.country_code,
    holder_name: card.holder_name ?? undefined,
    holder_email: facts.holder?.email,
    holder_phone: facts.holder?.phone,
    document_id: facts.holder?.document_id,
    holder_address: presentAddress(facts.holder?.address),
    card_brand: card.brand,
    last4_digits: card.last4,
    bin: card.bin,
    card_funding: card.funding,
    // spec: "lowercase tier"
    card_product: facts.issuer?.card_product?.toLowerCase(),
    issuer_name: facts.issuer?.issuer_name
  })
}

/**
 * The issuer facts of a BIN. They are optional on an instrument (omitted when unknown), so a
 * provider that cannot answer now leaves them out rather than failing the payment.
 */
export const issuerOf = (bin: string) =>
  Effect.gen(function*() {
    const provider = yield* PaymentProvider
    return yield* provider.binLookup(bin).pipe(Effect.catchTag("ProviderUnavailable", () => Effect.succeed<BinFacts>({})))
  })

/** The issuer facts of a vaulted card, looked up before a unit of work (no provider call inside one); none for an unknown token. */
export const issuerOfToken = (accountId: string, token: string) =>
  Effect.gen(function*() {
    const card = yield* (yield* CardVault).find(accountId as VaultedCard["account_id"], token)
    return Option.isSome(card) ? yield* issuerOf(card.value.bin) : undefined
  })

/** The holder as the payment knows it: its own `customer` first, then the customer record it names. */
export const holderOf = (customer: Customer | null, record: CustomerRecord | undefined, documentId: string | undefined): Holder => ({
  email: customer?.email ?? record?.email ?? undefined,
  phone: customer?.phone ?? record?.phone ?? undefined,
  document_id: documentId,
  address: customer?.address
})

/**
 * The order's instrument id for this card: the one an earlier attempt of the order made on the same
 * card (`sameCard`), else undefined (the caller mints one).
 */
export const earlierInstrumentId = (earlier: ReadonlyArray<Transaction>, sameCard: boolean): string | undefined =>
  sameCard ? [...earlier].reverse().find((t) => t.payment_instrument?.type === "card" && t.payment_instrument.id !== undefined)?.payment_instrument?.id : undefined
