/**
 * The JSON shapes the API answers with, in one place: the view schemas its endpoints declare. The
 * domain's views modules take their types from here (`typeof OrderView.Type`), so a view is written
 * once and the compiler holds what the domain builds to what the API documents.
 */
export { CustomerView } from "./api/CustomersApi.ts"
export { PayoutView, RefundView } from "./api/OutflowsApi.ts"
export { AdditionalIdentifier, ConsentView, OrderView, PaymentSnapshot, TransactionView } from "./api/PaymentSchemas.ts"
export { SessionView } from "./api/SessionsApi.ts"
export { TransferView } from "./api/TransfersApi.ts"
export { AttemptView, DeliveryView, EndpointView } from "./api/WebhooksApi.ts"
