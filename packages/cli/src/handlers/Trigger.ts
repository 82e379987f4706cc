/**
 * The handler of `tender trigger EVENT` (commands/Trigger.ts declares it): the account's access to
 * the public API (ApiAccess.ts), refused for a live-mode account before any request; the event's
 * recipe (trigger/Recipes.ts); a table of what it made, or one JSON document.
 */
import { Errors } from "@tender/domain"
import { Effect, Option } from "effect"
import * as ApiAccess from "../ApiAccess.ts"
import type { Invocation } from "../Cli.ts"
import * as Output from "../Output.ts"
import * as Table from "../Table.ts"
import type { EventType } from "../trigger/Events.ts"
import { ApiRefused, type Call, type Made, run } from "../trigger/Recipes.ts"

interface TriggerInput {
  readonly event: EventType
  readonly account: Option.Option<string>
  readonly apiUrl: Option.Option<string>
}

interface Triggered {
  readonly event: EventType
  readonly account_id: string
  readonly objects: ReadonlyArray<Made>
}

const presentation: Output.Presentation<Triggered> = {
  json: (t) => t,
  text: (t) => `${t.event} triggered on ${t.account_id}\n` + Table.table(["kind", "id", "status"], t.objects.map((o) => [o.kind, o.id, o.status]))
}

/**
 * An answer the recipe did not expect keeps the API's code where the domain's vocabulary has it,
 * so that `--json` reports it as the server did.
 */
const asReported = (error: ApiRefused | ApiAccess.ApiAccessFailure) => {
  if (error._tag !== "ApiRefused") return error
  const known = Errors.DOMAIN_ERRORS.find((c) => c.code === error.code)
  return known === undefined ? error : new known({ message: error.message })
}

export const trigger = (input: TriggerInput, invocation: Invocation) =>
  Effect.scoped(Effect.gen(function*() {
    // Refused before the CLI issues the account a key: trigger has nothing to do in live mode.
    const access = yield* ApiAccess.acquire({
      ...input,
      refuse: (account) =>
        account.mode === "test" ? Option.none() : Option.some(new Errors.Forbidden({
          message: `trigger works in test mode only: account ${account.id} is live; pass --account with a test-mode account`
        }))
    }, invocation)
    const call: Call = (method, path, body) =>
      Effect.flatMap(ApiAccess.request(access, method, path, body), (reply) =>
        reply.status >= 200 && reply.status < 300
          ? Effect.succeed(reply.json)
          : Effect.fail(new ApiRefused({
            code: reply.json?.code ?? `http_${reply.status}`,
            message: `${method} ${path} answered ${reply.status} ${reply.json?.code ?? ""}: ${reply.json?.message ?? ""}`
          })))
    const objects = yield* run(input.event, call).pipe(Effect.mapError(asReported))
    yield* Output.print({ event: input.event, account_id: access.accountId, objects }, presentation, invocation.json)
  }))
