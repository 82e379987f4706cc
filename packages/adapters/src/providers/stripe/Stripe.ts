/**
 * The Stripe provider's parts, for whoever wires a Stripe channel: the PaymentProvider mapping,
 * the notification verifier, and the wire-level fake that tests and dev runs point it at.
 */
export * as Client from "./StripeClient.ts"
export * as Declines from "./StripeDeclines.ts"
export * as Fake from "./StripeFake.ts"
export * as Notifications from "./StripeNotifications.ts"
export * as Provider from "./StripeProvider.ts"
