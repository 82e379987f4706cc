import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Code } from "./Bounded.ts"

export const PaymentMethodView = Schema.Struct({
  code: Schema.String,
  next_action_type: Schema.String,
  required_fields: Schema.Array(Schema.String)
})

export class PaymentMethodsApi extends HttpApiGroup.make("paymentMethods")
  .annotate(OpenApi.Description, "The payment methods live for a country and currency, and the fields each needs.")
  .add(
  HttpApiEndpoint.get("list", "/v1/payment-methods", {
    query: { country: Code, currency: Code },
    success: Schema.Struct({ data: Schema.Array(PaymentMethodView) })
  }).annotate(OpenApi.Summary, "List payment methods")
    .annotate(OpenApi.Description, "Methods live for a country and currency, and the fields each one needs.")
) {}
