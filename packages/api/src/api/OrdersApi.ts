import { OrderId, TransactionId } from "../Ids.ts"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Reference } from "./Bounded.ts"
import { AmountMismatchDecisionRequest, OrderView, page, SearchRequest, TransactionView } from "./PaymentSchemas.ts"

export class OrdersApi extends HttpApiGroup.make("orders")
  .annotate(OpenApi.Description, "Orders: the merchant-facing record of a payment or transfer, with its attempts.")
  .add(
  HttpApiEndpoint.get("get", "/v1/orders/:id", { params: { id: OrderId }, success: OrderView }).annotate(OpenApi.Summary, "Retrieve an order")
    .annotate(OpenApi.Description, "One order of this account by its id, with its transactions' ids; any other id is 404 order_not_found."),
  HttpApiEndpoint.get("byReference", "/v1/orders/by-reference/:merchant_reference", {
    params: { merchant_reference: Reference },
    success: OrderView
  }).annotate(OpenApi.Summary, "Retrieve an order by reference")
    .annotate(OpenApi.Description, "The order with this merchant_reference; none is 404 order_not_found."),
  HttpApiEndpoint.post("search", "/v1/orders/search", { payload: SearchRequest, success: page(OrderView) }).annotate(OpenApi.Summary, "Search orders")
    .annotate(OpenApi.Description, "This account's orders, filtered by status, creation time, profile or reference; a page of at most `limit` (1–100, default 20) and the cursor of the next."),
  HttpApiEndpoint.post("amountMismatchDecision", "/v1/orders/:id/amount_mismatch_decision", {
    params: { id: OrderId },
    payload: AmountMismatchDecisionRequest,
    success: OrderView
  }).annotate(OpenApi.Summary, "Decide an amount mismatch")
    .annotate(OpenApi.Description, "Accepts an under- or overpaid payment as received, or declines it: the funds go back to its refund_destination.")
) {}

export class TransactionsApi extends HttpApiGroup.make("transactions")
  .annotate(OpenApi.Description, "Transactions: each attempt against a provider within an order.")
  .add(
  HttpApiEndpoint.get("get", "/v1/transactions/:id", { params: { id: TransactionId }, success: TransactionView }).annotate(OpenApi.Summary, "Retrieve a transaction")
    .annotate(OpenApi.Description, "One transaction (an attempt against a provider) of this account by its id; any other id is 404 transaction_not_found."),
  HttpApiEndpoint.post("search", "/v1/transactions/search", { payload: SearchRequest, success: page(TransactionView) }).annotate(OpenApi.Summary, "Search transactions")
    .annotate(OpenApi.Description, "This account's transactions, filtered by status, creation time, profile or reference; a page of at most `limit` (1–100, default 20) and the cursor of the next.")
) {}
