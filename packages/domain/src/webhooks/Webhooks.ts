/**
 * The Webhooks use case: a facade over the operations (operations/*): the merchant's endpoints, the
 * delivery log, manual retries, the operator's event log, and the dispatcher that delivers each
 * delivery at least once on contract.md's schedule. The outbox that fans events out is the `Outbox`
 * service (operations/Record.ts), which other use cases call inside their units of work. This layer
 * only captures the services the operations need.
 */
import { Context, Effect, Layer } from "effect"
import type { Account } from "../accounts/Account.ts"
import type { Conflict, NotFound, ValidationFailed, WebhookDeliveryNotFound, WebhookDeliveryNotRetryable, WebhookLimitExceeded, WebhookNotFound } from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import { runWith } from "../kernel/Seam.ts"
import { AccountRepo } from "../accounts/AccountPorts.ts"
import { UnitOfWork } from "../kernel/Ports.ts"
import type { SearchResult } from "../kernel/Search.ts"
import { EventRepo } from "../payments/PaymentPorts.ts"
import { HostResolver, PayloadSigner, WebhookDeliveryRepo, WebhookEndpointRepo, WebhookTransport } from "./WebhookPorts.ts"
import { WebhookPrivateReceivers, WebhookReceiverPolicy } from "./WebhookReceivers.ts"
import type { CreateEndpointInput, DeliverySearchInput, EventSearchInput, UpdateEndpointInput } from "./WebhookRequest.ts"
import type { AttemptView, DeliveryView, EndpointView, Envelope } from "./WebhookViews.ts"
import type { FeedInput } from "./EventFeed.ts"
import type { DispatchOptions } from "./operations/Claim.ts"
import { createEndpoint } from "./operations/CreateEndpoint.ts"
import { deleteEndpoint } from "./operations/DeleteEndpoint.ts"
import { dispatchDue, type IdleOptions, runDispatcher } from "./operations/Dispatch.ts"
import { getDelivery, listDeliveries } from "./operations/ListDeliveries.ts"
import { getEndpoint, listEndpoints } from "./operations/ListEndpoints.ts"
import { FeedWaiters, getAccountEvent, readFeed, resendEvent } from "./operations/EventFeed.ts"
import { getEvent, listEvents } from "./operations/ListEvents.ts"
import { redeliver } from "./operations/Redeliver.ts"
import { updateEndpoint } from "./operations/UpdateEndpoint.ts"

export { DEFAULT_DISPATCH, type DispatchOptions } from "./operations/Claim.ts"
export { DEFAULT_IDLE, type IdleOptions } from "./operations/Dispatch.ts"
export { type EventDraft, Outbox, withoutClientSecret } from "./operations/Record.ts"

/** The services the operations need, captured when the layer is built (kernel/Seam.ts). */
type Needs = WebhookEndpointRepo | WebhookDeliveryRepo | EventRepo | AccountRepo | WebhookTransport | HostResolver | PayloadSigner | Ids | UnitOfWork

/** The Webhooks use case: manage endpoints, list events and deliveries, retry and dispatch deliveries. */
export class Webhooks extends Context.Service<Webhooks, {
  /** Registers an endpoint (its URL checked, the account's limit enforced). */
  createEndpoint(account: Account, input: CreateEndpointInput): Effect.Effect<EndpointView, ValidationFailed | WebhookLimitExceeded>
  /** The account's endpoints, oldest first. */
  listEndpoints(account: Account): Effect.Effect<{ readonly data: ReadonlyArray<EndpointView> }>
  /** The account's endpoint with this id. */
  getEndpoint(account: Account, id: string): Effect.Effect<EndpointView, WebhookNotFound>
  /** Changes an endpoint's URL, events, description or status (disabling pauses its deliveries). */
  updateEndpoint(account: Account, id: string, input: UpdateEndpointInput): Effect.Effect<EndpointView, WebhookNotFound | ValidationFailed | Conflict>
  /** Removes an endpoint; its deliveries stay in the log. */
  deleteEndpoint(account: Account, id: string): Effect.Effect<{ readonly id: string; readonly deleted: true }, WebhookNotFound>
  /** A page of deliveries (the account's, or any with no account: the operator). */
  listDeliveries(account: Account | undefined, input: DeliverySearchInput): Effect.Effect<SearchResult<DeliveryView>, ValidationFailed>
  /** A delivery with its attempts (the account's, or any with no account). */
  getDelivery(account: Account | undefined, id: string): Effect.Effect<DeliveryView & { readonly attempts: ReadonlyArray<AttemptView> }, WebhookDeliveryNotFound>
  /**
   * Makes a failed or exhausted delivery due now; anything else is `webhook_delivery_not_retryable`,
   * and one whose attempt is under way (it holds the lease) is `conflict`.
   */
  retryDelivery(account: Account | undefined, id: string): Effect.Effect<DeliveryView, WebhookDeliveryNotFound | WebhookDeliveryNotRetryable | Conflict>
  /** One dispatcher round: claims what is due and delivers it; returns how many attempts ran. */
  dispatchDue(options?: Partial<DispatchOptions>): Effect.Effect<number>
  /** Operator: events of any account, newest first. */
  listEvents(input: EventSearchInput): Effect.Effect<SearchResult<Envelope & { readonly account_id: string }>, ValidationFailed>
  /** Operator: an event of any account, with its deliveries. */
  getEvent(id: string): Effect.Effect<{ readonly event: Envelope & { readonly account_id: string }; readonly deliveries: ReadonlyArray<DeliveryView> }, NotFound>
  /**
   * The account's event feed (EventFeed.ts): its events after the cursor (from about now without
   * one), waiting up to `wait` seconds for a first one (at once past the account's waiting reads
   * bound); `next_cursor` continues it, and nothing is skipped.
   */
  readFeed(account: Account, input: FeedInput): Effect.Effect<{
    readonly data: ReadonlyArray<Envelope>
    readonly next_cursor: string
    readonly has_more: boolean
  }, ValidationFailed>
  /** The account's event with this id, as webhooks carry it. */
  getAccountEvent(account: Account, id: string): Effect.Effect<Envelope, NotFound>
  /**
   * Operator: a new delivery of the event, due now, to the endpoint named (it must be the event's
   * account's), or to each enabled endpoint of the account subscribed to its type.
   */
  resendEvent(id: string, endpointId: string | undefined): Effect.Effect<{
    readonly event: Envelope & { readonly account_id: string }
    readonly deliveries: ReadonlyArray<DeliveryView>
  }, NotFound | WebhookNotFound | ValidationFailed>
  /** The dispatcher, until interrupted: claims as slots free up, attempts run concurrently. */
  runDispatcher(options?: Partial<DispatchOptions & IdleOptions>): Effect.Effect<never>
}>()("@tender/domain/webhooks/Webhooks") {
  static readonly layer = Layer.effect(
    Webhooks,
    Effect.gen(function*() {
      // The ports, and the operator's receiver settings as this layer was built with them (references:
      // they have defaults, so they are no requirement, but picking them fixes their values here).
      const run = runWith<Needs>(
        Context.pick(
          WebhookEndpointRepo,
          WebhookDeliveryRepo,
          EventRepo,
          AccountRepo,
          WebhookTransport,
          HostResolver,
          PayloadSigner,
          Ids,
          UnitOfWork,
          WebhookPrivateReceivers,
          WebhookReceiverPolicy
        )(yield* Effect.context<Needs>())
      )

      // The feed's waiting reads of this process, per account (FeedWaiters: bounded).
      const waiters = new FeedWaiters()

      return Webhooks.of({
        createEndpoint: (account, input) => run(createEndpoint(account, input)),
        listEndpoints: (account) => run(listEndpoints(account)),
        getEndpoint: (account, id) => run(getEndpoint(account, id)),
        updateEndpoint: (account, id, input) => run(updateEndpoint(account, id, input)),
        deleteEndpoint: (account, id) => run(deleteEndpoint(account, id)),
        listDeliveries: (account, input) => run(listDeliveries(account, input)),
        getDelivery: (account, id) => run(getDelivery(account, id)),
        retryDelivery: (account, id) => run(redeliver(account, id)),
        dispatchDue: (options) => run(dispatchDue(options)),
        listEvents: (input) => run(listEvents(input)),
        getEvent: (id) => run(getEvent(id)),
        readFeed: (account, input) => run(readFeed(account, input, waiters)),
        getAccountEvent: (account, id) => run(getAccountEvent(account, id)),
        resendEvent: (id, endpointId) => run(resendEvent(id, endpointId)),
        runDispatcher: (options) => run(runDispatcher(options))
      })
    })
  )
}
