/** The fields page's wording (spec: wording cannot be changed; `locale` picks the language). */
import type { CardErrorCode } from "./cardInput.ts"

export type Locale = "en" | "es" | "pt" | "nl" | "de"

export interface Wording {
  readonly number: string
  readonly expiry: string
  readonly cvc: string
  readonly savedCard: string
  readonly errors: Record<CardErrorCode, string>
}

export const WORDING: Record<Locale, Wording> = {
  en: {
    number: "Card number",
    expiry: "Expiry (MM / YY)",
    cvc: "Security code",
    savedCard: "Card ending in",
    errors: {
      invalid_number: "Your card number is invalid.",
      invalid_expiry: "Your card's expiry date is invalid or in the past.",
      invalid_cvc: "Your card's security code is invalid."
    }
  },
  es: {
    number: "Número de tarjeta",
    expiry: "Vencimiento (MM / AA)",
    cvc: "Código de seguridad",
    savedCard: "Tarjeta terminada en",
    errors: {
      invalid_number: "El número de tarjeta no es válido.",
      invalid_expiry: "La fecha de vencimiento no es válida o ya pasó.",
      invalid_cvc: "El código de seguridad no es válido."
    }
  },
  pt: {
    number: "Número do cartão",
    expiry: "Validade (MM / AA)",
    cvc: "Código de segurança",
    savedCard: "Cartão final",
    errors: {
      invalid_number: "O número do cartão é inválido.",
      invalid_expiry: "A validade do cartão é inválida ou já passou.",
      invalid_cvc: "O código de segurança é inválido."
    }
  },
  nl: {
    number: "Kaartnummer",
    expiry: "Vervaldatum (MM / JJ)",
    cvc: "Beveiligingscode",
    savedCard: "Kaart eindigend op",
    errors: {
      invalid_number: "Je kaartnummer is ongeldig.",
      invalid_expiry: "De vervaldatum is ongeldig of verstreken.",
      invalid_cvc: "De beveiligingscode is ongeldig."
    }
  },
  de: {
    number: "Kartennummer",
    expiry: "Gültig bis (MM / JJ)",
    cvc: "Prüfnummer",
    savedCard: "Karte endet auf",
    errors: {
      invalid_number: "Die Kartennummer ist ungültig.",
      invalid_expiry: "Das Ablaufdatum ist ungültig oder liegt in der Vergangenheit.",
      invalid_cvc: "Die Prüfnummer ist ungültig."
    }
  }
}

/** `es-MX` → `es`; anything unknown → the browser's language, else English. */
export const resolveLocale = (requested: unknown, browser: string | undefined): Locale => {
  for (const candidate of [requested, browser]) {
    if (typeof candidate !== "string") continue
    const base = candidate.toLowerCase().split(/[-_]/)[0]
    if (base !== undefined && base in WORDING) return base as Locale
  }
  return "en"
}
