/**
 * The messages between the SDK (merchant page) and the fields iframe. Every message carries
 * `tender: 1` and the element's id; each side posts only to the other's exact origin and drops
 * messages from any other origin or window.
 */
import type { CardErrorCode, FieldName, FieldState } from "./cardInput.ts"

export interface TenderErrorBody {
  readonly type: "validation_error" | "authentication_error" | "api_error" | "network_error" | "integration_error"
  readonly code: string
  readonly message: string
  readonly correlationId: string | null
}

export interface CollectedCard {
  readonly token: string
  readonly brand: string | null
  readonly last4: string
  readonly bin: string
  readonly expMonth: number | null
  readonly expYear: number | null
}

export interface ElementOptions {
  readonly locale?: string | undefined
  readonly appearance?: unknown
  readonly clientSecret?: string | undefined
}

/** Parent → iframe. */
export type ToFields =
  | { readonly kind: "init"; readonly publishableKey: string; readonly options: ElementOptions }
  | { readonly kind: "update"; readonly options: ElementOptions }
  | { readonly kind: "clear" | "focus" | "blur" }
  | { readonly kind: "collect"; readonly requestId: number; readonly clientSecret: string }

export interface ChangePayload {
  readonly complete: boolean
  readonly error: TenderErrorBody | null
  readonly fields: Partial<Record<FieldName, FieldState & { readonly brand?: string }>>
}

/** Iframe → parent. */
export type FromFields =
  | { readonly kind: "hello" }
  | { readonly kind: "ready"; readonly height: number }
  | { readonly kind: "resize"; readonly height: number }
  | { readonly kind: "change"; readonly payload: ChangePayload }
  | { readonly kind: "focus" | "blur"; readonly field: FieldName }
  | { readonly kind: "collected"; readonly requestId: number; readonly card: CollectedCard | null; readonly error: TenderErrorBody | null }

export type Envelope<T> = T & { readonly tender: 1; readonly element: string }

export const isEnvelope = (data: unknown, element: string): boolean =>
  typeof data === "object" && data !== null && (data as { tender?: unknown }).tender === 1 &&
  (data as { element?: unknown }).element === element

export type { CardErrorCode }
