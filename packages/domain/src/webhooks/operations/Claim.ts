/**
 * Operation: claim due deliveries for this process's dispatcher, within what is left of each
 * endpoint's and account's bound, under a lease (WebhookDeliveryRepo.claimDue: a committed unit of
 * work of its own, before any POST), each with its event, endpoint and signing secrets read in the
 * same statement, and each event's envelope encoded once for all its deliveries.
 */
import { Clock, Effect, Option, Random } from "effect"
import { isoOf } from "../../kernel/Time.ts"
import { ATTEMPT_TIMEOUT_MS, type WebhookDelivery } from "../Webhook.ts"
import { type ClaimedDelivery, WebhookDeliveryRepo } from "../WebhookPorts.ts"
import { envelopeOf } from "../WebhookViews.ts"

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

/**
 * A claimed delivery ready to attempt: what the claim read with it, and its event's envelope as the
 * POST's body (`undefined`: the event is gone), encoded once per event of the claim (a fan-out's
 * deliveries share it).
 */
export interface Claimed extends ClaimedDelivery {
  readonly body: Uint8Array | undefined
}

const utf8 = new TextEncoder()

/** Each delivery with its event's envelope, built once per event (pure). */
export const withBodies = (taken: ReadonlyArray<ClaimedDelivery>): ReadonlyArray<Claimed> => {
  const bodies = new Map<string, Uint8Array>()
  return taken.map((claimed) => {
    if (Option.isNone(claimed.event)) return { ...claimed, body: undefined }
    let body = bodies.get(claimed.event.value.id)
    if (body === undefined) {
      body = utf8.encode(JSON.stringify(envelopeOf(claimed.event.value)))
      bodies.set(claimed.event.value.id, body)
    }
    return { ...claimed, body }
  })
}

/** The ids whose count reached `bound` (pure): the claim leaves them out. */
export const saturated = (counts: ReadonlyMap<string, number>, bound: number) =>
  [...counts].filter(([, n]) => n >= bound).map(([id]) => id)

/** Counts the claimed deliveries in this process's attempts under way. */
const hold = (inFlight: InFlight, taken: ReadonlyArray<ClaimedDelivery>) => {
  for (const { delivery: d } of taken) {
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
 * counts this process's attempts in flight, so all it returns can run at once), each with what its
 * attempt needs, read in the same statement. `inFlight` counts this process's running attempts;
 * what is returned is counted in it.
 */
export const claim = (options: DispatchOptions, inFlight: InFlight, capacity: number) =>
  Effect.gen(function*() {
    if (capacity <= 0) return []
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
    hold(inFlight, taken)
    return withBodies(taken)
  })
