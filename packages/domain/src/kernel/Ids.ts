/**
 * Identifiers: opaque, prefixed, random strings (`acct_…`, `ord_…`), each a branded schema so an
 * order id can never be passed where a transaction id is expected.
 */
import { Context, type Effect } from "effect"
import type {
  AccountId,
  CardToken,
  ChannelId,
  CheckoutSessionId,
  CustomerId,
  EventId,
  IdKind,
  OrderId,
  PaymentInstrumentId,
  TransactionId,
  WebhookDeliveryId,
  WebhookEndpointId
} from "@tender/api/Ids"

// The id schemas are the wire's (@tender/api/Ids): one home, which the records here carry.
export {
  AccountId,
  CardToken,
  ChannelId,
  CheckoutSessionId,
  CustomerId,
  EventId,
  ID_PREFIXES,
  type IdKind,
  OrderId,
  PaymentInstrumentId,
  TransactionId,
  WebhookDeliveryId,
  WebhookEndpointId
} from "@tender/api/Ids"

/**
 * Port: where randomness comes from. Ids are made here (not in adapters) so tests can make them
 * deterministic; the live adapter uses the platform's CSPRNG.
 */
interface BrandedIds {
  readonly account: AccountId
  readonly order: OrderId
  readonly transaction: TransactionId
  readonly checkoutSession: CheckoutSessionId
  readonly cardToken: CardToken
  readonly paymentInstrument: PaymentInstrumentId
  readonly customer: CustomerId
  readonly webhookEndpoint: WebhookEndpointId
  readonly webhookDelivery: WebhookDeliveryId
  readonly event: EventId
  readonly channel: ChannelId
}

/** The id type of a kind: its brand where the records carry one. */
export type IdOf<K extends IdKind> = K extends keyof BrandedIds ? BrandedIds[K] : string

/** Port: where ids and random bytes come from, so tests can make them deterministic. */
export class Ids extends Context.Service<Ids, {
  /** A fresh id of a kind, e.g. `make("order")` → `ord_…` (an `OrderId`). */
  make<K extends IdKind>(kind: K): Effect.Effect<IdOf<K>>
  /** `n` random bytes, hex-encoded (keys, secrets). */
  randomHex(bytes: number): Effect.Effect<string>
}>()("@tender/domain/kernel/Ids") {}
