/**
 * Operation: the hosted checkout page's read of a session (GET /checkout/{id}). A read: it never
 * authorizes (a session's 3-D Secure answer completed its attempt already, payments/operations/
 * ThreeDs.ts); it only applies expiry, as every read does (ExpireSessions.touch), then views the
 * session with its account and attempts (SessionViews.hostedViewOf, pure).
 */
import { Effect, Option } from "effect"
import type { AccountId } from "../../kernel/Ids.ts"
import { AccountRepo } from "../../accounts/AccountPorts.ts"
import { TransactionRepo } from "../../payments/PaymentPorts.ts"
import { CheckoutSessionRepo } from "../SessionPorts.ts"
import { type HostedView, hostedViewOf } from "../SessionViews.ts"
import { touch } from "./ExpireSessions.ts"

/** The page's view of session `id`; none when there is no such session. */
export const hostedView = (id: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* CheckoutSessionRepo).findAny(id)
    if (Option.isNone(found)) return Option.none<HostedView>()
    const session = yield* touch(found.value)
    const attempts = yield* (yield* TransactionRepo).listByOrder(session.order_id)
    const account = Option.getOrThrow(yield* (yield* AccountRepo).findById(session.account_id as AccountId))
    return Option.some(hostedViewOf(session, account, attempts))
  })

/** The page's view of a session that exists (after an action on it). */
export const hostedViewAfter = (id: string) => Effect.map(hostedView(id), Option.getOrThrow)
