/**
 * The handlers of `tender webhooks …` (commands/Webhooks.ts declares them), and what the event
 * log's (handlers/Events.ts) share with them. The Webhooks use case decides what may be retried,
 * exactly as for `POST /v1/webhook_deliveries/{id}/retry`.
 */
import { type Account, Accounts, type DeliveryView, Errors, type Search, type Webhook, Webhooks } from "@tender/domain"
import { Effect, Option } from "effect"
import type * as Output from "../Output.ts"
import * as Progress from "../Progress.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const handler = Services.useCase(Webhooks)

/** The filters and paging the list commands share. */
export interface Page {
  readonly account: Option.Option<string>
  readonly since: Option.Option<string>
  readonly limit: Option.Option<number>
  readonly cursor: Option.Option<string>
}

/** The account named by `--account`, loaded so that a mistyped id says so rather than listing nothing. */
export const accountOf = (id: Option.Option<string>) =>
  Option.match(id, {
    onNone: () => Effect.succeed(undefined),
    onSome: (id) => Accounts.use((accounts) => accounts.get(id))
  })

export const orDash = (value: string | null) => value ?? "—"

/** A page as a table, with how to fetch the next one. */
export const pageText = <A>(page: Search.SearchResult<A>, empty: string, table: (rows: ReadonlyArray<A>) => string) =>
  page.data.length === 0
    ? empty
    : page.next_cursor === null
    ? table(page.data)
    : `${table(page.data)}\n\nMore: --cursor ${page.next_cursor}`

export const deliveriesTable = (rows: ReadonlyArray<DeliveryView>) =>
  Table.table(
    ["ID", "EVENT TYPE", "ENDPOINT", "STATUS", "ATTEMPTS", "NEXT ATTEMPT", "CREATED"],
    rows.map((d) => [d.id, d.event_type, d.endpoint_id, d.status, String(d.attempt_count), orDash(d.next_attempt_at), d.created_at])
  )

// --- deliveries -----------------------------------------------------------------------------

export const listDeliveries = handler(
  (webhooks, input: Page & { readonly status: Option.Option<Webhook.DeliveryStatus> }) =>
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
)

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

interface RetryInput {
  readonly ids: ReadonlyArray<string>
  readonly allFailed: boolean
  readonly since: Option.Option<string>
  readonly account: Option.Option<string>
}

export const retry = handler(
  (webhooks, input: RetryInput) =>
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
)
