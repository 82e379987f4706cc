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

/**
 * The useful line of an unknown failure, for the human half of an `InfrastructureError`. Driver
 * errors come wrapped (SqlError → reason → the server's error): the chain's distinct messages are
 * joined, outermost first.
 */
export const causeMessage = (cause: unknown): string => {
  const messages: Array<string> = []
  for (let current = cause, depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    const message = typeof current === "object" ? (current as { message?: unknown }).message : String(current)
    if (typeof message === "string" && message.length > 0 && !messages.some((m) => m.includes(message))) {
      messages.push(message)
    }
    current = typeof current === "object" ? (current as { cause?: unknown }).cause : undefined
  }
  return messages.length > 0 ? messages.join(": ") : String(cause)
}

export const infrastructureError = (what: string) => (cause: unknown) =>
  new InfrastructureError({ message: `${what}: ${causeMessage(cause)}`, cause })

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
