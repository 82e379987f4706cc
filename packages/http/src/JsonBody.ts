/**
 * What every JSON request body must be before a route reads it (issue 21, item 6), checked once at
 * the edge for the merchant API (Gateway.ts) and the browser SDK's routes (client/ClientRoutes.ts):
 *
 * - no string (value or key) holding a lone UTF-16 surrogate (`"\ud800"`): such text has no UTF-8
 *   form, so PostgreSQL would store it altered (U+FFFD) and anything deriving from it (a 409's
 *   message, a URL) could not be built;
 * - no NUL character: PostgreSQL's text refuses it, so it would fail a write that memory accepts;
 * - no nesting deeper than `MAX_DEPTH` levels: no request schema goes past a few, and a walk over
 *   an unbounded depth (a recursive check, a decoder) would overflow the stack.
 *
 * The walk is iterative (an explicit stack), so no body can make it overflow.
 */
import { Errors, Limits } from "@tender/domain"

/** Objects and arrays inside each other, the body itself counting as the first level. */
export const MAX_DEPTH = Limits.MAX_JSON_DEPTH

/** At most this many offending fields are named (a body of a million bad strings names the first ones). */
const MAX_PROBLEMS = Limits.MAX_LIST

const LONE_SURROGATE = /\p{Cs}/u

const textProblem = (text: string): string | undefined =>
  LONE_SURROGATE.test(text)
    ? "must be valid Unicode text (it holds a lone UTF-16 surrogate, which has no UTF-8 form)"
    : text.includes("\u0000")
    ? "must not contain the NUL character"
    : undefined

/** `a.b[0].c`, as the schema errors name fields (Middleware.ts). */
const child = (at: string, key: string | number) => typeof key === "number" ? `${at}[${key}]` : at === "" ? key : `${at}.${key}`

/**
 * Every offending field of a parsed body, in document order, at most `MAX_PROBLEMS`. Nesting past
 * the bound names the body's field that holds it (a path 32 levels long would name nothing useful).
 */
export const problemsOf = (body: unknown): ReadonlyArray<Errors.FieldError> => {
  const problems: Array<Errors.FieldError> = []
  const seen = new Set<string>()
  const add = (at: string, message: string) => {
    const field = at === "" ? "body" : at
    // Once per field and problem: many deep values under one field are one problem of that field.
    if (problems.length >= MAX_PROBLEMS || seen.has(`${field}\u0000${message}`)) return
    seen.add(`${field}\u0000${message}`)
    problems.push({ field, message })
  }
  // Depth-first, children pushed in reverse so that problems come out in document order.
  const stack: Array<{ readonly value: unknown; readonly at: string; readonly top: string; readonly depth: number }> = [
    { value: body, at: "", top: "", depth: 1 }
  ]
  while (stack.length > 0 && problems.length < MAX_PROBLEMS) {
    const { at, depth, top, value } = stack.pop()!
    if (typeof value === "string") {
      const problem = textProblem(value)
      if (problem !== undefined) add(at, problem)
      continue
    }
    if (typeof value !== "object" || value === null) continue
    if (depth > MAX_DEPTH) {
      add(top, `nests objects and arrays deeper than ${MAX_DEPTH} levels`)
      continue
    }
    const entries: Array<readonly [string | number, unknown]> = Array.isArray(value)
      ? value.map((item, index) => [index, item] as const)
      : Object.entries(value)
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, inner] = entries[i]!
      const field = child(at, key)
      if (typeof key === "string") {
        const problem = textProblem(key)
        // A bad key names where it sits (its own text may be what cannot be shown).
        if (problem !== undefined) {
          add(at, `keys ${problem}`)
          continue
        }
      }
      stack.push({ value: inner, at: field, top: top === "" ? field : top, depth: depth + 1 })
    }
  }
  return problems
}

/** The body's problems as the spec's `validation_failed`, or `undefined` when it has none. */
export const check = (body: unknown): Errors.ValidationFailed | undefined => {
  const problems = problemsOf(body)
  if (problems.length === 0) return undefined
  return new Errors.ValidationFailed({
    message: `Invalid request: ${[...new Set(problems.map((p) => p.field))].join(", ")}`,
    errors: problems
  })
}
