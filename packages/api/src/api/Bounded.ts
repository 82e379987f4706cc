/**
 * Bounded request fields (issue 12, item 3): every string and list a request schema accepts has a
 * maximum, from Limits.ts (which the domain's validation applies too), so that an over-long value is `validation_failed` naming
 * the field and the OpenAPI document shows the bound (maxLength, maxItems).
 */
import * as Limits from "../Limits.ts"
import { Schema } from "effect"

/** A string of at most `max` characters. */
export const text = (max: number = Limits.MAX_TEXT) => Schema.String.check(Schema.isMaxLength(max))

/** A list of at most `max` items. */
export const list = <S extends Schema.Top>(item: S, max: number = Limits.MAX_LIST) => Schema.Array(item).check(Schema.isMaxLength(max))

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
