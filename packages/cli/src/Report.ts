/**
 * How a command's expected failure reaches the operator: one `{code, message, errors?}` document
 * (or one line) on stderr, then a non-zero exit. Apart from Output.ts because it reads domain
 * errors, whose module a parse error or `--help` need not load: Cli.ts imports this with a handler.
 */
import { Errors } from "@tender/domain"
import { Data, Effect, Runtime } from "effect"
import { type ErrorDocument, writeError } from "./Output.ts"

/** A failure already written to stderr: the runtime exits with code 1 and does not log it again. */
export class Reported extends Data.TaggedError("Reported") {
  override readonly [Runtime.errorReported] = false
}

export const documentOf = (error: unknown): ErrorDocument => {
  if (Errors.isDomainError(error)) {
    return error.errors === undefined || error.errors.length === 0
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, errors: error.errors }
  }
  // A setting read from the environment that does not parse (Config.*): name the variable and what it takes.
  if (typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "ConfigError") {
    const text = String((error as { message: unknown }).message)
    const found = /^SchemaError\((.*?) at \["([^"]+)"\]/s.exec(text)
    return found === null
      ? { code: "validation_failed", message: `invalid setting: ${text}` }
      : { code: "validation_failed", message: `${found[2]} is invalid: ${found[1]!.charAt(0).toLowerCase()}${found[1]!.slice(1)}` }
  }
  // Typed failures from outside the domain (storage that cannot start, a port already in use) carry a
  // message meant for the operator but no spec code.
  const message = typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)
  return { code: "internal_error", message }
}

/**
 * Writes an expected failure to stderr, then fails with `Reported` so the process exits non-zero. A
 * failure already `Reported` (or handed to someone who reports it: a cluster child's failed start,
 * told to its primary) is not written again.
 */
export const report = (json: boolean) => (error: unknown): Effect.Effect<never, Reported> =>
  error instanceof Reported ? Effect.fail(error) : Effect.andThen(writeError(documentOf(error), json), Effect.fail(new Reported()))
