import { Schema } from "effect"
import { OrderId, TransactionId } from "@tender/domain"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { AmountMismatchDecisionRequest, OrderView, page, SearchRequest, TransactionView } from "./PaymentSchemas.ts"

export class OrdersApi extends HttpApiGroup.make("orders").add(
  HttpApiEndpoint.get("get", "/v1/orders/:id", { params: { id: OrderId }, success: OrderView }),
  HttpApiEndpoint.get("byReference", "/v1/orders/by-reference/:merchant_reference", {
    params: { merchant_reference: Schema.String },
    success: OrderView
  }),
  HttpApiEndpoint.post("search", "/v1/orders/search", { payload: SearchRequest, success: page(OrderView) }),
  HttpApiEndpoint.post("amountMismatchDecision", "/v1/orders/:id/amount_mismatch_decision", {
    params: { id: OrderId },
    payload: AmountMismatchDecisionRequest,
    success: OrderView
  })
) {}

export class TransactionsApi extends HttpApiGroup.make("transactions").add(
  HttpApiEndpoint.get("get", "/v1/transactions/:id", { params: { id: TransactionId }, success: TransactionView }),
  HttpApiEndpoint.post("search", "/v1/transactions/search", { payload: SearchRequest, success: page(TransactionView) })
) {}
