/**
 * The merchant API as one value: the server routes, the OpenAPI document (`/v1/openapi.json`), the
 * reference page (`/docs`) and typed clients all derive from it. One group per resource.
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { CustomersApi } from "./api/CustomersApi.ts"
import { OrdersApi, TransactionsApi } from "./api/OrdersApi.ts"
import { PayoutsApi, RefundsApi } from "./api/OutflowsApi.ts"
import { PaymentMethodsApi } from "./api/PaymentMethodsApi.ts"
import { PaymentsApi } from "./api/PaymentsApi.ts"
import { SessionsApi, SessionTestHelpersApi } from "./api/SessionsApi.ts"
import { TestHelpersApi } from "./api/TestHelpersApi.ts"
import { TransfersApi } from "./api/TransfersApi.ts"
import { VaultApi } from "./api/VaultApi.ts"
import { WebhookDeliveriesApi, WebhookEndpointsApi } from "./api/WebhooksApi.ts"
import { ApiKeyAuth, RequestValidation } from "./Middleware.ts"

export class Api extends HttpApi.make("tender")
  .add(PaymentsApi)
  .add(SessionsApi)
  .add(OrdersApi)
  .add(TransactionsApi)
  .add(TransfersApi)
  .add(PaymentMethodsApi)
  .add(TestHelpersApi)
  .add(SessionTestHelpersApi)
  .add(VaultApi)
  .add(WebhookEndpointsApi)
  .add(WebhookDeliveriesApi)
  .add(CustomersApi)
  .add(RefundsApi)
  .add(PayoutsApi)
  .middleware(RequestValidation)
  .middleware(ApiKeyAuth)
  // Report every offending field at once (errors[]), not only the first.
  .annotate(HttpApi.PayloadParseOptions, { errors: "all" })
  .annotate(HttpApi.QueryParseOptions, { errors: "all" })
  .annotateMerge(OpenApi.annotations({
    title: "Tender API",
    version: "1",
    description:
      "Payment orchestration. Every request carries `Authorization: Bearer sk_…` and `X-Signature: t=…, v1=…` " +
      "(HMAC-SHA256 of t + path with query + raw body under the account's signing secret); every response is " +
      "signed the same way. Errors are `{code, message, request_id, errors?}`."
  }))
{}
