/** What the webhook use case accepts: endpoint and search inputs, and their validation (pure, or a decode). */
import { Effect } from "effect"
import { invalidField, type ValidationFailed } from "../kernel/Errors.ts"
import { decodeInput } from "../kernel/Search.ts"
import { type DeliveryStatus, type EndpointStatus, EVENT_TYPES } from "./Webhook.ts"

export interface CreateEndpointInput {
  readonly url: string
  readonly enabled_events?: ReadonlyArray<string> | undefined
  readonly description?: string | undefined
}

export interface UpdateEndpointInput {
  readonly url?: string | undefined
  readonly enabled_events?: ReadonlyArray<string> | undefined
  readonly description?: string | undefined
  readonly status?: EndpointStatus | undefined
}

interface ListInput {
  readonly since?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** A list-deliveries request's filters and page, before validation. */
export interface DeliverySearchInput extends ListInput {
  readonly endpoint_id?: string | undefined
  readonly event_id?: string | undefined
  readonly status?: ReadonlyArray<DeliveryStatus> | undefined
}

export interface EventSearchInput extends ListInput {
  readonly account_id?: string | undefined
  readonly type?: string | undefined
}

/** `enabled_events` as stored: `["*"]` when not given, known types only, each once. */
export const validateEvents = (input: ReadonlyArray<string> | undefined): ReadonlyArray<string> | ValidationFailed => {
  if (input === undefined) return ["*"]
  if (input.length === 0) return invalidField("enabled_events", "must name at least one event type, or \"*\"")
  const unknown = input.filter((t) => t !== "*" && !(EVENT_TYPES as ReadonlyArray<string>).includes(t))
  if (unknown.length > 0) return invalidField("enabled_events", `unknown event types: ${unknown.join(", ")}`)
  return [...new Set(input)]
}

/** A new endpoint's description: at most 500 characters. */
export const descriptionProblem = (description: string | undefined): ValidationFailed | undefined =>
  description !== undefined && description.length > 500 ? invalidField("description", "must be at most 500 characters") : undefined

/**
 * A list's paging. The search's shared decoder knows `since` as `created_from`; a refusal names the
 * field the caller sent (an unparsable time, or one outside the years storage holds).
 */
export const listInput = (input: ListInput) =>
  decodeInput({ ...input, created_from: input.since }).pipe(
    Effect.mapError((error) => {
      const since = error.errors?.find((e) => e.field === "created_from")
      return since === undefined ? error : invalidField("since", since.message)
    }),
    Effect.map(({ created_to: _, ...base }) => base)
  )
