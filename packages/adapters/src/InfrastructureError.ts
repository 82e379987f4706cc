/**
 * The one failure the driven side reports at start-up: a database, Redis server or key that is
 * missing or unreachable. Once the layer is built, storage failures are defects (ports carry no
 * storage error), so this is only ever seen by whoever composes the layer: the CLI prints it.
 */
import { Data } from "effect"

export class InfrastructureError extends Data.TaggedError("InfrastructureError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** The useful line of an unknown failure, for the human half of an `InfrastructureError`. */
export const describe = (cause: unknown): string => {
  if (typeof cause === "object" && cause !== null) {
    const { message, cause: inner } = cause as { message?: unknown; cause?: unknown }
    const own = typeof message === "string" && message.length > 0 ? message : undefined
    // SqlError and friends wrap the driver's error; its message is the informative one.
    const deeper = inner !== undefined && inner !== cause ? describe(inner) : undefined
    if (own !== undefined && deeper !== undefined && deeper !== own && !own.includes(deeper)) return `${own}: ${deeper}`
    return own ?? deeper ?? String(cause)
  }
  return String(cause)
}

export const infrastructureError = (what: string) => (cause: unknown) =>
  new InfrastructureError({ message: `${what}: ${describe(cause)}`, cause })

/** A connection URL without its password (`postgres://user:***@host/db`): enough to tell which server. */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "(a URL that does not parse)"
  }
}
