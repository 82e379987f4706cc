/**
 * The merchant API as one value: the server routes, the OpenAPI document (`/v1/openapi.json`), the
 * reference page (`/docs`) and typed clients all derive from it. One group per resource. The server
 * (packages/http) implements it and adds the browser SDK's routes to the document it serves
 * (`withClientRoutes` there); @tender/client derives its typed client from it.
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { CustomersApi } from "./api/CustomersApi.ts"
import { EventsApi } from "./api/EventsApi.ts"
import { OrdersApi, TransactionsApi } from "./api/OrdersApi.ts"
import { PayoutsApi, RefundsApi } from "./api/OutflowsApi.ts"
import { PaymentMethodsApi } from "./api/PaymentMethodsApi.ts"
import { PaymentsApi } from "./api/PaymentsApi.ts"
import { SessionsApi, SessionTestHelpersApi } from "./api/SessionsApi.ts"
import { TestHelpersApi } from "./api/TestHelpersApi.ts"
import { TransfersApi } from "./api/TransfersApi.ts"
import { VaultApi } from "./api/VaultApi.ts"
import { WebhookDeliveriesApi, WebhookEndpointsApi } from "./api/WebhooksApi.ts"
import { documentAnswers } from "./DocumentedAnswers.ts"
import { ApiKeyAuth, RequestValidation } from "./Middleware.ts"

/**
 * Every operation needs both credentials (the gateway checks the key, then the signature), so the
 * signature scheme is ANDed into each requirement the bearer middleware declared, not offered as an
 * alternative. The header is not a key: the scheme's description says how it is computed.
 */
const SIGNATURE_SCHEME = "signature"
/**
 * Adds the request-signature scheme to the OpenAPI document and to every operation's security, beside the bearer key.
 */
export const requireSignature = (spec: Record<string, any>): Record<string, any> => {
  spec.components.securitySchemes.bearer = {
    ...spec.components.securitySchemes.bearer,
    description: "The account's secret key: `Authorization: Bearer sk_test_…` or `sk_live_…`. Publishable keys are refused."
  }
  spec.components.securitySchemes[SIGNATURE_SCHEME] = {
    type: "apiKey",
    in: "header",
    name: "X-Signature",
    description:
      "`t=<unix seconds>, v1=<hex>`: HMAC-SHA256 under the account's signing secret over t, then the path with its " +
      "query exactly as sent, then the raw body bytes (empty for GET). Accepted within 300 s of the server clock. " +
      "Every response carries the same header over the request's path and the response body; verify it before trusting the body."
  }
  for (const operations of Object.values<Record<string, any>>(spec.paths)) {
    for (const operation of Object.values<any>(operations)) {
      if (Array.isArray(operation.security)) {
        operation.security = operation.security.map((requirement: object) => ({ ...requirement, [SIGNATURE_SCHEME]: [] }))
      }
    }
  }
  return spec
}

/**
 * The document's last steps, in order: the signature beside the bearer key, then `addRoutes` (the
 * server adds the browser SDK's routes there), then what the gateway answers every operation with
 * (DocumentedAnswers.ts), so that added routes get those too.
 */
export const finishDocument = (addRoutes: (spec: Record<string, any>) => Record<string, any> = (spec) => spec) =>
(spec: Record<string, any>): Record<string, any> => documentAnswers(addRoutes(requireSignature(spec)))

/**
 * Where the document is served from. It cannot know where it is deployed: the variable lets a reader
 * (or /docs) point it at their own instance, defaulting to `tender serve`'s address. The same server
 * serves test mode and live mode (the key chooses), so the environment is whichever the instance is.
 * `x-internal: false`: the API is for merchants' servers, outside the operator's network.
 */
const SERVER = {
  url: "{origin}",
  description: "A Tender instance: production, staging or a local one (`tender serve`); test and live mode are both served, the API key chooses",
  variables: { origin: { default: "http://127.0.0.1:8080", description: "Scheme, host and port of the Tender instance" } },
  "x-internal": false
}

/** The merchant API: every endpoint group, its schemas and errors; the server implements it, clients derive from it. */
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
  .add(EventsApi)
  .middleware(RequestValidation)
  .middleware(ApiKeyAuth)
  // Report every offending field at once (errors[]), not only the first.
  .annotate(HttpApi.PayloadParseOptions, { errors: "all" })
  .annotate(HttpApi.QueryParseOptions, { errors: "all" })
  .annotateMerge(OpenApi.annotations({
    title: "Tender API",
    version: "1",
    // The repository's licence (LICENSE), by its SPDX identifier (OpenAPI 3.1).
    license: { name: "MIT", identifier: "MIT" },
    description:
      "Payment orchestration. Every request carries `Authorization: Bearer sk_…` and `X-Signature: t=…, v1=…` " +
      "(HMAC-SHA256 of t + path with query + raw body under the account's signing secret); every response is " +
      "signed the same way. Errors are `{code, message, request_id, errors?}`. The browser SDK's `/v1/client/…` " +
      "routes (tag browserSdk) are the exception: a publishable key and a client secret, unsigned, the SDK's error object.",
    servers: [SERVER],
    // The server's document adds the browser SDK's routes (packages/http/src/Api.ts) before the
    // last step: they have their own scheme, and the signature is the merchant API's alone.
    transform: finishDocument()
  }))
{}
