/**
 * What the CLI writes. Results go to stdout: one JSON document with `--json`, readable text
 * otherwise. Expected failures (domain errors, bad invocations) go to stderr as one
 * `{code, message, errors?}` JSON object or one line, and exit non-zero without a stack trace.
 * Defects (bugs) are left to the runtime, which logs them with their cause. A failure of a handler
 * is rendered by Report.ts, which reads domain errors and so is loaded with the handlers.
 */
import type { Errors } from "@tender/domain"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stdio from "effect/Stdio"
import { type CliError, CliOutput } from "effect/cli"

/** How a command's result is shown: the JSON document, and the text for a terminal. */
export interface Presentation<A> {
  readonly json: (value: A) => unknown
  readonly text: (value: A) => string
  /**
   * For a result that is printed in full and still fails the command (a batch where some items
   * failed): the error to report on stderr after the result, so scripts get both the outcome of
   * every item and a non-zero exit.
   */
  readonly failure?: (value: A) => Errors.DomainError | undefined
}

export const print = <A>(value: A, present: Presentation<A>, json: boolean): Effect.Effect<void, Errors.DomainError> =>
  Effect.andThen(Console.log(json ? JSON.stringify(present.json(value)) : present.text(value)), () => {
    const failure = present.failure?.(value)
    return failure === undefined ? Effect.void : Effect.fail(failure)
  })

/** The spec's error envelope, minus the `request_id` that only HTTP requests have. */
export interface ErrorDocument {
  readonly code: string
  readonly message: string
  readonly errors?: ReadonlyArray<Errors.FieldError>
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ").trim()

const textOf = (doc: ErrorDocument): string => {
  // invalidField() already names the field in its message; list details only when they add something.
  const details = (doc.errors ?? []).filter((e) => !doc.message.includes(e.message))
  const suffix = details.length === 0 ? "" : ` (${details.map((e) => `${e.field}: ${e.message}`).join("; ")})`
  return oneLine(`error: ${doc.message}${suffix}`)
}

export const writeError = (doc: ErrorDocument, json: boolean) => Console.error(json ? JSON.stringify(doc) : textOf(doc))

/** Flags and arguments the parser rejected, as `validation_failed` field errors where a field is named. */
const usageDocument = (errors: ReadonlyArray<CliError.NonShowHelpErrors>): ErrorDocument => {
  const fieldErrors = errors.flatMap((e): ReadonlyArray<Errors.FieldError> => {
    switch (e._tag) {
      case "InvalidValue":
        return [{ field: e.option, message: `expected ${e.expected}, got "${e.value}"` }]
      case "MissingOption":
        return [{ field: e.option, message: "is required" }]
      case "MissingArgument":
        return [{ field: e.argument, message: "is required" }]
      default:
        return []
    }
  })
  const message = oneLine(errors.map((e) => e.message).join("; "))
  return fieldErrors.length === errors.length
    ? { code: "validation_failed", message, errors: fieldErrors }
    : { code: "invalid_request", message }
}

/**
 * The parser runs before any handler, so `--json` is read from the raw arguments here (up to `--`,
 * after which everything is an operand).
 */
const wantsJson = (args: ReadonlyArray<string>): boolean => {
  const end = args.indexOf("--")
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--json" || a === "--json=true")
}

/**
 * Replaces the default presenter for bad invocations: instead of the whole help page on stdout, one
 * error on stderr pointing at `--help` (or the JSON error object), so stdout stays clean for scripts.
 */
export const presenterLayer: Layer.Layer<never, never, Stdio.Stdio> = Layer.effect(
  CliOutput.Presenter,
  Effect.gen(function*() {
    const json = wantsJson(yield* (yield* Stdio.Stdio).args)
    return {
      present: (event) => {
        if (event._tag !== "InvalidInvocation") return CliOutput.defaultPresenter.present(event)
        const doc = usageDocument(event.errors)
        return json
          ? writeError(doc, true)
          : Console.error(oneLine(`error: ${doc.message} (usage: ${event.commandPath.join(" ")} --help)`))
      }
    }
  })
)
