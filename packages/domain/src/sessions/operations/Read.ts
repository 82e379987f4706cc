/**
 * Reads of checkout sessions (the API's GET, by reference, search; the CLI's operator GET): each
 * applies expiry to what it reads (ExpireSessions.touch) and answers the API's view.
 */
import { Effect, Option } from "effect"
import { CheckoutSessionNotFound } from "../../kernel/Errors.ts"
import * as Search from "../../kernel/Search.ts"
import type { SearchInput } from "../../kernel/Search.ts"
import * as Session from "../CheckoutSession.ts"
import { CheckoutSessionRepo, PublicUrl } from "../SessionPorts.ts"
import { touch } from "./ExpireSessions.ts"

/** The session as the API shows it, under this server's public URL. */
export const viewOf = (session: Session.CheckoutSession) =>
  Effect.gen(function*() {
    return Session.sessionView(session, yield* PublicUrl)
  })

/** The session `id` of the account (any account, for the operator), expiry applied. */
export const load = (accountId: string | undefined, id: string) =>
  Effect.gen(function*() {
    const sessions = yield* CheckoutSessionRepo
    const found = yield* (accountId === undefined ? sessions.findAny(id) : sessions.find(accountId, id))
    if (Option.isNone(found)) return yield* new CheckoutSessionNotFound({ message: `No checkout session ${id}` })
    return yield* touch(found.value)
  })

export const get = (accountId: string | undefined, id: string) => Effect.flatMap(load(accountId, id), viewOf)

export const byReference = (accountId: string, reference: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* CheckoutSessionRepo).findNewestByReference(accountId, reference)
    if (Option.isNone(found)) return yield* new CheckoutSessionNotFound({ message: `No checkout session with merchant_reference ${reference}` })
    return yield* viewOf(yield* touch(found.value))
  })

export const search = (accountId: string, input: SearchInput) =>
  Effect.gen(function*() {
    const sessions = yield* CheckoutSessionRepo
    // One statement for the page; `touch` writes only for a session past its expiry the sweeper has not closed yet.
    return yield* Search.search(input, (q) => sessions.search(accountId, q), (page) => Effect.forEach(page, (s) => Effect.flatMap(touch(s), viewOf)))
  })
