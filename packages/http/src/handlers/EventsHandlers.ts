import { Effect } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Webhooks } from "@tender/domain"
import { Api } from "../Api.ts"
import { CurrentAccount, run, runRead } from "../RequestContext.ts"
import { Stopping } from "../Stopping.ts"

/**
 * The answer closes its connection: the server's stop closes idle connections once, and a reader
 * asking again at once on its kept-alive one would otherwise hold the stop as long as a wait did.
 */
const closesConnection = HttpEffect.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "connection", "close"))
)

export const EventsHandlers = HttpApiBuilder.group(
  Api,
  "events",
  Effect.fn(function*(handlers) {
    const webhooks = yield* Webhooks
    // A waiting read would hold the server's graceful stop (it waits for requests in flight): at
    // the stop it answers at once instead, from the same cursor, and its reader asks the next server.
    const stopping = (yield* Stopping).signalled
    return handlers
      // `run`, not `runRead`: the feed reads the primary, whose transactions bound what it may serve
      // (a replica's snapshot is not the primary's); EventRepo.feed.
      .handle("feed", ({ query }) =>
        Effect.flatMap(CurrentAccount, (account) => {
          const input = {
            ...query,
            types: query.types === undefined ? undefined : query.types.split(",").map((t) => t.trim()).filter((t) => t !== "")
          }
          const stopped = stopping.pipe(Effect.andThen(closesConnection), Effect.andThen(webhooks.readFeed(account, { ...input, wait: 0 })))
          return run(Effect.raceFirst(webhooks.readFeed(account, input), stopped))
        }))
      .handle("get", ({ params }) => Effect.flatMap(CurrentAccount, (account) => runRead(webhooks.getAccountEvent(account, params.id))))
  })
)
