/**
 * Bounded fields (issue 12, item 3; issue 25, item 4): every string, list and integer a schema of
 * the API holds has a maximum, from Limits.ts (which the domain's validation applies too). In a
 * request an over-long value is `validation_failed` naming the field; in an answer the server encodes
 * through the same schema, so it never sends past the bound; and the OpenAPI document shows each one
 * (maxLength, maxItems, format and minimum/maximum).
 */
import * as Limits from "../Limits.ts"
import { Schema } from "effect"

/** A string of at most `max` characters. */
export const text = (max: number = Limits.MAX_TEXT) => Schema.String.check(Schema.isMaxLength(max))

/** A list of at most `max` items. */
export const list = <S extends Schema.Top>(item: S, max: number = Limits.MAX_LIST) => Schema.Array(item).check(Schema.isMaxLength(max))

const INT32_MAX = 2 ** 31 - 1

/**
 * An integer from `min` to `max` (default: JSON's safe integers, which Schema.Int already holds to),
 * documented with the OpenAPI format that holds it (int32 or int64).
 */
export const int = (min: number = Number.MIN_SAFE_INTEGER, max: number = Number.MAX_SAFE_INTEGER) => {
  // The format annotates the number itself: annotated after the checks, it would land on the last check's schema, not the field's.
  const integer = Schema.Number.annotate({ format: min >= -INT32_MAX - 1 && max <= INT32_MAX ? "int32" : "int64" })
  return min === Number.MIN_SAFE_INTEGER && max === Number.MAX_SAFE_INTEGER
    ? integer.check(Schema.isInt())
    : integer.check(Schema.isInt(), Schema.isBetween({ minimum: min, maximum: max }))
}

/** Merchant references, ids, tokens, client secrets, processing profile names. */
export const Reference = text(Limits.MAX_REFERENCE)
/** URLs (their content is the domain's to check: urlProblem). */
export const Url = text(Limits.MAX_URL)
export const Name = text(Limits.MAX_NAME)
export const Description = text(Limits.MAX_DESCRIPTION)
export const Email = text(Limits.MAX_EMAIL)
/** Codes, amounts, timestamps, IP addresses. */
export const Code = text(Limits.MAX_CODE)
/** Any other string. */
export const Text = text()
/** An id Tender made (`ord_…`, `req_…`), as an answer carries it. */
export const Id = text(Limits.MAX_ID)
/** An error message, or a webhook attempt's error. */
export const Message = text(Limits.MAX_MESSAGE)
/** Any integer a JSON number holds exactly (counts, durations, statuses, card expiry fields). */
export const Int = int()
