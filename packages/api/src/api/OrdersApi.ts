import { OrderId, TransactionId } from "../Ids.ts"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Reference } from "./Bounded.ts"
import { AmountMismatchDecisionRequest, OrderView, page, SearchRequest, TransactionView } from "./PaymentSchemas.ts"

export class OrdersApi extends HttpApiGroup.make("orders")
  .annotate(OpenApi.Description, "Orders: the merchant-facing record of a payment or transfer, with its attempts.")
  .add(
  HttpApiEndpoint.get("get", "/v1/orders/:id", { params: { id: OrderId }, success: OrderView }).annotate(OpenApi.Summary, "Retrieve an order"),
  HttpApiEndpoint.get("byReference", "/v1/orders/by-reference/:merchant_reference", {
    params: { merchant_reference: Reference },
    success: OrderView
  }).annotate(OpenApi.Summary, "Retrieve an order by reference"),
  HttpApiEndpoint.post("search", "/v1/orders/search", { payload: SearchRequest, success: page(OrderView) }).annotate(OpenApi.Summary, "Search orders"),
  HttpApiEndpoint.post("amountMismatchDecision", "/v1/orders/:id/amount_mismatch_decision", {
    params: { id: OrderId },
    payload: AmountMismatchDecisionRequest,
    success: OrderView
  }).annotate(OpenApi.Summary, "Decide an amount mismatch")
) {}

export class TransactionsApi extends HttpApiGroup.make("transactions")
  .annotate(OpenApi.Description, "Transactions: each attempt against a provider within an order.")
  .add(
  HttpApiEndpoint.get("get", "/v1/transactions/:id", { params: { id: TransactionId }, success: TransactionView }).annotate(OpenApi.Summary, "Retrieve a transaction"),
  HttpApiEndpoint.post("search", "/v1/transactions/search", { payload: SearchRequest, success: page(TransactionView) }).annotate(OpenApi.Summary, "Search transactions")
) {}
