/**
 * The console's reads over the memory tables, matching ConsoleReadsPg row for row (one contract
 * suite runs both): every kind's search restricted to the granted accounts, newest first with the
 * same keyset paging, and a payment's story from one consistent snapshot.
 */
import {
  type ConsoleQuery,
  ConsoleReads,
  type ConsoleRow,
  ConsoleSearch,
  ConsoleStory,
  type MoneyOut,
  type Payment,
  type SearchKind
} from "@tender/domain"
import { Effect, Layer, Option } from "effect"
import { customers } from "./CustomerRepoMemory.ts"
import { events, positions } from "./EventRepoMemory.ts"

/** The `next_action.type` an event's data carries, as PostgreSQL's `data->'next_action'->>'type'`. */
const nextActionType = (data: Record<string, unknown>): string | null => {
  const action = data["next_action"]
  const type = typeof action === "object" && action !== null ? (action as Record<string, unknown>)["type"] : undefined
  return typeof type === "string" ? type : null
}
import { MemoryDatabase, type Reader } from "./MemoryDatabase.ts"
import { orders } from "./OrderRepoMemory.ts"
import { payouts, refunds } from "./OutflowRepoMemory.ts"
import { sessions } from "./CheckoutSessionRepoMemory.ts"
import { instant, keyset, oldestFirst } from "./SearchMemory.ts"
import { transactions } from "./TransactionRepoMemory.ts"
import { transfers } from "./TransferRepoMemory.ts"
import { attempts, deliveries } from "./WebhookDeliveryRepoMemory.ts"
import { endpoints } from "./WebhookEndpointRepoMemory.ts"

/** A row and what its filters read beyond the row: the ids `q` matches, and (orders) its transactions. */
interface Candidate extends ConsoleRow {
  /** Ids `q` matches: the row's own and, for kinds that belong to one, its order's. */
  readonly ids: ReadonlyArray<string>
  /** Channel ids and provider names the row went through (an order: any of its transactions'). */
  readonly channels: ReadonlyArray<string>
  /** Every last four the row's cards show (an order: any of its transactions'). */
  readonly last4s: ReadonlyArray<string>
}

const last4Of = (instrument: { readonly type?: string; readonly last4_digits?: string | undefined } | null) =>
  instrument?.type === "card" ? instrument.last4_digits ?? null : null

const row = (kind: SearchKind, fields: Partial<ConsoleRow> & Pick<ConsoleRow, "id" | "account_id" | "created_at">): ConsoleRow => ({
  kind,
  status: null,
  amount: null,
  currency: null,
  method: null,
  channel: null,
  reference: null,
  last4: null,
  order_id: null,
  label: null,
  ...fields
})

const channelOf = (t: Payment.Transaction) => t.channel_id ?? t.provider

/** Every row of a kind, as the search sees it. */
const candidates = (r: Reader, kind: SearchKind): Iterable<Candidate> => {
  const txnsByOrder = () => {
    const map = new Map<string, Array<Payment.Transaction>>()
    for (const t of [...r.get(transactions).values()].sort(oldestFirst)) {
      const list = map.get(t.order_id) ?? []
      list.push(t)
      map.set(t.order_id, list)
    }
    return map
  }
  switch (kind) {
    case "orders": {
      const byOrder = txnsByOrder()
      return [...r.get(orders).values()].map((o) => {
        const txns = byOrder.get(o.id) ?? []
        const last = txns.at(-1)
        const last4s = txns.map((t) => last4Of(t.payment_instrument)).filter((l) => l !== null)
        return {
          ...row("orders", {
            id: o.id,
            account_id: o.account_id,
            created_at: o.created_at,
            status: o.status,
            amount: o.amount,
            currency: o.currency,
            method: o.payment_method,
            channel: last === undefined ? null : channelOf(last),
            reference: o.merchant_reference,
            last4: last4Of(o.payment_instrument) ?? last4s.at(-1) ?? null,
            order_id: o.id
          }),
          ids: [o.id],
          channels: txns.flatMap((t) => [t.provider, ...(t.channel_id === null ? [] : [t.channel_id])]),
          last4s
        }
      })
    }
    case "transactions": {
      const orderOf = r.get(orders)
      return [...r.get(transactions).values()].map((t) => {
        const last4 = last4Of(t.payment_instrument)
        return {
          ...row("transactions", {
            id: t.id,
            account_id: t.account_id,
            created_at: t.created_at,
            status: t.status,
            amount: t.amount,
            currency: t.currency,
            method: t.payment_method,
            channel: channelOf(t),
            reference: orderOf.get(t.order_id)?.merchant_reference ?? null,
            last4,
            order_id: t.order_id
          }),
          ids: [t.id, t.order_id],
          channels: [t.provider, ...(t.channel_id === null ? [] : [t.channel_id])],
          last4s: last4 === null ? [] : [last4]
        }
      })
    }
    case "sessions":
      return [...r.get(sessions).values()].map((s) => ({
        ...row("sessions", {
          id: s.id,
          account_id: s.account_id,
          created_at: s.created_at,
          status: s.status,
          amount: s.amount,
          currency: s.currency,
          reference: s.merchant_reference,
          order_id: s.order_id
        }),
        ids: [s.id, s.order_id],
        channels: [],
        last4s: []
      }))
    case "refunds":
    case "payouts": {
      const records: Iterable<MoneyOut.Refund | MoneyOut.Payout> = kind === "refunds" ? r.get(refunds).values() : r.get(payouts).values()
      return [...records].map((o) => ({
        ...row(kind, {
          id: o.id,
          account_id: o.account_id,
          created_at: o.created_at,
          status: o.status,
          amount: o.amount,
          currency: o.currency,
          reference: "refund_reference" in o ? o.refund_reference : o.payout_reference,
          order_id: o.order_id
        }),
        ids: [o.id, o.order_id],
        channels: [],
        last4s: []
      }))
    }
    case "transfers":
      return [...r.get(transfers).values()].map((t) => ({
        ...row("transfers", {
          id: t.id,
          account_id: t.account_id,
          created_at: t.created_at,
          status: t.status,
          amount: t.amount,
          currency: t.currency,
          method: t.payment_method,
          channel: t.channel_id,
          order_id: t.order_id
        }),
        ids: [t.id, t.order_id],
        channels: t.channel_id === null ? [] : [t.channel_id],
        last4s: []
      }))
    case "customers":
      return [...r.get(customers).values()].map((c) => ({
        ...row("customers", { id: c.id, account_id: c.account_id, created_at: c.created_at, label: c.name ?? c.email }),
        ids: [c.id],
        channels: [],
        last4s: []
      }))
  }
}

/** Whether a row passes every filter of the query (validation already refused filters the kind lacks). */
const matches = (query: ConsoleQuery) => {
  const from = query.created_from === undefined ? undefined : instant(query.created_from)
  const to = query.created_to === undefined ? undefined : instant(query.created_to)
  return (c: Candidate) =>
    (query.accounts === "all" || query.accounts.includes(c.account_id)) &&
    (query.id === undefined || c.ids.includes(query.id)) &&
    (query.reference === undefined || c.reference === query.reference) &&
    (query.amount === undefined || c.amount === query.amount) &&
    (query.currency === undefined || c.currency === query.currency) &&
    (query.status === undefined || c.status === query.status) &&
    (query.method === undefined || c.method === query.method) &&
    (query.channel === undefined || c.channels.includes(query.channel)) &&
    (query.last4 === undefined || c.last4s.includes(query.last4)) &&
    (from === undefined || instant(c.created_at) >= from) &&
    (to === undefined || instant(c.created_at) < to)
}

const strip = ({ channels: _c, ids: _i, last4s: _l, ...rest }: Candidate): ConsoleRow => rest

export const layer: Layer.Layer<ConsoleReads, never, MemoryDatabase> = Layer.effect(
  ConsoleReads,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    return ConsoleReads.of({
      search: (query) =>
        db.read((r) => {
          const page = keyset(candidates(r, query.kind), matches(query), query)
          return { data: page.data.map(strip), has_more: page.has_more }
        }),
      story: (orderId) =>
        db.read((r) => {
          const order = r.get(orders).get(orderId)
          if (order === undefined) return Option.none()
          const txns = [...r.get(transactions).values()].filter((t) => t.order_id === orderId).sort(oldestFirst)
          const outflows = [
            ...[...r.get(refunds).values()].filter((o) => o.order_id === orderId).map((o) => ({ kind: "refund" as const, o })),
            ...[...r.get(payouts).values()].filter((o) => o.order_id === orderId).map((o) => ({ kind: "payout" as const, o }))
          ].map(({ kind, o }) => ({
            kind,
            id: o.id,
            status: o.status,
            amount: o.amount,
            currency: o.currency,
            created_at: o.created_at,
            transaction_id: o.transaction_id
          }))
          // Events of one millisecond in the order they were recorded (their feed position), as PostgreSQL's `seq`.
          const position = r.get(positions)
          const orderEvents = [...r.get(events).values()].filter((e) => e.order_id === orderId).sort((a, b) =>
            instant(a.created_at) - instant(b.created_at) || Number((position.get(a.id) ?? 0n) - (position.get(b.id) ?? 0n))
          )
          const eventIds = new Set(orderEvents.map((e) => e.id))
          const orderDeliveries = [...r.get(deliveries).values()].filter((d) => eventIds.has(d.event_id))
          const endpointOf = r.get(endpoints)
          return Option.some(ConsoleStory.storyOf({
            order: {
              id: order.id,
              account_id: order.account_id,
              status: order.status,
              amount: order.amount,
              currency: order.currency,
              refunded_amount: order.refunded_amount,
              payment_method: order.payment_method,
              capture_method: order.capture_method,
              merchant_reference: order.merchant_reference,
              processing_profile: order.processing_profile,
              livemode: order.livemode,
              created_at: order.created_at,
              updated_at: order.updated_at
            },
            transactions: txns,
            outflows,
            events: orderEvents.map((e) => ({ id: e.id, type: e.type, created_at: e.created_at, next_action_type: nextActionType(e.data) })),
            deliveries: orderDeliveries.map((d) => ({
              id: d.id,
              event_id: d.event_id,
              endpoint_id: d.endpoint_id,
              endpoint_url: endpointOf.get(d.endpoint_id)?.url ?? null,
              status: d.status,
              next_attempt_at: d.next_attempt_at,
              created_at: d.created_at
            })),
            attempts: orderDeliveries.flatMap((d) => r.get(attempts).get(d.id) ?? [])
          }))
        }),
      locate: (id) =>
        db.read((r) => {
          const kind = ConsoleSearch.kindOfId(id)
          const found: { readonly account_id: string; readonly order_id: string | null } | undefined = (() => {
            switch (kind) {
              case "orders": {
                const order = r.get(orders).get(id)
                return order && { account_id: order.account_id, order_id: order.id }
              }
              case "transactions":
                return r.get(transactions).get(id)
              case "sessions":
                return r.get(sessions).get(id)
              case "refunds":
                return r.get(refunds).get(id)
              case "payouts":
                return r.get(payouts).get(id)
              case "transfers":
                return r.get(transfers).get(id)
              case "customers": {
                const customer = r.get(customers).get(id)
                return customer && { account_id: customer.account_id, order_id: null }
              }
              case "event":
                return r.get(events).get(id)
              case undefined:
                return undefined
            }
          })()
          return kind === undefined || found === undefined
            ? Option.none()
            : Option.some({ kind, account_id: found.account_id, order_id: found.order_id })
        })
    })
  })
)
