/**
 * `tender webhooks deliveries list|retry` and `tender webhooks events list|show`: the operator's
 * view of the outbox across accounts (for support: "did my webhook go out?") and the lever to send
 * failed deliveries again once a merchant's endpoint is back. The Webhooks use case decides what
 * may be retried, exactly as for `POST /v1/webhook_deliveries/{id}/retry`.
 */
import { type Account, Accounts, type DeliveryView, type Envelope, Errors, type Search, Webhook, Webhooks } from "@tender/domain"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import type * as Output from "../Output.ts"
import * as Progress from "../Progress.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const webhooksCommand = Services.useCaseCommand(Webhooks)

const account = Flag.String("account").pipe(Flag.withDescription("Only this account (acct_…)"), Flag.optional)
const since = Flag.String("since").pipe(Flag.withDescription("Only those created at or after this ISO 8601 time"), Flag.optional)
const limit = Flag.Int("limit").pipe(Flag.withDescription("Page size, 1–100 (default 20)"), Flag.optional)
const cursor = Flag.String("cursor").pipe(Flag.withDescription("Continue after a page: its next_cursor"), Flag.optional)

/** The account named by `--account`, loaded so that a mistyped id says so rather than listing nothing. */
const accountOf = (id: Option.Option<string>) =>
  Option.match(id, {
    onNone: () => Effect.succeed(undefined),
    onSome: (id) => Accounts.use((accounts) => accounts.get(id))
  })

const orDash = (value: string | null) => value ?? "—"

/** A page as a table, with how to fetch the next one. */
const pageText = <A>(page: Search.SearchResult<A>, empty: string, table: (rows: ReadonlyArray<A>) => string) =>
  page.data.length === 0
    ? empty
    : page.next_cursor === null
    ? table(page.data)
    : `${table(page.data)}\n\nMore: --cursor ${page.next_cursor}`

const deliveriesTable = (rows: ReadonlyArray<DeliveryView>) =>
  Table.table(
    ["ID", "EVENT TYPE", "ENDPOINT", "STATUS", "ATTEMPTS", "NEXT ATTEMPT", "CREATED"],
    rows.map((d) => [d.id, d.event_type, d.endpoint_id, d.status, String(d.attempt_count), orDash(d.next_attempt_at), d.created_at])
  )

// --- deliveries -----------------------------------------------------------------------------

const listDeliveries = webhooksCommand(
  "list",
  {
    account,
    status: Flag.Literals("status", Webhook.DELIVERY_STATUSES).pipe(Flag.withDescription("Only deliveries in this status"), Flag.optional),
    since,
    limit,
    cursor
  },
  (webhooks, input) =>
    Effect.flatMap(accountOf(input.account), (account) =>
      webhooks.listDeliveries(account, {
        status: Option.match(input.status, { onNone: () => undefined, onSome: (status) => [status] }),
        since: Option.getOrUndefined(input.since),
        limit: Option.getOrUndefined(input.limit),
        cursor: Option.getOrUndefined(input.cursor)
      })),
  (): Output.Presentation<Search.SearchResult<DeliveryView>> => ({
    json: (page) => page,
    text: (page) => pageText(page, "No deliveries.", deliveriesTable)
  })
).pipe(Command.withDescription("List webhook deliveries of every account, newest first"))

/** `in_flight`: an attempt holds the delivery's lease right now (409 `conflict`); its outcome decides. */
type Outcome = "retried" | "not_retryable" | "not_found" | "in_flight"

interface Retried {
  /** Ids the operator named (rather than `--all-failed`): each one not retried fails the command. */
  readonly named: boolean
  readonly items: ReadonlyArray<{ readonly id: string; readonly outcome: Outcome; readonly error?: Errors.DomainError }>
}

const idsWith = (r: Retried, outcome: Outcome) => r.items.filter((i) => i.outcome === outcome).map((i) => i.id)

const retriedPresentation: Output.Presentation<Retried> = {
  json: (r) => ({
    retried: idsWith(r, "retried"),
    not_retryable: idsWith(r, "not_retryable"),
    not_found: idsWith(r, "not_found"),
    in_flight: idsWith(r, "in_flight")
  }),
  text: (r) => {
    const notRetryable = idsWith(r, "not_retryable")
    const notFound = idsWith(r, "not_found")
    const inFlight = idsWith(r, "in_flight")
    return [
      `retried ${idsWith(r, "retried").length}, not retryable ${notRetryable.length}, not found ${notFound.length}` +
      // Rare (an attempt under way at that very moment): said only when it happened.
      (inFlight.length > 0 ? `, in flight ${inFlight.length}` : ""),
      ...(notRetryable.length > 0 ? [`not retryable: ${notRetryable.join(" ")}`] : []),
      ...(notFound.length > 0 ? [`not found: ${notFound.join(" ")}`] : []),
      ...(inFlight.length > 0 ? [`in flight (attempt under way, not retried): ${inFlight.join(" ")}`] : [])
    ].join("\n")
  },
  failure: (r) => {
    const failed = r.items.filter((i) => i.error !== undefined)
    if (!r.named || failed.length === 0) return undefined
    if (failed.length === 1) return failed[0].error
    // One error for several ids: the first one's code, every id in the message.
    const first = failed[0].error!
    const which = failed.map((i) => `${i.id} (${i.outcome.replace("_", " ")})`).join(", ")
    return Errors.withMessage(first, `${failed.length} of ${r.items.length} deliveries could not be retried: ${which}`)
  }
}

/** Every failed or exhausted delivery, all pages, collected first so the bar knows its total. */
const retryableIds = (webhooks: Webhooks["Service"], account: Account.Account | undefined, since: string | undefined) =>
  Effect.gen(function*() {
    const ids: Array<string> = []
    let cursor: string | undefined
    do {
      const page = yield* webhooks.listDeliveries(account, { status: ["failed", "exhausted"], since, limit: 100, cursor })
      ids.push(...page.data.map((d) => d.id))
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
    return ids
  })

const retry = webhooksCommand(
  "retry",
  {
    ids: Argument.String("id").pipe(Argument.withDescription("Delivery ids (wd_…)"), Argument.variadic()),
    allFailed: Flag.Boolean("all-failed").pipe(
      Flag.withDescription("Retry every failed and exhausted delivery (of --account, created since --since)"),
      Flag.withDefault(false)
    ),
    since,
    account
  },
  (webhooks, input) =>
    Effect.gen(function*() {
      if (input.allFailed && input.ids.length > 0) return yield* Errors.invalidField("all-failed", "cannot be combined with delivery ids")
      if (!input.allFailed && input.ids.length === 0) return yield* Errors.invalidField("id", "is required unless --all-failed is given")
      if (!input.allFailed && Option.isSome(input.since)) return yield* Errors.invalidField("since", "applies only with --all-failed")
      const account = yield* accountOf(input.account)
      // A delivery named twice would be not retryable the second time (it is pending by then).
      const ids = input.allFailed ? yield* retryableIds(webhooks, account, Option.getOrUndefined(input.since)) : [...new Set(input.ids)]
      const items = yield* Progress.forEach("retrying", ids, (id) =>
        webhooks.retryDelivery(account, id).pipe(
          Effect.as({ id, outcome: "retried" as const }),
          Effect.catchTags({
            // With --all-failed, one retried or re-attempted meanwhile by someone else lands here.
            WebhookDeliveryNotRetryable: (error) => Effect.succeed({ id, outcome: "not_retryable" as const, error }),
            WebhookDeliveryNotFound: (error) => Effect.succeed({ id, outcome: "not_found" as const, error }),
            Conflict: (error) => Effect.succeed({ id, outcome: "in_flight" as const, error })
          })
        ))
      return { named: !input.allFailed, items }
    }),
  () => retriedPresentation
).pipe(Command.withDescription("Send failed or exhausted deliveries again now (by id, or --all-failed)"))

const deliveries = Command.make("deliveries").pipe(
  Command.withDescription("Webhook deliveries of any account: list, retry"),
  Command.withSubcommands([listDeliveries, retry])
)

// --- events ---------------------------------------------------------------------------------

type AccountEnvelope = Envelope & { readonly account_id: string }

const listEvents = webhooksCommand(
  "list",
  {
    account,
    type: Flag.String("type").pipe(Flag.withDescription("Only events of this type (payment.succeeded, …)"), Flag.optional),
    since,
    limit,
    cursor
  },
  (webhooks, input) =>
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
).pipe(Command.withDescription("List recorded events of every account, newest first"))

const showEvent = webhooksCommand(
  "show",
  { id: Argument.String("id").pipe(Argument.withDescription("Event id (evt_…)")) },
  (webhooks, { id }) => webhooks.getEvent(id),
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
).pipe(Command.withDescription("Show an event's envelope and its deliveries"))

const events = Command.make("events").pipe(
  Command.withDescription("Recorded events of any account: list, show"),
  Command.withSubcommands([listEvents, showEvent])
)

export const webhooks = Command.make("webhooks").pipe(
  Command.withDescription("Operate on webhook events and deliveries of any account"),
  Command.withSubcommands([deliveries, events])
)
