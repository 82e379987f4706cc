/**
 * The ids and references Tender makes up on Adyen, read both by the adapter (what it sends and how it
 * reads answers) and by the notification reader (what a notification is about): a module of their
 * own, so that neither of those two imports the other for them.
 */

/** Lookup's probe: a cancel of this (non-existent) payment, with this reference. */
export const FENCE_PSP = "TENDERFENCE00000"
export const FENCE_REFERENCE = "tender-lookup-fence"

/** A capture's provider id: the payment's pspReference (refunds need it) and the capture's (its notification). */
export const captureId = (paymentPsp: string, capturePsp: string) => `${paymentPsp}/${capturePsp}`
