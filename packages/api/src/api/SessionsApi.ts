import { Schema } from "effect"
import { ID_PREFIXES, prefixed } from "../Ids.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Limits from "../Limits.ts"
import * as Payment from "../PaymentFields.ts"
import { SESSION_STATUSES } from "../Statuses.ts"
import { Code, Email, Id, Int, int, list, Name, Reference, Url } from "./Bounded.ts"
import { CardRequest, CustomerInput, page, SearchRequest } from "./PaymentSchemas.ts"

const optional = Schema.optional
const SessionId = prefixed(ID_PREFIXES.checkoutSession)

/** A checkout session as the API answers it (and as session events carry it). */
export const SessionView = Schema.Struct({
  id: Id,
  url: Url,
  status: Schema.Literals(SESSION_STATUSES),
  merchant_reference: Reference,
  order_id: Id,
  amount: Schema.Number,
  currency: Code,
  country: optional(Code),
  capture_method: optional(Schema.Literal("manual")),
  payment_methods: Schema.NullOr(list(Code)),
  straight_through: Schema.Boolean,
  max_payment_attempts: Int,
  attempts: Int,
  expires_at: Code,
  transaction_id: Schema.NullOr(Id),
  next_action: Schema.NullOr(Payment.NextAction),
  customer: Schema.NullOr(Payment.Customer),
  success_url: Url,
  cancel_url: Url,
  locale: Schema.NullOr(Code),
  line_items: Schema.NullOr(list(Schema.Struct({ name: Name, quantity: Int, unit_amount: Schema.Number }), Limits.MAX_LINE_ITEMS)),
  collect_address: Schema.Boolean,
  collect_phone: Schema.Boolean,
  processing_profile: Schema.NullOr(Reference),
  created_at: Code
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
  max_payment_attempts: optional(Int),
  expires_at: optional(Code),
  locale: optional(Code),
  line_items: optional(list(Schema.Struct({ name: Name, quantity: int(1, Limits.MAX_QUANTITY), unit_amount: Code }), Limits.MAX_LINE_ITEMS)),
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
  HttpApiEndpoint.get("get", "/v1/checkout/sessions/:id", { params: { id: SessionId }, success: SessionView }).annotate(OpenApi.Summary, "Retrieve a checkout session")
    .annotate(OpenApi.Description, "One checkout session of this account by its id; any other id is 404 checkout_session_not_found."),
  HttpApiEndpoint.get("byReference", "/v1/checkout/sessions/by-reference/:merchant_reference", {
    params: { merchant_reference: Reference },
    success: SessionView
  }).annotate(OpenApi.Summary, "Retrieve a checkout session by reference")
    .annotate(OpenApi.Description, "The most recent session with the reference."),
  HttpApiEndpoint.post("search", "/v1/checkout/sessions/search", { payload: SearchRequest, success: page(SessionView) }).annotate(OpenApi.Summary, "Search checkout sessions")
    .annotate(OpenApi.Description, "This account's checkout sessions, filtered by status, creation time, profile or reference; a page of at most `limit` (1–100, default 20) and the cursor of the next."),
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
