/**
 * Adyen's HMAC scheme for standard (payment) notifications, the signing side: the signature is
 * base64(HMAC-SHA256(key, data)) where the key is the hex string shown in the Customer Area,
 * decoded to bytes, and data is
 * `pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success`
 * (absent fields as empty strings). The fake signs with it; the adapter verifies with the official
 * library's HmacValidator (AdyenNotifications.ts), so each checks the other.
 */
import { createHmac } from "node:crypto"

export interface SignedFields {
  readonly pspReference: string
  readonly originalReference?: string | undefined
  readonly merchantAccountCode: string
  readonly merchantReference: string
  readonly amount: { readonly value: number; readonly currency: string }
  readonly eventCode: string
  readonly success: string
}

export const dataToSign = (item: SignedFields): string =>
  [
    item.pspReference,
    item.originalReference ?? "",
    item.merchantAccountCode,
    item.merchantReference,
    String(item.amount.value),
    item.amount.currency,
    item.eventCode,
    item.success
  ].join(":")

export const sign = (item: SignedFields, hexKey: string): string =>
  createHmac("sha256", Buffer.from(hexKey, "hex")).update(dataToSign(item), "utf8").digest("base64")
