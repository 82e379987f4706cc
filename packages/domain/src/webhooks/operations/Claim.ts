/**
 * Operation: claim due deliveries for this process's dispatcher, within what is left of each
 * endpoint's and account's bound, under a lease (WebhookDeliveryRepo.claimDue: a committed unit of
 * work of its own, before any POST), and read their endpoints and accounts once for the batch.
 */
import { Clock, Effect, Option, Random } from "effect"
import type { Account } from "../../accounts/Account.ts"
import type { AccountId } from "../../kernel/Ids.ts"
import { AccountRepo } from "../../accounts/AccountPorts.ts"
import { isoOf } from "../../kernel/Time.ts"
import { ATTEMPT_TIMEOUT_MS, type WebhookDelivery, type WebhookEndpoint } from "../Webhook.ts"
import { WebhookDeliveryRepo, WebhookEndpointRepo } from "../WebhookPorts.ts"

/** How the dispatcher bounds its work: concurrency overall, per endpoint and per account, and the lease. */
export interface DispatchOptions {
  /** Deliveries in flight at once in this process. */
  readonly concurrency: number
  /** Deliveries in flight at once per endpoint, so one slow endpoint cannot hold every slot. */
  readonly perEndpoint: number
  /**
   * Deliveries in flight at once per account, below `concurrency`: one tenant's hanging endpoints
   * (16 of them × perEndpoint would be every slot) leave the others' deliveries slots to run in.
   */
  readonly perAccount: number
  /** How long a claimed delivery stays with its worker before another may take it. */
  readonly leaseMs: number
}

/** The dispatcher's bounds unless configured: 64 at once, 16 per endpoint, 32 per account. */
export const DEFAULT_DISPATCH: DispatchOptions = {
  concurrency: 64,
  perEndpoint: 16,
  perAccount: 32,
  leaseMs: ATTEMPT_TIMEOUT_MS + 15_000
}

/** This process's attempts under way, by endpoint and by account. */
export interface InFlight {
  readonly endpoints: Map<string, number>
  readonly accounts: Map<string, number>
}

export const emptyInFlight = (): InFlight => ({ endpoints: new Map(), accounts: new Map() })

/** A claim's endpoints and accounts, read once for all its deliveries (`None`: gone). */
export interface ClaimContext {
  readonly endpoints: Map<string, Option.Option<WebhookEndpoint>>
  readonly accounts: Map<string, Option.Option<Account>>
}

export const emptyContext = (): ClaimContext => ({ endpoints: new Map(), accounts: new Map() })

/** The ids whose count reached `bound` (pure): the claim leaves them out. */
export const saturated = (counts: ReadonlyMap<string, number>, bound: number) =>
  [...counts].filter(([, n]) => n >= bound).map(([id]) => id)

/** Counts the claimed deliveries in this process's attempts under way. */
const hold = (inFlight: InFlight, taken: ReadonlyArray<WebhookDelivery>) => {
  for (const d of taken) {
    inFlight.endpoints.set(d.endpoint_id, (inFlight.endpoints.get(d.endpoint_id) ?? 0) + 1)
    inFlight.accounts.set(d.account_id, (inFlight.accounts.get(d.account_id) ?? 0) + 1)
  }
}

/** An attempt's endpoint and account slots freed. */
export const release = (inFlight: InFlight, delivery: WebhookDelivery) => {
  const decrement = (counts: Map<string, number>, key: string) => {
    const n = (counts.get(key) ?? 1) - 1
    if (n <= 0) counts.delete(key)
    else counts.set(key, n)
  }
  decrement(inFlight.endpoints, delivery.endpoint_id)
  decrement(inFlight.accounts, delivery.account_id)
}

/**
 * Claims due deliveries within what is left of each endpoint's and account's bound (the claim
 * counts this process's attempts in flight, so all it returns can run at once), and reads their
 * endpoints and accounts once for the batch. `inFlight` counts this process's running attempts;
 * what is returned is counted in it.
 */
export const claim = (options: DispatchOptions, inFlight: InFlight, capacity: number) =>
  Effect.gen(function*() {
    const none = { taken: [] as ReadonlyArray<WebhookDelivery>, context: emptyContext() }
    if (capacity <= 0) return none
    const endpoints = yield* WebhookEndpointRepo
    const accounts = yield* AccountRepo
    const at = yield* Clock.currentTimeMillis
    const taken = yield* (yield* WebhookDeliveryRepo).claimDue({
      now: isoOf(at),
      leaseUntil: isoOf(at + options.leaseMs),
      lease: `${at.toString(36)}.${(yield* Random.nextInt).toString(36)}.${(yield* Random.nextInt).toString(36)}`,
      limit: capacity,
      perAccount: options.perAccount,
      perEndpoint: options.perEndpoint,
      excludeEndpoints: saturated(inFlight.endpoints, options.perEndpoint),
      excludeAccounts: saturated(inFlight.accounts, options.perAccount),
      busy: { endpoints: [...inFlight.endpoints], accounts: [...inFlight.accounts] }
    })
    if (taken.length === 0) return none
    hold(inFlight, taken)
    const context = emptyContext()
    for (const id of new Set(taken.map((d) => d.endpoint_id))) context.endpoints.set(id, yield* endpoints.findAny(id))
    for (const id of new Set(taken.map((d) => d.account_id))) context.accounts.set(id, yield* accounts.findById(id as AccountId))
    return { taken, context }
  })
