/**
 * The handlers of `tender events …` (commands/Events.ts declares them): the event log of every
 * account, one event with its deliveries, and a resend, through the Webhooks use case.
 */
import { type DeliveryView, type Envelope, type Search, Webhooks } from "@tender/domain"
import { Effect, Option } from "effect"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"
import { accountOf, deliveriesTable, orDash, type Page, pageText } from "./Webhooks.ts"

const handler = Services.useCase(Webhooks)

type AccountEnvelope = Envelope & { readonly account_id: string }

export const listEvents = handler(
  (webhooks, input: Page & { readonly type: Option.Option<string> }) =>
    Effect.flatMap(accountOf(input.account), (account) =>
      webhooks.listEvents({
        account_id: account?.id,
        type: Option.getOrUndefined(input.type),
        since: Option.getOrUndefined(input.since),
        limit: Option.getOrUndefined(input.limit),
        cursor: Option.getOrUndefined(input.cursor)
      })),
  (): Output.Presentation<Search.SearchResult<AccountEnvelope>> => ({
    json: (page) => page,
    text: (page) =>
      pageText(page, "No events.", (rows) =>
        Table.table(
          ["ID", "TYPE", "ACCOUNT", "MODE", "CREATED"],
          rows.map((e) => [e.id, e.type, e.account_id, e.livemode ? "live" : "test", e.created_at])
        ))
  })
)

export const getEvent = handler(
  (webhooks, { id }: { readonly id: string }) => webhooks.getEvent(id),
  () => ({
    json: (shown) => shown,
    text: ({ deliveries, event }) =>
      [
        Table.fields([
          ["event", event.id],
          ["type", event.type],
          ["account", event.account_id],
          ["mode", event.livemode ? "live" : "test"],
          ["profile", orDash(event.processing_profile)],
          ["created", event.created_at]
        ]),
        "",
        // The envelope's data exactly as receivers get it.
        JSON.stringify(event.data, null, 2),
        "",
        deliveries.length === 0 ? "No deliveries (no endpoint subscribed)." : deliveriesTable(deliveries)
      ].join("\n")
  })
)

interface Resent {
  readonly event: AccountEnvelope
  readonly deliveries: ReadonlyArray<DeliveryView>
}

export const resendEvent = handler(
  (webhooks, input: { readonly id: string; readonly endpoint: Option.Option<string> }) =>
    webhooks.resendEvent(input.id, Option.getOrUndefined(input.endpoint)),
  (input): Output.Presentation<Resent> => ({
    json: (resent) => resent,
    text: ({ deliveries, event }) =>
      deliveries.length === 0
        ? `No enabled endpoint of ${event.account_id} takes ${event.type}: nothing to send (name one with --endpoint).`
        : [
          `${event.id} (${event.type}) sent again to ${deliveries.length} endpoint${deliveries.length === 1 ? "" : "s"}` +
          (Option.isSome(input.endpoint) ? "" : " subscribed to it") + ":",
          deliveriesTable(deliveries)
        ].join("\n")
  })
)
