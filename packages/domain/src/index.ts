/**
 * @tender/domain: Tender's payment domain on Effect, to embed: the use cases (`UseCases.layer`), the
 * ports they need (provide your adapters, or @tender/adapters'), the aggregates and the errors.
 *
 * @module @tender/domain
 */
/** The Account aggregate: a merchant's record, status table, keys and settings. */
export * as Account from "./accounts/Account.ts"
/** An account's key material: issuing, rolling, and when a key authenticates. */
export * as AccountKeys from "./accounts/AccountKeys.ts"
export * from "./accounts/AccountPorts.ts"
export * from "./accounts/Accounts.ts"
/** Card number rules (Luhn, brand, length, BIN), the sandbox's test cards and their funding. */
export * as Card from "./cards/Card.ts"
export * from "./cards/CardTokens.ts"
export * from "./cards/CardRequest.ts"
/** IPv4/IPv6 CIDR parsing and matching, for accounts' IP allowlists. */
export * as Cidr from "./kernel/Cidr.ts"
/** The error vocabulary: one tagged class per spec `code`, and the helpers that build and test them. */
export * as Errors from "./kernel/Errors.ts"
export * from "./kernel/Ids.ts"
/** Currencies and amounts: ISO 4217 codes and exponents, parsing into integer minor units, and back. */
export * as Money from "./kernel/Money.ts"
export * from "./kernel/Ports.ts"
export * from "./cards/CardPorts.ts"
/** The ISO 3166-1 alpha-2 country codes the API accepts. */
export * as Countries from "./kernel/Countries.ts"
/** The payment-method catalog: where each method routes and what it needs. */
export * as PaymentMethods from "./payments/PaymentMethods.ts"
export * from "./cards/VaultAccess.ts"
/** Every use case in one layer, over the ports: what an embedding provides its adapters to. */
export * as UseCases from "./UseCases.ts"
export * from "./payments/PaymentPorts.ts"
export * from "./payments/ProviderPorts.ts"
/** Orders and transactions, the records every payment flow writes, and their fields. */
export * as Payment from "./payments/Payment.ts"
/** The status tables the aggregates share: define, step, apply and render a machine. */
export * as StateMachine from "./kernel/StateMachine.ts"
export { ORDER_STATUSES, OrderMachine, type OrderStatus, type OrderTrigger } from "./payments/Order.ts"
/** The Order aggregate: a payment's net result across its attempts, and its status table. */
export * as Order from "./payments/Order.ts"
export { awaitsSettlement, isInFlight, TRANSACTION_STATUSES, TransactionMachine, type TransactionStatus, type TransactionTrigger } from "./payments/Transaction.ts"
/** The Transaction aggregate: one attempt at the provider, and its status table. */
export * as Transaction from "./payments/Transaction.ts"
export { AUTHORIZATION_STATUSES, AuthorizationMachine, type AuthorizationStatus, type AuthorizationTrigger } from "./payments/Authorization.ts"
/** An authorization's book: what it holds, what is captured and in flight, and its status table. */
export * as Authorization from "./payments/Authorization.ts"
export * from "./kernel/Faults.ts"
export * from "./payments/Payments.ts"
/** Which provider may carry an account's money: mode guard and channel cascade. */
export * as Routing from "./channels/Routing.ts"
/** Orders and transactions as the API shows them (the wire's views, built from the records). */
export * as PaymentViews from "./payments/PaymentViews.ts"
/** A create-payment request: its input and the validation that turns it into a valid payment. */
export * as PaymentRequest from "./payments/PaymentRequest.ts"
/** The background workers (settlement, reconciliation, webhook delivery, session expiry) as layers. */
export * as Workers from "./Workers.ts"
/** Webhook endpoints and deliveries: records, status tables and retry schedule. */
export * as Webhook from "./webhooks/Webhook.ts"
export * from "./webhooks/WebhookPorts.ts"
/** Retention of the event log: what may be pruned (events, deliveries, attempts), and when. */
export * as Retention from "./webhooks/Retention.ts"
/** The account's events as a feed (`GET /v1/events`, `tender listen`): requests, pages and positions. */
export * as EventFeed from "./webhooks/EventFeed.ts"
export { DEFAULT_RETENTION, pruneRound, type RetentionOptions } from "./webhooks/operations/Prune.ts"
export * from "./webhooks/Webhooks.ts"
export type { AttemptView, DeliveryView, EndpointView, Envelope } from "./webhooks/WebhookViews.ts"
export { envelopeOf } from "./webhooks/WebhookViews.ts"
export * from "./webhooks/WebhookReceivers.ts"
export type { DeliverySearchInput } from "./webhooks/WebhookRequest.ts"
/** The CheckoutSession aggregate: a hosted payment's session, its line items and status table. */
export * as CheckoutSession from "./sessions/CheckoutSession.ts"
export * from "./sessions/SessionPorts.ts"
export * from "./sessions/Sessions.ts"
/** Cursor pagination and the search inputs shared by the list endpoints. */
export * as Search from "./kernel/Search.ts"
/** The operator console's reads: the port (search, payment story, locate) and its records. */
export * from "./console/ConsoleReads.ts"
/** The console's search form, validated against the kind searched; the rules both read adapters share. */
export * as ConsoleSearch from "./console/ConsoleSearch.ts"
/** A payment's story assembled from the records storage reads for it (both read adapters build it here). */
export * as ConsoleStory from "./console/Story.ts"
/** Refunds, payouts and transfers: the outflow records and their status tables. */
export * as MoneyOut from "./money-out/MoneyOut.ts"
export * from "./customers/CustomerPorts.ts"
export * from "./customers/Customers.ts"
/** The customer record an account stores. */
export * as Customer from "./customers/Customer.ts"
export * from "./customers/CustomerRequest.ts"
export * from "./customers/CustomerViews.ts"
export * from "./money-out/OutflowPorts.ts"
export * from "./money-out/Outflows.ts"
/** Refunds and payouts as the API shows them. */
export * as OutflowViews from "./money-out/OutflowViews.ts"
export * from "./money-out/TransferPorts.ts"
export * from "./money-out/Transfers.ts"
/** A create-transfer request: its input and the validation that turns it into a valid transfer. */
export * as TransferRequest from "./money-out/TransferRequest.ts"
/** Transfers as the API shows them. */
export * as TransferViews from "./money-out/TransferViews.ts"
export * from "./payments/ClientSecretPorts.ts"
export * from "./payments/ClientSecrets.ts"
/** The Channel aggregate: one provider account (credentials, methods, priority) an account routes through. */
export * as Channel from "./channels/Channel.ts"
/** What the deployment's provider adapters carry: names, methods, transfers and credential fields. */
export * as ProviderCatalog from "./channels/ProviderCatalog.ts"
export * from "./channels/ChannelPorts.ts"
export * from "./channels/Channels.ts"
/** Smart routing's vocabulary (issue 27): rules, route facts, the routing a transaction records, channels' health. */
export * as RoutingModel from "./channels/RoutingModel.ts"
export * from "./channels/RoutingPorts.ts"
/** Routing rules (issue 27): the file an account's routing is written in, parsed and checked, and which rule a payment's facts select. */
export * as RoutingRules from "./channels/RoutingRules.ts"
/** The routing decision of a new payment: the candidates its rules allow, then the channel chosen and the try order. */
export * as RouteDecision from "./channels/RouteDecision.ts"
/** A channel's circuit breaker: when consecutive unavailable answers open it, when it half-opens, and its probe. */
export * as Breaker from "./channels/Breaker.ts"
/** The sliding window of authorization rates per channel and segment, and the score routing ranks channels by. */
export * as SuccessRate from "./channels/SuccessRate.ts"
/** What a provider's answer says of its channel: the retryable declines, the channel-neutral ones, and its health outcome. */
export * as DeclineClasses from "./channels/DeclineClasses.ts"
/** Input bounds shared with the API's request schemas (lengths, counts, amounts). */
export * as Limits from "./kernel/Limits.ts"
/** Console operators (issue 26): roles, grants, lock-out, sessions and the audit entry. */
export * as Operator from "./operators/Operator.ts"
export * from "./operators/OperatorPorts.ts"
export * from "./operators/Operators.ts"
