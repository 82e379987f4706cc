/**
 * The account's event feed (GET /v1/events, `tender listen`): its events in the order storage can
 * serve them without ever skipping one, from a cursor. Pure: positions, the cursor's text, the
 * request's validation. Storage orders and bounds the feed (EventRepo.feed); docs/decisions.md,
 * "Events feed and tender listen".
 */
import { invalidField, ValidationFailed } from "../kernel/Errors.ts"
import { FEED_CURSOR_PATTERN, MAX_FEED_WAIT_SECONDS, MAX_PAGE } from "../kernel/Limits.ts"
import { EVENT_TYPES } from "./Webhook.ts"

/**
 * A place in the feed: every event is at one position, and positions are totally ordered (`tx`,
 * then `seq`). What the two numbers are is storage's (PostgreSQL: the writing transaction's id and
 * the insertion sequence; memory: 0 and a sequence); the feed serves an event only once no event can
 * still appear before it.
 */
export interface FeedPosition {
  readonly tx: bigint
  readonly seq: bigint
}

/** One read of the feed: the events after `after`, and where the next read starts. */
export interface FeedPage<E> {
  readonly events: ReadonlyArray<E>
  /** After the last event served, or further when storage knows nothing servable lies between. */
  readonly next: FeedPosition
}

const I64 = (1n << 63n) - 1n

/** The cursor a client passes back (`next_cursor`). */
export const cursorOf = (position: FeedPosition): string => `${position.tx}.${position.seq}`

/** The position a cursor names, or the refusal naming `field`. */
export const positionOf = (cursor: string, field = "after"): FeedPosition | ValidationFailed => {
  const refused = invalidField(field, "must be a next_cursor this API returned")
  if (!FEED_CURSOR_PATTERN.test(cursor)) return refused
  const [tx, seq] = cursor.split(".").map(BigInt) as [bigint, bigint]
  return tx > I64 || seq > I64 ? refused : { tx, seq }
}

/** Whether `a` comes after `b` in the feed. */
export const isAfter = (a: FeedPosition, b: FeedPosition): boolean => a.tx > b.tx || (a.tx === b.tx && a.seq > b.seq)

/** The later of two positions. */
export const later = (a: FeedPosition, b: FeedPosition): FeedPosition => (isAfter(b, a) ? b : a)

/** A feed request as the API or a caller states it, before validation. */
export interface FeedInput {
  /**
   * A `next_cursor`; absent: from about now (where the feed stands when the read begins: an event
   * committed just before may still be served, since storage serves it only once it is certain).
   */
  readonly after?: string | undefined
  /** Only these event types; absent or empty: every type. */
  readonly types?: ReadonlyArray<string> | undefined
  /** Seconds to wait for a first event when there is none yet, 0–25 (default 0). */
  readonly wait?: number | undefined
  /** Events in one answer, 1–100 (default 100). */
  readonly limit?: number | undefined
}

/** A feed request validated (`feedRequest`): a position, the types, the wait in ms and the page size. */
export interface FeedRequest {
  readonly after: FeedPosition | undefined
  readonly types: ReadonlyArray<string> | undefined
  readonly waitMs: number
  readonly limit: number
}

/** The request validated: every problem at once, each naming its field. */
export const feedRequest = (input: FeedInput): FeedRequest | ValidationFailed => {
  const problems: Array<ValidationFailed> = []
  const after = input.after === undefined ? undefined : positionOf(input.after)
  if (after !== undefined && !("tx" in after)) problems.push(after)
  const unknown = (input.types ?? []).filter((t) => !(EVENT_TYPES as ReadonlyArray<string>).includes(t))
  if (unknown.length > 0) problems.push(invalidField("types", `unknown event types: ${unknown.join(", ")}`))
  const wait = input.wait ?? 0
  if (!Number.isInteger(wait) || wait < 0 || wait > MAX_FEED_WAIT_SECONDS) problems.push(invalidField("wait", `must be a whole number of seconds, 0 to ${MAX_FEED_WAIT_SECONDS}`))
  const limit = input.limit ?? MAX_PAGE
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) problems.push(invalidField("limit", `must be 1 to ${MAX_PAGE}`))
  if (problems.length === 1) return problems[0]!
  if (problems.length > 1) {
    const errors = problems.flatMap((p) => p.errors ?? [])
    return new ValidationFailed({ message: `Invalid request: ${errors.map((e) => `${e.field} ${e.message}`).join("; ")}`, errors })
  }
  return {
    after: after as FeedPosition | undefined,
    types: input.types === undefined || input.types.length === 0 ? undefined : [...new Set(input.types)],
    waitMs: wait * 1000,
    limit
  }
}
