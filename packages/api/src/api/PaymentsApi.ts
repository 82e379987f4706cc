import { Schema } from "effect"
import { OrderId } from "../Ids.ts"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Payment from "../PaymentFields.ts"
import { CaptureRequest, ConsentView, CreatePaymentRequest, PaymentSnapshot, VoidRequest } from "./PaymentSchemas.ts"

export class PaymentsApi extends HttpApiGroup.make("payments")
  .annotate(OpenApi.Description, "Direct payments: create, capture, void, finish 3-D Secure and record card-storage consent.")
  .add(
  HttpApiEndpoint.post("create", "/v1/payments", { payload: CreatePaymentRequest, success: PaymentSnapshot }).annotate(OpenApi.Summary, "Create a payment")
    .annotate(OpenApi.Description, "Creates a direct payment. A decline is 200 with status failed; only pre-flight checks are 4xx."),
  HttpApiEndpoint.post("capture", "/v1/payments/capture", { payload: CaptureRequest, success: PaymentSnapshot }).annotate(OpenApi.Summary, "Capture an authorization")
    .annotate(OpenApi.Description, "Captures a manual-capture authorization, in full or in part (final: false keeps the remainder)."),
  HttpApiEndpoint.post("void", "/v1/payments/void", { payload: VoidRequest, success: PaymentSnapshot }).annotate(OpenApi.Summary, "Void an authorization")
    .annotate(OpenApi.Description, "Releases what remains of an authorization: what is neither captured nor settling. While a capture settles the answer is `settling` with `voided_amount`, and the payment closes when that capture settles or fails; what a capture that fails held is released too (a second void transaction, made by Tender) before it closes. Not idempotent: a repeated void is 409."),
  HttpApiEndpoint.post("completeThreeDs", "/v1/payments/:id/3ds/complete", {
    params: { id: OrderId },
    payload: Schema.Struct({}),
    success: PaymentSnapshot
  }).annotate(OpenApi.Summary, "Complete 3-D Secure")
    .annotate(OpenApi.Description, "Completes a 3-D Secure challenge server to server, once the customer answered it: for payments the merchant's server created with a card token and whose challenge it shows. Idempotent. In the browser flows (the SDK's pay, the hosted checkout) the customer's answer completes the payment itself; there this only returns the snapshot."),
  HttpApiEndpoint.post("cardStorageConsent", "/v1/payments/:id/card_storage_consent", {
    params: { id: OrderId },
    payload: Payment.CardStorageConsent,
    success: ConsentView
  }).annotate(OpenApi.Summary, "Record card-storage consent")
    .annotate(OpenApi.Description, "Asserts the payment's card-storage consent: stored once; the identical consent again is safe; a different one is 409 consent_conflict.")
) {}
