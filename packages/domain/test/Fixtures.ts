/**
 * Records as the domain's births make them, for the domain's pure tests: an order, an attempt under
 * it, a checkout session and a channel, each with the fields a test changes given as overrides.
 */
import type { Channel } from "../src/channels/Channel.ts"
import type { AccountId, ChannelId, CheckoutSessionId, OrderId, TransactionId } from "../src/kernel/Ids.ts"
import * as OrderAggregate from "../src/payments/Order.ts"
import type { Order, Transaction } from "../src/payments/Payment.ts"
import * as Txn from "../src/payments/Transaction.ts"
import * as Session from "../src/sessions/CheckoutSession.ts"

export const T0 = "2026-11-01T10:00:00.000Z"
export const T1 = "2026-11-01T10:00:01.000Z"

export const order = (overrides: Partial<Order> = {}): Order => ({
  ...OrderAggregate.born({
    id: "ord_1" as OrderId,
    owner: { id: "acct_1" as AccountId, mode: "test" },
    subtype: "direct_payment",
    merchant_reference: "r-1",
    amount: 1000,
    currency: "USD",
    country: "US",
    payment_method: "card",
    capture_method: "automatic",
    processing_profile: null,
    created_at: T0
  }),
  ...overrides
})

export const txn = (overrides: Partial<Transaction> = {}): Transaction => ({
  ...Txn.born({
    id: "txn_1" as TransactionId,
    order_id: "ord_1" as OrderId,
    account_id: "acct_1" as AccountId,
    livemode: false,
    kind: "payment",
    amount: 1000,
    currency: "USD",
    payment_method: "card",
    processing_profile: null,
    provider: "sandbox",
    channel_id: null,
    created_at: T0
  }),
  ...overrides
})

export const session = (overrides: Partial<Session.CheckoutSession> = {}): Session.CheckoutSession => ({
  ...Session.born({
    id: "cs_1" as CheckoutSessionId,
    account_id: "acct_1" as AccountId,
    livemode: false,
    order_id: "ord_1" as OrderId,
    merchant_reference: "r-1",
    amount: 1000,
    currency: "USD",
    country: null,
    capture_method: "automatic",
    payment_methods: null,
    straight_through: false,
    max_payment_attempts: 3,
    attempts: 1,
    expires_at: T1,
    transaction_id: null,
    next_action: null,
    customer: null,
    success_url: "https://m.example/ok",
    cancel_url: "https://m.example/no",
    locale: null,
    line_items: null,
    collect_address: false,
    collect_phone: false,
    processing_profile: null,
    created_at: T0
  }),
  ...overrides
})

/** An enabled live channel of an account taking everything its provider offers (Channel.ts's record, as listed). */
export const channel = (id: string, overrides: Partial<Channel> = {}): Channel => ({
  id: id as ChannelId,
  account_id: "acct_fixture0000000000000" as AccountId,
  provider: "stripe",
  mode: "live",
  methods: null,
  currencies: null,
  countries: null,
  priority: 0,
  status: "enabled",
  created_at: T0,
  updated_at: T0,
  ...overrides
})
