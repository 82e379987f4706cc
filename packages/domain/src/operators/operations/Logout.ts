/** Operation: log out — the session row goes, so the same cookie replayed later is refused. */
import { Effect } from "effect"
import { ConsoleSessionRepo, OperatorCredentials } from "../OperatorPorts.ts"

export const logout = (sessionToken: string) =>
  Effect.gen(function*() {
    const hash = yield* (yield* OperatorCredentials).hashToken(sessionToken)
    yield* (yield* ConsoleSessionRepo).remove(hash)
  })
