/**
 * The account's events as a feed (issue 25): what `tender listen` reads. A long poll rather than a
 * stream, because every answer of this API is one complete JSON body signed as a whole (the
 * gateway's response signature): a stream has no end to sign. Each event is the envelope webhooks
 * carry (contract.md), byte for byte the body a listener forwards.
 */
import { Schema, SchemaTransformation } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ID_PREFIXES, prefixed } from "../Ids.ts"
import * as Limits from "../Limits.ts"
import { Code, Id, int, Reference, text } from "./Bounded.ts"

const optional = Schema.optional

/** `<tx>.<seq>` (two numbers below 2^63): an answer's `next_cursor`, passed back as `after`. */
const Cursor = text(39).check(Schema.isPattern(Limits.FEED_CURSOR_PATTERN))

/** A query's text: the digits of a whole number from `minimum` to `maximum`. */
const queryInt = (minimum: number, maximum: number) => Code.pipe(Schema.decodeTo(int(minimum, maximum), SchemaTransformation.numberFromString))

/** An event as webhooks carry it: the body POSTed to endpoints, and each item of the feed. */
export const EventEnvelope = Schema.Struct({
  id: Id,
  type: Code,
  created_at: Code,
  livemode: Schema.Boolean,
  processing_profile: Schema.NullOr(Reference),
  /** The object's view when the event was recorded (a payment, a session, a refund, …). */
  data: Schema.Record(Schema.String, Schema.Unknown)
})

export class EventsApi extends HttpApiGroup.make("events")
  .annotate(OpenApi.Description, "The account's events, as webhooks carry them, read as a feed from a cursor.")
  .add(
    HttpApiEndpoint.get("feed", "/v1/events", {
      query: {
        after: optional(Cursor),
        // Comma-separated event types (payment.succeeded,refund.failed).
        types: optional(text(Limits.MAX_LIST * (Limits.MAX_CODE + 1))),
        wait: optional(queryInt(0, Limits.MAX_FEED_WAIT_SECONDS)),
        limit: optional(queryInt(1, Limits.MAX_PAGE))
      },
      success: Schema.Struct({
        data: Schema.Array(EventEnvelope).check(Schema.isMaxLength(Limits.MAX_PAGE)),
        next_cursor: Cursor,
        has_more: Schema.Boolean
      })
    }).annotate(OpenApi.Summary, "Read the event feed")
      .annotate(
        OpenApi.Description,
        "The account's events recorded after `after` (a `next_cursor` of an earlier answer; without it, from about now: " +
          "where the feed stands when the read begins, so an event committed just before may still be served), oldest " +
          "first, of the comma-separated `types` if given. With `wait` (seconds, at most 25) the answer waits for a first " +
          "event and comes as soon as there is one; empty after `wait`. An account has at most " +
          `${Limits.MAX_FEED_WAITERS_PER_ACCOUNT} waiting reads at once per server process: a read past them is answered ` +
          "at once, as with `wait=0`, and so is a waiting read when the server stops. " +
          "Pass `next_cursor` back as `after` to continue: " +
          "nothing is skipped, also across reconnections (an event is served once every transaction that could record one " +
          "before it has ended), and a cursor older than the retained history continues with what is kept. `has_more`: " +
          "the page is full, read again at once."
      ),
    HttpApiEndpoint.get("get", "/v1/events/:id", {
      params: { id: prefixed(ID_PREFIXES.event) },
      success: EventEnvelope
    }).annotate(OpenApi.Summary, "Retrieve an event")
      .annotate(OpenApi.Description, "One of the account's events, exactly as webhooks carry it; another account's is 404 not_found.")
  ) {}
