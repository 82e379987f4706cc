import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Limits from "../Limits.ts"
import * as Payment from "../PaymentFields.ts"
import { SESSION_STATUSES } from "../Statuses.ts"
import { Code, Email, list, Name, Reference, Url } from "./Bounded.ts"
import { CardRequest, CustomerInput, page, SearchRequest } from "./PaymentSchemas.ts"

const optional = Schema.optional
const SessionId = Schema.String.check(Schema.isPattern(/^cs_[A-Za-z0-9]{8,64}$/))

/** A checkout session as the API answers it (and as session events carry it). */
export const SessionView = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  status: Schema.Literals(SESSION_STATUSES),
  merchant_reference: Schema.String,
  order_id: Schema.String,
  amount: Schema.Number,
  currency: Schema.String,
  country: optional(Schema.String),
  capture_method: optional(Schema.Literal("manual")),
  payment_methods: Schema.NullOr(Schema.Array(Schema.String)),
  straight_through: Schema.Boolean,
  max_payment_attempts: Schema.Int,
  attempts: Schema.Int,
  expires_at: Schema.String,
  transaction_id: Schema.NullOr(Schema.String),
  next_action: Schema.NullOr(Payment.NextAction),
  customer: Schema.NullOr(Payment.Customer),
  success_url: Schema.String,
  cancel_url: Schema.String,
  locale: Schema.NullOr(Schema.String),
  line_items: Schema.NullOr(Schema.Array(Schema.Struct({ name: Schema.String, quantity: Schema.Int, unit_amount: Schema.Number }))),
  collect_address: Schema.Boolean,
  collect_phone: Schema.Boolean,
  processing_profile: Schema.NullOr(Schema.String),
  created_at: Schema.String
})

// Every string and list is bounded (Bounded.ts, Limits.ts): the document shows the bound.
export const CreateSessionRequest = Schema.Struct({
  amount: optional(Code),
  currency: optional(Code),
  country: optional(Code),
  merchant_reference: optional(Reference),
  success_url: optional(Url),
  cancel_url: optional(Url),
  capture_method: optional(Code),
  customer: optional(Schema.Struct({ email: optional(Email), name: optional(Name) })),
  payment_methods: optional(list(Code)),
  straight_through: optional(Schema.Boolean),
  max_payment_attempts: optional(Schema.Int),
  expires_at: optional(Code),
  locale: optional(Code),
  line_items: optional(list(Schema.Struct({ name: Name, quantity: Schema.Int, unit_amount: Code }), Limits.MAX_LINE_ITEMS)),
  collect_address: optional(Schema.Boolean),
  collect_phone: optional(Schema.Boolean),
  processing_profile: optional(Reference)
})

export const AttemptRequest = Schema.Struct({
  payment_method: Schema.Struct({
    code: Code,
    details: optional(Schema.Struct({
      card: optional(CardRequest),
      card_token: optional(Reference),
      document_id: optional(Code)
    }))
  }),
  customer: optional(CustomerInput)
})

export class SessionsApi extends HttpApiGroup.make("checkoutSessions")
  .annotate(OpenApi.Description, "Hosted checkout sessions: a payment page Tender hosts for the customer.")
  .add(
  HttpApiEndpoint.post("create", "/v1/checkout/sessions", {
    payload: CreateSessionRequest,
    success: SessionView.pipe(HttpApiSchema.status(201))
  }).annotate(OpenApi.Summary, "Create a checkout session")
    .annotate(OpenApi.Description, "Creates a hosted checkout session; send the customer to its url."),
  HttpApiEndpoint.get("get", "/v1/checkout/sessions/:id", { params: { id: SessionId }, success: SessionView }).annotate(OpenApi.Summary, "Retrieve a checkout session"),
  HttpApiEndpoint.get("byReference", "/v1/checkout/sessions/by-reference/:merchant_reference", {
    params: { merchant_reference: Reference },
    success: SessionView
  }).annotate(OpenApi.Summary, "Retrieve a checkout session by reference")
    .annotate(OpenApi.Description, "The most recent session with the reference."),
  HttpApiEndpoint.post("search", "/v1/checkout/sessions/search", { payload: SearchRequest, success: page(SessionView) }).annotate(OpenApi.Summary, "Search checkout sessions"),
  HttpApiEndpoint.post("cancel", "/v1/checkout/sessions/:id/cancel", { params: { id: SessionId }, success: SessionView }).annotate(OpenApi.Summary, "Cancel a checkout session")
    .annotate(OpenApi.Description, "Cancels an open or pending_action session; a final one is 409 invalid_session_state.")
) {}

export class SessionTestHelpersApi extends HttpApiGroup.make("sessionTestHelpers")
  .annotate(OpenApi.Description, "Test mode only: act as the customer on a hosted checkout session.")
  .add(
  HttpApiEndpoint.post("attempt", "/v1/test_helpers/checkout/sessions/:id/attempt", {
    params: { id: SessionId },
    payload: AttemptRequest,
    success: SessionView
  }).annotate(OpenApi.Summary, "Simulate a hosted checkout attempt")
    .annotate(OpenApi.Description, "Test mode only: acts as the customer submitting the hosted form.")
) {}
