import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Payments } from "@tender/domain"
import { Api } from "../Api.ts"
import { trackPayment } from "../Metrics.ts"
import { CurrentAccount, run, runRead } from "../RequestContext.ts"

export const PaymentsHandlers = HttpApiBuilder.group(
  Api,
  "payments",
  Effect.fn(function*(handlers) {
    const payments = yield* Payments
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => run(trackPayment("create", payload.payment_method?.code)(payments.create(account, payload)))))
      .handle("capture", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => run(trackPayment("capture")(payments.capture(account, payload)))))
      .handle("void", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => run(trackPayment("void")(payments.void(account, payload)))))
      .handle("completeThreeDs", ({ params }) =>
        Effect.flatMap(CurrentAccount, (account) => run(payments.completeThreeDs(account, params.id))))
      .handle("cardStorageConsent", ({ params, payload }) =>
        Effect.flatMap(CurrentAccount, (account) => run(payments.assertConsent(account, params.id, payload))))
  })
)

export const OrdersHandlers = HttpApiBuilder.group(
  Api,
  "orders",
  Effect.fn(function*(handlers) {
    const payments = yield* Payments
    return handlers
      .handle("get", ({ params }) => Effect.flatMap(CurrentAccount, (account) => runRead(payments.getOrder(account, params.id))))
      .handle("byReference", ({ params }) =>
        Effect.flatMap(CurrentAccount, (account) => runRead(payments.getOrderByReference(account, params.merchant_reference))))
      .handle("search", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => runRead(payments.searchOrders(account, payload))))
      .handle("amountMismatchDecision", ({ params, payload }) =>
        Effect.flatMap(CurrentAccount, (account) => run(payments.decideAmountMismatch(account, params.id, payload))))
  })
)

export const TransactionsHandlers = HttpApiBuilder.group(
  Api,
  "transactions",
  Effect.fn(function*(handlers) {
    const payments = yield* Payments
    return handlers
      .handle("get", ({ params }) => Effect.flatMap(CurrentAccount, (account) => runRead(payments.getTransaction(account, params.id))))
      .handle("search", ({ payload }) =>
        Effect.flatMap(CurrentAccount, (account) => runRead(payments.searchTransactions(account, payload))))
  })
)
