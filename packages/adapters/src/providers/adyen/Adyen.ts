/**
 * The Adyen provider's parts, for whoever wires an Adyen channel: the PaymentProvider mapping,
 * the notification verifier, and the wire-level fake that tests and dev runs point it at.
 */
export * as Client from "./AdyenClient.ts"
export * as Declines from "./AdyenDeclines.ts"
export * as Fake from "./AdyenFake.ts"
export * as Notifications from "./AdyenNotifications.ts"
export * as Provider from "./AdyenProvider.ts"
