/**
 * Orders and transactions: the records every payment flow writes, as one namespace (`Payment` in the
 * package's index). An order is the net result of a payment across its attempts (Order.ts); a
 * transaction is one attempt at the provider (Transaction.ts). Amounts are integer minor units.
 */
export * from "./PaymentFields.ts"
export { arrivedAmount, Order } from "./Order.ts"
export { customerReturnUrl, Transaction } from "./Transaction.ts"
// Search pages are the kernel's (kernel/Search.ts); named here too, as the API's readers of payments know them.
export type { Page, SearchQuery } from "../kernel/Search.ts"
