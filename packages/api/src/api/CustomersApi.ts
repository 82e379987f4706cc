import { Schema } from "effect"
import { CustomerId } from "../Ids.ts"
import * as Limits from "../Limits.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Code, Email, Id, Name, text } from "./Bounded.ts"

const optional = Schema.optional

export const CreateCustomerRequest = Schema.Struct({
  email: optional(Email),
  name: optional(Name),
  phone: optional(text(Limits.MAX_PHONE))
})

export const CustomerView = Schema.Struct({
  id: Id,
  email: Schema.NullOr(Email),
  name: Schema.NullOr(Name),
  phone: Schema.NullOr(text(Limits.MAX_PHONE)),
  livemode: Schema.Boolean,
  created_at: Code
})

export class CustomersApi extends HttpApiGroup.make("customers")
  .annotate(OpenApi.Description, "Customer records that payments refer to by customer_id.")
  .add(
  HttpApiEndpoint.post("create", "/v1/customers", {
    payload: CreateCustomerRequest,
    success: CustomerView.pipe(HttpApiSchema.status(201))
  }).annotate(OpenApi.Summary, "Create a customer")
    .annotate(OpenApi.Description, "Creates a customer record; payments name it by customer_id. Fields with no value are null."),
  HttpApiEndpoint.get("get", "/v1/customers/:id", { params: { id: CustomerId }, success: CustomerView }).annotate(OpenApi.Summary, "Retrieve a customer")
    .annotate(OpenApi.Description, "One customer of this account; any other id is 404 customer_not_found.")
) {}
