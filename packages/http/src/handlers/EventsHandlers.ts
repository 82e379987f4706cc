import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Webhooks } from "@tender/domain"
import { Api } from "../Api.ts"
import { CurrentAccount, run, runRead } from "../RequestContext.ts"

export const EventsHandlers = HttpApiBuilder.group(
  Api,
  "events",
  Effect.fn(function*(handlers) {
    const webhooks = yield* Webhooks
    return handlers
      // `run`, not `runRead`: the feed reads the primary, whose transactions bound what it may serve
      // (a replica's snapshot is not the primary's); EventRepo.feed.
      .handle("feed", ({ query }) =>
        Effect.flatMap(CurrentAccount, (account) =>
          run(webhooks.readFeed(account, {
            ...query,
            types: query.types === undefined ? undefined : query.types.split(",").map((t) => t.trim()).filter((t) => t !== "")
          }))))
      .handle("get", ({ params }) => Effect.flatMap(CurrentAccount, (account) => runRead(webhooks.getAccountEvent(account, params.id))))
  })
)
