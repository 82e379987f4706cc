/**
 * An account's channels and its webhook endpoints, cached in process (issue 24): routing read the
 * channels on every payment, and the outbox read the endpoints on every event, inside the payment's
 * transaction. These layers wrap ChannelRepoPg and WebhookEndpointRepoPg and answer
 * `listByAccount` and `list` from notified caches keyed by account (NotifiedCache.ts). Triggers
 * (migration 0038) NOTIFY `tender_channels_changed` and `tender_webhook_endpoints_changed` with the
 * account's id when a change commits, whichever process made it (the CLI adds and disables
 * channels), and only that account's list is forgotten.
 *
 * An event recorded in the milliseconds between another process's endpoint change and its notice
 * fans out to the endpoints as they were: an endpoint registered concurrently with a payment has no
 * order with it anyway (docs/decisions.md). Changes through this process's repositories are
 * forgotten at once.
 */
import type { PgClient } from "@effect/sql-pg"
import { type Channel, ChannelRepo, type Webhook, WebhookEndpointRepo } from "@tender/domain"
import { Effect, Layer } from "effect"
import * as NotifiedCache from "./NotifiedCache.ts"

export const CHANNELS_CHANNEL = "tender_channels_changed"
export const ENDPOINTS_CHANNEL = "tender_webhook_endpoints_changed"

/** Accounts' lists held; a list is read again after 30 s whatever was heard. */
export const DEFAULT_OPTIONS: NotifiedCache.CacheOptions = { capacity: 10_000, maxAgeMs: 30_000 }

type Needs<S> = S | NotifiedCache.Listener | PgClient.PgClient

/** A cache of lists by account id, which the notices of `channel` name. */
const byAccount = <V>(channel: string, options: NotifiedCache.CacheOptions) =>
  NotifiedCache.make<string, ReadonlyArray<V>>({ ...options, channel, keyOf: (accountId) => accountId })

/** Wraps the ChannelRepo it is provided with. */
export const channelsLayerWith = (options: NotifiedCache.CacheOptions): Layer.Layer<ChannelRepo, never, Needs<ChannelRepo>> =>
  Layer.effect(
    ChannelRepo,
    Effect.gen(function*() {
      const repo = yield* ChannelRepo
      const cache = yield* byAccount<Channel.Channel>(CHANNELS_CHANNEL, options)
      return ChannelRepo.of({
        ...repo,
        listByAccount: (accountId) => cache.read(accountId, repo.listByAccount(accountId)),
        insert: (channel, credentials) => cache.change(channel.account_id, repo.insert(channel, credentials)),
        update: (previous, next) => cache.change(previous.account_id, repo.update(previous, next))
      })
    })
  )

/** Wraps the WebhookEndpointRepo it is provided with. */
export const endpointsLayerWith = (
  options: NotifiedCache.CacheOptions
): Layer.Layer<WebhookEndpointRepo, never, Needs<WebhookEndpointRepo>> =>
  Layer.effect(
    WebhookEndpointRepo,
    Effect.gen(function*() {
      const repo = yield* WebhookEndpointRepo
      const cache = yield* byAccount<Webhook.WebhookEndpoint>(ENDPOINTS_CHANNEL, options)
      return WebhookEndpointRepo.of({
        ...repo,
        list: (accountId) => cache.read(accountId, repo.list(accountId)),
        insert: (endpoint, max) => cache.change(endpoint.account_id, repo.insert(endpoint, max)),
        update: (next) => cache.change(next.account_id, repo.update(next)),
        delete: (accountId, id) => cache.change(accountId, repo.delete(accountId, id))
      })
    })
  )

export const channelsLayer = channelsLayerWith(DEFAULT_OPTIONS)
export const endpointsLayer = endpointsLayerWith(DEFAULT_OPTIONS)
