/**
 * Input bounds (issue 12, item 3; docs/decisions.md, "Input bounds"): one home for the limits that
 * the request schemas (api/Bounded.ts) and the domain's validation (which imports them from here)
 * both apply, so that the OpenAPI document (maxLength, maxItems) and the answers
 * (`validation_failed` naming the field) say the same thing. The spec leaves every one of them open.
 */

/** Merchant references (payments, sessions, transfers, refunds, payouts), ids, tokens, client secrets, profile names. */
export const MAX_REFERENCE = 255

/** URLs a customer is sent to: what browsers reliably carry in an address bar. */
export const MAX_URL = 2048

/** Names: customers, card and account holders, line items, banks. */
export const MAX_NAME = 255

/** Free text: descriptions, refund reasons. */
export const MAX_DESCRIPTION = 1000

/** RFC 5321: a forward path of at most 256 octets, the address inside it at most 254. */
export const MAX_EMAIL = 254

/** Short values: codes (currency, country, method, status, locale, capture method), amounts, timestamps, IPs. */
export const MAX_CODE = 64

/** Phone numbers: E.164's 15 digits with room for formatting. */
export const MAX_PHONE = 32

/** Every other string: address lines, bank details, documents, card numbers, wallet addresses. */
export const MAX_TEXT = 255

/** Lists in a request: payment methods, event types, status filters. */
export const MAX_LIST = 100

/** A session's line items (a page shows them all) and the largest quantity of one. */
export const MAX_LINE_ITEMS = 100
/** The largest quantity of one line item. */
export const MAX_QUANTITY = 1_000_000

/**
 * Amounts: at most 15 digits in minor units (999,999,999,999,999), below 2^53, so that an amount is
 * exact as a JSON number, in a sum of two, and in PostgreSQL's bigint.
 */
export const MAX_AMOUNT_DIGITS = 15

/**
 * How deep a request body's objects and arrays may nest, the body itself being the first level. The
 * deepest request field sits in the fourth (`payment_method.details.stored_credential.reason`); the
 * bound keeps every walk over a body (checks, decoders) far from the stack's limit.
 */
export const MAX_JSON_DEPTH = 32

// Bounds of what the server answers (the view schemas; docs/decisions.md, "OpenAPI document and
// the OWASP rules"). A view field that echoes a request field takes that field's bound above; these
// are for what the server makes itself. The server encodes every answer through its schema, so a
// value past one of them is never sent: each is chosen so that nothing Tender makes can reach it.

/**
 * Error messages (the envelope's `message` and each `errors[].message`) and a webhook attempt's
 * `error`. Tender's own messages are a sentence or two; the longest quote a reference (255) or a
 * provider's report (cut at 300). The envelope is cut to this length where it is built, so a message
 * quoting a request header (a Content-Type) cannot pass it.
 */
export const MAX_MESSAGE = 1024

/**
 * A page of a list or search: `limit` is 1 to this (default 20), so a page's `data` holds at most
 * this many.
 */
export const MAX_PAGE = 100

/**
 * The longest an event feed read waits for a first event (`GET /v1/events?wait=`, seconds): well
 * under the idle timeouts of common proxies and load balancers (30 to 60 s).
 */
export const MAX_FEED_WAIT_SECONDS = 25

/**
 * Feed reads of one account that may wait at once (`wait` > 0 with nothing to serve yet), per
 * server process: each waiting read asks storage again every poll, so without a bound one account
 * could hold the database's connections with many waiting reads. A read past it answers at once, as
 * with `wait=0`. A listener keeps one waiting read; a few spare ones cover reconnections.
 */
export const MAX_FEED_WAITERS_PER_ACCOUNT = 4

/** A feed cursor (`next_cursor`, `after`): `<tx>.<seq>`, two decimal numbers below 2^63 (storage's bigint). */
export const FEED_CURSOR_PATTERN = /^[0-9]{1,19}\.[0-9]{1,19}$/

/** Webhook endpoints per account (contract.md: 16): the list answers all of them. */
export const MAX_WEBHOOK_ENDPOINTS = 16

/**
 * Identifiers Tender makes (`ord_…`, `req_…`): a prefix of at most 4 letters, `_`, 8 to 64 letters
 * and digits (Ids.ts's pattern).
 */
export const MAX_ID = 69

/**
 * A QR code's payload (`next_action.qr.data`): the most a QR code holds (version 40, low error
 * correction, alphanumeric); a longer payload could not be shown as one.
 */
export const MAX_QR_DATA = 4296

/**
 * `value` cut to `max` characters (the last one `…`): for text the server builds from what it was
 * sent (a message quoting a header, a field named by a client's key) or records from a receiver (a
 * webhook attempt's error), so that an answer holds to its schema's bound instead of failing to
 * encode: the answers are encoded through the bounded schemas.
 */
export const clip = (value: string, max: number): string => value.length <= max ? value : `${value.slice(0, max - 1)}…`
