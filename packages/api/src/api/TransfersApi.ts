/** Transfers (contract.md, Transfers): create, read by id, execute a card transfer. */
import { Schema } from "effect"
import { ID_PREFIXES, OrderId, prefixed } from "../Ids.ts"
import * as Payment from "../PaymentFields.ts"
import { TRANSFER_STATUSES } from "../Statuses.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Code, Email, Id, Name, Reference, Text } from "./Bounded.ts"

const optional = Schema.optional
const TransferId = prefixed(ID_PREFIXES.transfer)

/** A transfer as the API answers it. */
export const TransferView = Schema.Struct({
  id: Id,
  order_id: Id,
  transaction_id: Id,
  merchant_reference: Reference,
  status: Schema.Literals(TRANSFER_STATUSES),
  amount: Schema.Number,
  currency: Code,
  country: Code,
  payment_method: Code,
  payment_instrument: Payment.PaymentInstrument,
  next_action: Schema.NullOr(Payment.NextAction),
  decline_code: optional(Reference),
  channel_id: optional(Reference),
  processing_profile: optional(Reference),
  created_at: Code,
  updated_at: Code
})

// Every string is bounded (Bounded.ts, Limits.ts): the document shows the bound.
const text = optional(Text)
const Address = Schema.Struct({ line1: text, line2: text, city: text, state: text, postal_code: text, country: text })

// Every field is optional: the domain checks presence with every other rule, so one answer names
// every offending field and keeps the spec's codes. Unknown keys are ignored (spec: "Unused fields
// are ignored"); only wrong JSON types are refused here.
export const CreateTransferRequest = Schema.Struct({
  amount: optional(Code),
  currency: optional(Code),
  country: optional(Code),
  merchant_reference: optional(Reference),
  payment_method: optional(Schema.Struct({
    code: optional(Code),
    details: optional(Schema.Struct({
      iban: text,
      account_number: text,
      bic_swift: text,
      bank_code: text,
      branch_code: text,
      bank_name: text,
      account_type: text,
      wallet_address: text,
      account_reference: text,
      card_token: optional(Reference),
      holder_name: optional(Name),
      holder_email: optional(Email),
      holder_phone: text,
      document_id: text,
      holder_address: optional(Address),
      first_name: text,
      middle_name: text,
      last_name: text,
      date_of_birth: text,
      bank_address: optional(Schema.Union([Text, Address]))
    }))
  })),
  channel_id: optional(Reference),
  processing_profile: optional(Reference)
})

export const ExecuteTransferRequest = Schema.Struct({ card_token: optional(Reference) })

export class TransfersApi extends HttpApiGroup.make("transfers")
  .annotate(OpenApi.Description, "Transfers: money sent to a destination instrument (bank account, wallet or card).")
  .add(
  HttpApiEndpoint.post("create", "/v1/transfers", {
    payload: CreateTransferRequest,
    success: TransferView.pipe(HttpApiSchema.status(201))
  }).annotate(OpenApi.Summary, "Create a transfer")
    .annotate(OpenApi.Description, "Sends money to a destination instrument; a card destination answers requires_action (collect_card), then execute. Answered 502 provider_unavailable, nothing was paid: the same request with the same merchant_reference attempts it again (within a day)."),
  HttpApiEndpoint.get("get", "/v1/transfers/:id", { params: { id: TransferId }, success: TransferView }).annotate(OpenApi.Summary, "Retrieve a transfer")
    .annotate(OpenApi.Description, "One transfer of this account by its id; any other id is 404 transfer_not_found."),
  HttpApiEndpoint.post("execute", "/v1/transfers/:order_id/execute", {
    params: { order_id: OrderId },
    payload: ExecuteTransferRequest,
    success: TransferView
  }).annotate(OpenApi.Summary, "Execute a card transfer")
    .annotate(OpenApi.Description, "Executes a card transfer awaiting card collection, once; card_token replaces its card. Answered 502 provider_unavailable, nothing was paid and the transfer awaits execute again: requires_action with next_action null (the card is collected; no customer step is left, only this call, with the same card or a replacement card_token).")
) {}
