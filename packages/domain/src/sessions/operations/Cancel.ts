/**
 * Operation: cancel a session: by its merchant (POST /v1/checkout/sessions/{id}/cancel), the operator
 * (CLI), or its customer on the hosted page. Each ends it as Close.ts decides.
 */
import { Effect, Option } from "effect"
import { CheckoutSessionNotFound } from "../../kernel/Errors.ts"
import { CheckoutSessionRepo } from "../SessionPorts.ts"
import { close } from "./Close.ts"
import { hostedViewAfter } from "./HostedView.ts"
import { load, viewOf } from "./Read.ts"

/** The merchant's (an account's) or the operator's (any account: `undefined`) cancel; answers the API's view. */
export const cancel = (accountId: string | undefined, id: string) =>
  Effect.flatMap(load(accountId, id), (s) => Effect.flatMap(close(s, "canceled"), viewOf))

/** The customer's cancel on the hosted page; answers the page's view. */
export const cancelByCustomer = (id: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* CheckoutSessionRepo).findAny(id)
    if (Option.isNone(found)) return yield* new CheckoutSessionNotFound({ message: `No checkout session ${id}` })
    yield* close(found.value, "canceled")
    return yield* hostedViewAfter(id)
  })
