/**
 * The operator console's reads (issue 26): one search over every kind of object an operator looks
 * for, across the accounts they are granted, and the whole story of one payment. Reads only: every
 * action goes through the use cases the API and CLI use.
 *
 * Nothing here carries a card number, CVC, client secret or signing secret: rows and the story hold
 * the non-sensitive card fields (brand, last four, expiry, funding, country) only.
 */
import { Context, type Effect, type Option } from "effect"
import type { Page } from "../kernel/Search.ts"

/** The kinds of object the console searches, in the form's order. */
export const SEARCH_KINDS = ["orders", "transactions", "sessions", "refunds", "payouts", "transfers", "customers"] as const
/** One of SEARCH_KINDS. */
export type SearchKind = (typeof SEARCH_KINDS)[number]

/** A validated console search. Filters a kind does not have are refused by validation, not ignored. */
export interface ConsoleQuery {
  readonly kind: SearchKind
  /** The accounts searched: the operator's grant. */
  readonly accounts: ReadonlyArray<string> | "all"
  /** Exact id of the kind searched (or of its order, for transactions, refunds and payouts). */
  readonly id?: string | undefined
  readonly reference?: string | undefined
  /** Exact amount in minor units; only with `currency`. */
  readonly amount?: number | undefined
  readonly currency?: string | undefined
  readonly status?: string | undefined
  /** Payment method code (`card`, `pix`, …). */
  readonly method?: string | undefined
  /** A channel id (`ch_…`) or provider name (`sandbox`, `stripe`, `adyen`). */
  readonly channel?: string | undefined
  readonly created_from?: string | undefined
  readonly created_to?: string | undefined
  /** The card's last four digits. */
  readonly last4?: string | undefined
  readonly limit: number
  readonly cursor?: { readonly created_at: string; readonly id: string } | undefined
}

/** One result row, whatever its kind; fields a kind lacks are null. */
export interface ConsoleRow {
  readonly kind: SearchKind
  readonly id: string
  readonly account_id: string
  readonly created_at: string
  readonly status: string | null
  readonly amount: number | null
  readonly currency: string | null
  readonly method: string | null
  readonly channel: string | null
  readonly reference: string | null
  readonly last4: string | null
  /** The order the row belongs to (itself for an order): the story page to link to. */
  readonly order_id: string | null
  /** Customers: name or email, for the table. */
  readonly label: string | null
}

/** The non-sensitive card fields a transaction's instrument holds. */
export interface CardFacts {
  readonly brand: string | null
  readonly last4: string | null
  readonly exp_month: number | null
  readonly exp_year: number | null
  readonly funding: string | null
  readonly country: string | null
}

/** One transaction of the timeline: what it was, how it ended, where it went and why. */
export interface StoryTransaction {
  readonly id: string
  readonly kind: string
  readonly status: string
  readonly amount: number
  readonly currency: string
  readonly created_at: string
  readonly updated_at: string
  readonly parent_transaction_id: string | null
  readonly provider: string
  readonly channel_id: string | null
  readonly provider_transaction_id: string | null
  readonly decline_code: string | null
  /** 3-D Secure: required, approved or denied; null when none was asked for. */
  readonly three_ds: string | null
  /**
   * How the channel was chosen, as the records say: the channel and the processing profile that
   * pinned it; for an order of several attempts, which one this is and how the one before ended
   * ("attempt 2 of the cascade, after channel ch_… (stripe) unreachable").
   */
  readonly routing: string | null
  readonly card: CardFacts | null
}

/** One attempt of a webhook delivery, as the receiver answered it. */
export interface StoryAttempt {
  readonly at: string
  readonly status_code: number | null
  readonly latency_ms: number | null
  /** The receiver's answer body (cut to its bound) or the transport error. */
  readonly response: string | null
  readonly error: string | null
}

/** One webhook delivery of an event to an endpoint, with its attempts. */
export interface StoryDelivery {
  readonly id: string
  readonly endpoint_id: string
  readonly endpoint_url: string
  readonly status: string
  readonly next_attempt_at: string | null
  readonly attempts: ReadonlyArray<StoryAttempt>
}

/** One event of the order, with its webhook deliveries. */
export interface StoryEvent {
  readonly id: string
  readonly type: string
  readonly created_at: string
  readonly deliveries: ReadonlyArray<StoryDelivery>
}

/** A refund or payout of the order. */
export interface StoryOutflow {
  readonly kind: "refund" | "payout"
  readonly id: string
  readonly status: string
  readonly amount: number
  readonly currency: string
  readonly created_at: string
  readonly transaction_id: string | null
}

/** Everything an operator needs to tell a payment's story, oldest first in each list. */
export interface PaymentStory {
  readonly order: {
    readonly id: string
    readonly account_id: string
    readonly status: string
    readonly amount: number
    readonly currency: string
    readonly captured_amount: number
    readonly refunded_amount: number
    readonly payment_method: string
    readonly capture_method: string
    readonly merchant_reference: string | null
    readonly processing_profile: string | null
    readonly livemode: boolean
    readonly created_at: string
    readonly updated_at: string
  }
  readonly transactions: ReadonlyArray<StoryTransaction>
  readonly outflows: ReadonlyArray<StoryOutflow>
  readonly events: ReadonlyArray<StoryEvent>
  /** 3-D Secure as the order's events tell it: each challenge asked, then what came of it; none without 3-D Secure. */
  readonly three_ds_steps: ReadonlyArray<StoryStep>
}

/** One step of a story told from its events: when, and what happened. */
export interface StoryStep {
  readonly at: string
  readonly step: string
}

/** Port: the console's read model (adapters: PostgreSQL and memory, one contract suite). */
export class ConsoleReads extends Context.Service<ConsoleReads, {
  /** A page of rows of the query's kind, newest first, only of the query's accounts. */
  search(query: ConsoleQuery): Effect.Effect<Page<ConsoleRow>>
  /** The order's story, whatever its account (the caller checks the grant on `order.account_id`). */
  story(orderId: string): Effect.Effect<Option.Option<PaymentStory>>
  /** Which kind an id is and the order it belongs to (deep links `/console/find/<id>`); none when unknown. */
  locate(id: string): Effect.Effect<Option.Option<{ readonly kind: SearchKind | "event"; readonly account_id: string; readonly order_id: string | null }>>
}>()("@tender/domain/console/ConsoleReads") {}
