import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Code, list } from "./Bounded.ts"

/** A method the table lists (a handful; list's default bound holds them all), and the request fields it needs. */
export const PaymentMethodView = Schema.Struct({
  code: Code,
  next_action_type: Code,
  required_fields: list(Code)
})

export class PaymentMethodsApi extends HttpApiGroup.make("paymentMethods")
  .annotate(OpenApi.Description, "The payment methods live for a country and currency, and the fields each needs.")
  .add(
  HttpApiEndpoint.get("list", "/v1/payment-methods", {
    query: { country: Code, currency: Code },
    success: Schema.Struct({ data: list(PaymentMethodView) })
  }).annotate(OpenApi.Summary, "List payment methods")
    .annotate(OpenApi.Description, "Methods live for a country and currency, and the fields each one needs.")
) {}
