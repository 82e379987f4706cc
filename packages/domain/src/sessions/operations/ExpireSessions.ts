/**
 * Checkout session expiry (not a payment window's: payments/operations/ExpireWindows.ts closes those).
 * A session past its expires_at is expired when next touched, by the API or the hosted page (spec: "a
 * GET shortly after expires_at may still say open"), or by the sweeper's round, whichever comes first.
 */
import { Clock, Effect, Option } from "effect"
import { isoOf } from "../../kernel/Time.ts"
import { closeEach } from "../../payments/operations/ExpireWindows.ts"
import * as Session from "../CheckoutSession.ts"
import { CheckoutSessionRepo } from "../SessionPorts.ts"
import { close } from "./Close.ts"

/** Pure: a live session whose expires_at has come (at `now`, ms). */
export const isOverdue = (session: Session.CheckoutSession, now: number): boolean =>
  Session.isLive(session.status) && Date.parse(session.expires_at) <= now

/** Applies expiry to a session being read; answers the session as it now stands. */
export const touch = (session: Session.CheckoutSession) =>
  Effect.gen(function*() {
    if (!isOverdue(session, yield* Clock.currentTimeMillis)) return session
    const reread = Effect.map((yield* CheckoutSessionRepo).findAny(session.id), Option.getOrThrow)
    return yield* close(session, "expired").pipe(
      // Someone else ended it meanwhile, or an attempt is at the provider: read what is there.
      Effect.catchTags({ InvalidSessionState: () => reread, CardPaymentInProgress: () => reread })
    )
  })

/**
 * The sweeper's round: expires overdue sessions nobody touched (and emits their events); returns how
 * many. One that cannot end now (ended meanwhile, an attempt at the provider) is skipped quietly; any
 * other failure is logged and the round goes on to the next session.
 */
export const expireSessions = Effect.gen(function*() {
  const due = yield* (yield* CheckoutSessionRepo).listOverdue(isoOf(yield* Clock.currentTimeMillis), 100)
  return yield* closeEach("checkout session expiry", due, (s) =>
    close(s, "expired").pipe(
      Effect.as(true),
      Effect.catchTags({ InvalidSessionState: () => Effect.succeed(false), CardPaymentInProgress: () => Effect.succeed(false) })
    ))
})
