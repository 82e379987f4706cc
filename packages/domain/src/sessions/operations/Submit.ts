/**
 * Operation: the hosted form submitted (POST /checkout/{id}), or the merchant's test helper acting as
 * its customer (POST /v1/checkout/sessions/{id}/attempt). A typed card is vaulted first, then the
 * attempt runs as every session attempt does (Attempt.ts, through the Payments use case).
 */
import { Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { CardTokens } from "../../cards/CardTokens.ts"
import { CheckoutSessionNotFound, ValidationFailed } from "../../kernel/Errors.ts"
import type { AccountId } from "../../kernel/Ids.ts"
import { AccountRepo } from "../../accounts/AccountPorts.ts"
import { Payments } from "../../payments/Payments.ts"
import { refuseUnroutable } from "../../payments/operations/Route.ts"
import type { SubmitInput } from "../SessionRequest.ts"
import { CheckoutSessionRepo } from "../SessionPorts.ts"
import { touch } from "./ExpireSessions.ts"
import { hostedViewAfter } from "./HostedView.ts"
import { get, load } from "./Read.ts"

/** The form's attempt on session `id`; nothing answered (the caller reads what became of it). */
const attemptOn = (id: string, input: SubmitInput) =>
  Effect.gen(function*() {
    const found = yield* (yield* CheckoutSessionRepo).findAny(id)
    if (Option.isNone(found)) return yield* new CheckoutSessionNotFound({ message: `No checkout session ${id}` })
    // create refuses such sessions; this stops one stored any other way before any provider call.
    yield* refuseUnroutable({ id: found.value.account_id, mode: found.value.livemode ? "live" : "test" })
    const session = yield* touch(found.value)
    const details = input.payment_method.details
    let cardToken = details?.card_token
    if (details?.card !== undefined) {
      const account = Option.getOrThrow(yield* (yield* AccountRepo).findById(session.account_id as AccountId))
      // The card's problems named where the attempt carries it (`payment_method.details.card.number`).
      const card = yield* (yield* CardTokens).tokenize(account, details.card).pipe(
        Effect.mapError((e) => new ValidationFailed({ message: e.message, errors: e.errors?.map((x) => ({ ...x, field: `payment_method.details.card.${x.field}` })) }))
      )
      cardToken = card.token
    }
    yield* (yield* Payments).attemptSession(session.id, {
      payment_method: {
        code: input.payment_method.code,
        details: { card_token: cardToken, document_id: details?.document_id, collect_card: details?.collect_card }
      },
      customer: input.customer
    })
  })

/** The hosted form: answers the page's view of the session afterwards. */
export const submit = (id: string, input: SubmitInput) => Effect.andThen(attemptOn(id, input), hostedViewAfter(id))

/** The test helper: a session of `account` only; answers the API's view of it afterwards. */
export const attemptAsCustomer = (account: Account, id: string, input: SubmitInput) =>
  Effect.gen(function*() {
    yield* load(account.id, id)
    yield* attemptOn(id, input)
    return yield* get(account.id, id)
  })
