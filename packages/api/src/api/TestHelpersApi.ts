import { Schema } from "effect"
import { OrderId } from "../Ids.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Code, Id, Int, Reference } from "./Bounded.ts"
import { CardRequest, OrderView, SimulateRequest } from "./PaymentSchemas.ts"

export const CardTokenRequest = CardRequest

export const CardTokenView = Schema.Struct({
  token: Id,
  brand: Code,
  last4: Code,
  bin: Code,
  exp_month: Int,
  exp_year: Int,
  funding: Code
})

export class TestHelpersApi extends HttpApiGroup.make("testHelpers")
  .annotate(OpenApi.Description, "Test mode only: act as the customer, card fields or provider to drive a flow.")
  .add(
  HttpApiEndpoint.post("createCardToken", "/v1/test_helpers/card_tokens", {
    payload: CardTokenRequest,
    success: CardTokenView.pipe(HttpApiSchema.status(201))
  }).annotate(OpenApi.Summary, "Create a test card token")
    .annotate(OpenApi.Description, "Test mode only: vaults a card and returns its token, as the secure card fields would."),
  HttpApiEndpoint.post("simulate", "/v1/test_helpers/orders/:order_id/simulate", {
    params: { order_id: OrderId },
    payload: SimulateRequest,
    success: OrderView
  }).annotate(OpenApi.Summary, "Simulate an order's next step")
    .annotate(
      OpenApi.Description,
      "Test mode only: acts as the customer or provider on the order's pending attempt; with none pending, as the provider on the order's refund or payout still pending (card 4000000000000341): succeed pays it, fail refuses it."
    ),
  HttpApiEndpoint.post("expireClientSecret", "/v1/test_helpers/client_secrets/expire", {
    payload: Schema.Struct({ client_secret: Reference }),
    success: Schema.Struct({ expired: Schema.Literal(true), expires_at: Code })
  }).annotate(OpenApi.Summary, "Expire a client secret now")
    .annotate(
      OpenApi.Description,
      "Test mode only: ends a client secret at once; the browser SDK's routes then refuse it with CLIENT_SECRET_EXPIRED."
    )
) {}
