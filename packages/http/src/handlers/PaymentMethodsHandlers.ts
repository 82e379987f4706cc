import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Countries, Errors, Money, PaymentMethods } from "@tender/domain"
import { Api } from "../Api.ts"
import { run } from "../RequestContext.ts"

const discover = (country: string, currency: string) => {
  const errors = [
    ...(Countries.isCountry(country) ? [] : [{ field: "country", message: "must be an ISO 3166-1 alpha-2 code" }]),
    ...(Money.isCurrency(currency) ? [] : [{ field: "currency", message: "must be an ISO 4217 code" }])
  ]
  if (errors.length > 0) {
    return Effect.fail(new Errors.ValidationFailed({ message: "Invalid query parameter", errors }))
  }
  return Effect.succeed({
    data: PaymentMethods.methodsFor(country, currency).map((m) => ({
      code: m.code,
      next_action_type: m.next_action_type,
      required_fields: m.required_fields
    }))
  })
}

export const PaymentMethodsHandlers = HttpApiBuilder.group(
  Api,
  "paymentMethods",
  (handlers) => handlers.handle("list", ({ query }) => run(discover(query.country, query.currency)))
)
