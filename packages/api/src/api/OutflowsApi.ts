/**
 * Refunds and payouts (contract.md, "Other endpoints whose shape the spec leaves open"): create
 * (201) and read by id. Request fields are all optional in the schema so that the domain answers
 * with the spec's own codes (`ambiguous_original_transaction_target`, `refund_amount_invalid`, …);
 * the schema refuses only wrong JSON types.
 */
import { ID_PREFIXES, prefixed as idOf } from "../Ids.ts"
import * as Payment from "../PaymentFields.ts"
import { OUTFLOW_STATUSES } from "../Statuses.ts"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Code, Description, Id, Reference } from "./Bounded.ts"
import { Target as Original } from "./PaymentSchemas.ts"

const optional = Schema.optional

/** The original (channel_id: the channel the caller believes holds it, contract.md Providers) and the amount. */
const Target = { ...Original, amount: optional(Code) }

export const CreateRefundRequest = Schema.Struct({ ...Target, reason: optional(Description), refund_reference: optional(Reference) })
export const CreatePayoutRequest = Schema.Struct({ ...Target, payout_reference: optional(Reference) })

const viewFields = {
  id: Id,
  transaction_id: Id,
  order_id: Id,
  original_transaction_id: Id,
  amount: Schema.Number,
  currency: Code,
  status: Schema.Literals(OUTFLOW_STATUSES),
  decline_code: optional(Reference),
  processing_profile: optional(Reference),
  created_at: Code,
  updated_at: Code
}

/** A refund as the API answers it. */
export const RefundView = Schema.Struct({ ...viewFields, reason: optional(Description), refund_reference: optional(Reference) })
/** A payout as the API answers it. */
export const PayoutView = Schema.Struct({ ...viewFields, payment_instrument: Payment.PaymentInstrument, payout_reference: optional(Reference) })

export class RefundsApi extends HttpApiGroup.make("refunds")
  .annotate(OpenApi.Description, "Refunds of a settled payment or capture, in full or in part.")
  .add(
  HttpApiEndpoint.post("create", "/v1/refunds", { payload: CreateRefundRequest, success: RefundView.pipe(HttpApiSchema.status(201)) }).annotate(OpenApi.Summary, "Create a refund")
    .annotate(OpenApi.Description, "Refunds one settlement (a completed payment or capture), named by exactly one of order_id, transaction_id, merchant_reference. " +
      "The refundable balance is what the settlement took less its refunds and its payouts; omitted amount refunds the remaining balance."),
  HttpApiEndpoint.get("get", "/v1/refunds/:id", { params: { id: idOf(ID_PREFIXES.refund) }, success: RefundView }).annotate(OpenApi.Summary, "Retrieve a refund")
    .annotate(OpenApi.Description, "One refund of this account by its id; any other id is 404.")
) {}

export class PayoutsApi extends HttpApiGroup.make("payouts")
  .annotate(OpenApi.Description, "Payouts to the card of an original payment.")
  .add(
  HttpApiEndpoint.post("create", "/v1/payouts", { payload: CreatePayoutRequest, success: PayoutView.pipe(HttpApiSchema.status(201)) }).annotate(OpenApi.Summary, "Create a payout")
    .annotate(OpenApi.Description, "Pays out to the card instrument of an original payment, against one of its settlements as a refund is: named by exactly one of " +
      "order_id, transaction_id, merchant_reference (a payment captured in parts: the capture's transaction_id). " +
      "The original must have settled (captured, not voided or refunded in full; else 409 original_transaction_not_eligible), and the amount is at most " +
      "the account's allowance: the settlement's amount less its refunds and earlier payouts (the balance refunds draw on too), or the operator's " +
      "per-payout and daily limits when set (over: 400 validation_failed naming amount). " +
      "Send a payout_reference: only the reference makes a retry after a lost answer safe (409 duplicate_merchant_reference_id)."),
  HttpApiEndpoint.get("get", "/v1/payouts/:id", { params: { id: idOf(ID_PREFIXES.payout) }, success: PayoutView }).annotate(OpenApi.Summary, "Retrieve a payout")
    .annotate(OpenApi.Description, "One payout of this account by its id; any other id is 404 payout_not_found.")
) {}
