/**
 * The hosted checkout page's words in the five languages it speaks, and how a request picks one:
 * the session's `locale` when the merchant set a supported one, else the customer's first supported
 * Accept-Language entry, else English.
 *
 * A locale keeps the full tag it came from (`pt-BR`, `es-MX`) because numbers, money and dates are
 * formatted for the region while the words only depend on the language.
 */

export const LANGUAGES = ["en", "es", "pt", "nl", "de"] as const
export type Language = (typeof LANGUAGES)[number]

export interface Locale {
  readonly language: Language
  /** A canonical BCP 47 tag for Intl formatting (`pt-BR`, or just `pt`). */
  readonly tag: string
}

export const DEFAULT_LOCALE: Locale = { language: "en", tag: "en" }

const isLanguage = (value: string): value is Language => (LANGUAGES as ReadonlyArray<string>).includes(value)

/** `pt_br`, `PT-BR` → `pt-BR`; `undefined` when the tag is malformed or names another language. */
export const toLocale = (raw: string): Locale | undefined => {
  const cleaned = raw.trim().replace(/_/g, "-")
  if (cleaned === "" || cleaned === "*") return undefined
  let tag: string
  try {
    tag = Intl.getCanonicalLocales(cleaned)[0] ?? cleaned
  } catch {
    return undefined
  }
  const language = tag.split("-")[0]!.toLowerCase()
  return isLanguage(language) ? { language, tag } : undefined
}

/** Accept-Language entries, most preferred first (`q` descending, ties in the order sent). */
const preferences = (header: string): ReadonlyArray<string> =>
  header
    .split(",")
    .map((entry, index) => {
      const [range = "", ...params] = entry.split(";").map((s) => s.trim())
      const q = params.find((p) => p.startsWith("q="))
      const weight = q === undefined ? 1 : Number(q.slice(2))
      return { range, weight: Number.isFinite(weight) ? weight : 0, index }
    })
    .filter((p) => p.range !== "" && p.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index)
    .map((p) => p.range)

/**
 * What country names and their order depend on: the language and the region (`pt-BR`), without the
 * variants, extensions and private-use parts a caller's Accept-Language may vary at will.
 */
export const regionalTag = (locale: Locale): string => {
  const region = new Intl.Locale(locale.tag).region
  return region === undefined ? locale.language : `${locale.language}-${region}`
}

export const resolveLocale = (sessionLocale: string | null | undefined, acceptLanguage: string | undefined): Locale => {
  const fromSession = sessionLocale === null || sessionLocale === undefined ? undefined : toLocale(sessionLocale)
  if (fromSession !== undefined) return fromSession
  for (const range of preferences(acceptLanguage ?? "")) {
    const locale = toLocale(range)
    if (locale !== undefined) return locale
  }
  return DEFAULT_LOCALE
}

export type DocumentKind = "cpf" | "curp_or_rfc" | "cedula"
export type StepKind = "redirect" | "qr" | "voucher" | "bank_transfer" | "collect_card" | "collect_cvv"

export interface Messages {
  readonly checkout: string
  readonly orderReference: (reference: string) => string
  readonly orderSummary: string
  readonly total: string
  readonly testMode: string
  readonly testCardHint: (number: string) => string
  readonly chooseMethod: string
  readonly payWith: (method: string) => string
  /** Names that differ by language; the others are brand names (`methodName`). */
  readonly methodNames: Readonly<Record<string, string>>
  /** One line under each method in the chooser, by the step it starts with. */
  readonly methodHints: Readonly<Record<StepKind, string>>
  /** The card element (its frame labels its own fields): not complete yet when Pay is pressed. */
  readonly cardIncomplete: string
  /** Shown without scripts: the card element is a script's frame. */
  readonly cardNeedsScript: string
  readonly documents: Readonly<Record<DocumentKind, string>>
  readonly email: string
  readonly phone: string
  readonly billingAddress: string
  readonly addressLine1: string
  readonly city: string
  readonly postalCode: string
  readonly country: string
  readonly optional: string
  /** The submit button, by the step the method starts with. */
  readonly pay: (amount: string) => string
  readonly continueTo: (method: string) => string
  readonly showQr: string
  readonly getVoucher: string
  readonly getTransferDetails: string
  readonly redirectNote: (method: string) => string
  readonly cancel: string
  readonly declines: Readonly<Record<string, string>>
  readonly declineFallback: string
  readonly tryAgain: string
  readonly attemptsLeft: (count: number) => string
  readonly fieldRequired: string
  readonly fieldInvalid: string
  readonly formInvalid: string
  readonly methodUnavailable: string
  readonly genericError: string
  readonly redirectTitle: string
  readonly redirectText: string
  readonly continue: string
  readonly qrTitle: string
  readonly qrText: string
  readonly qrAlt: string
  readonly qrCopy: string
  readonly cryptoAddress: string
  readonly cryptoAmount: string
  readonly openApp: string
  readonly payInBrowser: string
  readonly openPaymentPage: string
  readonly waiting: string
  readonly checkStatus: string
  readonly payBefore: string
  readonly voucherTitle: string
  readonly voucherText: string
  readonly reference: string
  readonly barcode: string
  readonly openVoucher: string
  readonly transferTitle: string
  readonly transferText: string
  readonly amount: string
  readonly clabe: string
  readonly bank: string
  readonly beneficiary: string
  readonly completedTitle: string
  readonly completedText: (merchant: string) => string
  readonly failedTitle: string
  readonly failedText: string
  readonly expiredTitle: string
  readonly expiredText: string
  readonly canceledTitle: string
  readonly canceledText: string
  readonly returnTo: (merchant: string) => string
  readonly notFoundTitle: string
  readonly notFoundText: string
  readonly footer: string
}

/**
 * One/other plural forms through Intl, so each language's rule (not English's) decides: Portuguese
 * counts 0 as "one", for instance.
 */
const plural = (language: Language, one: (n: number) => string, other: (n: number) => string) => {
  const rules = new Intl.PluralRules(language)
  return (n: number) => rules.select(n) === "one" ? one(n) : other(n)
}

const en: Messages = {
  checkout: "Checkout",
  orderReference: (r) => `Order ${r}`,
  orderSummary: "Order summary",
  total: "Total",
  testMode: "Test mode · no real money moves",
  testCardHint: (n) => `Test card: ${n}, any future date, any CVC.`,
  chooseMethod: "Choose how to pay",
  payWith: (m) => `Pay with ${m}`,
  methodNames: { card: "Card", crypto: "Crypto", spei: "SPEI bank transfer" },
  methodHints: {
    collect_card: "Credit or debit card",
    collect_cvv: "Credit or debit card",
    redirect: "Pay on the provider's page",
    qr: "Scan a QR code with your app",
    voucher: "Pay with a voucher",
    bank_transfer: "Pay by bank transfer"
  },
  cardIncomplete: "Enter your card number, expiry date and security code.",
  cardNeedsScript: "Card payments need JavaScript. Turn it on in your browser, or choose another payment method.",
  documents: { cpf: "CPF", curp_or_rfc: "CURP or RFC", cedula: "ID number (cédula)" },
  email: "Email",
  phone: "Phone number",
  billingAddress: "Billing address",
  addressLine1: "Street and number",
  city: "City",
  postalCode: "Postal code",
  country: "Country",
  optional: "optional",
  pay: (a) => `Pay ${a}`,
  continueTo: (m) => `Continue to ${m}`,
  showQr: "Show QR code",
  getVoucher: "Get the voucher",
  getTransferDetails: "Get the transfer details",
  redirectNote: (m) => `You will finish the payment on the ${m} page.`,
  cancel: "Cancel payment",
  declines: {
    card_declined: "Your card was declined.",
    insufficient_funds: "Your card has insufficient funds.",
    expired_card: "Your card has expired.",
    invalid_number: "The card number is not valid.",
    authentication_failed: "Your bank could not verify the payment.",
    provider_unavailable: "The payment service is temporarily unavailable.",
    payment_declined: "The payment was declined.",
    expired: "The time to complete the payment ran out.",
    canceled_by_customer: "The payment was canceled.",
    merchant_operation_not_allowed_status: "This merchant cannot accept payments right now."
  },
  declineFallback: "The payment did not go through.",
  tryAgain: "Try again or choose another payment method.",
  attemptsLeft: plural("en", (n) => `${n} attempt left.`, (n) => `${n} attempts left.`),
  fieldRequired: "This field is required.",
  fieldInvalid: "Check this field.",
  formInvalid: "Some details are missing or not valid.",
  methodUnavailable: "This payment method is not available for this payment.",
  genericError: "Something went wrong. Please try again.",
  redirectTitle: "Continue your payment",
  redirectText: "Finish the payment on the next page.",
  continue: "Continue",
  qrTitle: "Scan to pay",
  qrText: "Scan the QR code with your banking or payment app.",
  qrAlt: "QR code for the payment",
  qrCopy: "Or copy this code",
  cryptoAddress: "Address",
  cryptoAmount: "Amount to send",
  openApp: "Open the app",
  payInBrowser: "Pay in the browser",
  openPaymentPage: "Open the payment page",
  waiting: "This page shows the result once your payment arrives.",
  checkStatus: "Check payment status",
  payBefore: "Pay before",
  voucherTitle: "Your payment voucher",
  voucherText: "Pay the amount with this voucher before it expires.",
  reference: "Reference",
  barcode: "Barcode number",
  openVoucher: "Open the voucher",
  transferTitle: "Pay by bank transfer",
  transferText: "Transfer exactly this amount using these details.",
  amount: "Amount",
  clabe: "CLABE",
  bank: "Bank",
  beneficiary: "Beneficiary",
  completedTitle: "Payment complete",
  completedText: (m) => `Thank you! ${m} has received your payment.`,
  failedTitle: "Payment failed",
  failedText: "No attempts are left for this payment.",
  expiredTitle: "This payment link has expired",
  expiredText: "Return to the store to start again.",
  canceledTitle: "Payment canceled",
  canceledText: "No money was taken.",
  returnTo: (m) => `Return to ${m}`,
  notFoundTitle: "Payment page not found",
  notFoundText: "Check the link the store sent you.",
  footer: "Secure payment by Tender"
}

const es: Messages = {
  checkout: "Pago",
  orderReference: (r) => `Pedido ${r}`,
  orderSummary: "Resumen del pedido",
  total: "Total",
  testMode: "Modo de prueba · no se mueve dinero real",
  testCardHint: (n) => `Tarjeta de prueba: ${n}, cualquier fecha futura y cualquier CVC.`,
  chooseMethod: "Elige cómo pagar",
  payWith: (m) => `Pagar con ${m}`,
  methodNames: { card: "Tarjeta", crypto: "Criptomonedas", spei: "Transferencia SPEI" },
  methodHints: {
    collect_card: "Tarjeta de crédito o débito",
    collect_cvv: "Tarjeta de crédito o débito",
    redirect: "Paga en la página del proveedor",
    qr: "Escanea un código QR con tu app",
    voucher: "Paga con una ficha de pago",
    bank_transfer: "Paga con una transferencia bancaria"
  },
  cardIncomplete: "Ingresa el número de tarjeta, la fecha de vencimiento y el código de seguridad.",
  cardNeedsScript: "Para pagar con tarjeta se necesita JavaScript. Actívalo en tu navegador o elige otro medio de pago.",
  documents: { cpf: "CPF", curp_or_rfc: "CURP o RFC", cedula: "Número de cédula" },
  email: "Correo electrónico",
  phone: "Teléfono",
  billingAddress: "Dirección de facturación",
  addressLine1: "Calle y número",
  city: "Ciudad",
  postalCode: "Código postal",
  country: "País",
  optional: "opcional",
  pay: (a) => `Pagar ${a}`,
  continueTo: (m) => `Continuar a ${m}`,
  showQr: "Mostrar código QR",
  getVoucher: "Obtener la ficha de pago",
  getTransferDetails: "Ver los datos de la transferencia",
  redirectNote: (m) => `Terminarás el pago en la página de ${m}.`,
  cancel: "Cancelar pago",
  declines: {
    card_declined: "Tu tarjeta fue rechazada.",
    insufficient_funds: "Tu tarjeta no tiene fondos suficientes.",
    expired_card: "Tu tarjeta está vencida.",
    invalid_number: "El número de tarjeta no es válido.",
    authentication_failed: "Tu banco no pudo verificar el pago.",
    provider_unavailable: "El servicio de pago no está disponible en este momento.",
    payment_declined: "El pago fue rechazado.",
    expired: "Se agotó el tiempo para completar el pago.",
    canceled_by_customer: "El pago fue cancelado.",
    merchant_operation_not_allowed_status: "Este comercio no puede aceptar pagos en este momento."
  },
  declineFallback: "El pago no se completó.",
  tryAgain: "Vuelve a intentarlo o elige otro método de pago.",
  attemptsLeft: plural("es", (n) => `Te queda ${n} intento.`, (n) => `Te quedan ${n} intentos.`),
  fieldRequired: "Este campo es obligatorio.",
  fieldInvalid: "Revisa este campo.",
  formInvalid: "Faltan datos o no son válidos.",
  methodUnavailable: "Este método de pago no está disponible para este pago.",
  genericError: "Algo salió mal. Inténtalo de nuevo.",
  redirectTitle: "Continúa con tu pago",
  redirectText: "Termina el pago en la siguiente página.",
  continue: "Continuar",
  qrTitle: "Escanea para pagar",
  qrText: "Escanea el código QR con la app de tu banco o de pagos.",
  qrAlt: "Código QR del pago",
  qrCopy: "O copia este código",
  cryptoAddress: "Dirección",
  cryptoAmount: "Monto a enviar",
  openApp: "Abrir la app",
  payInBrowser: "Pagar en el navegador",
  openPaymentPage: "Abrir la página de pago",
  waiting: "Esta página muestra el resultado cuando llegue tu pago.",
  checkStatus: "Consultar el estado del pago",
  payBefore: "Paga antes del",
  voucherTitle: "Tu ficha de pago",
  voucherText: "Paga el monto con esta ficha antes de que venza.",
  reference: "Referencia",
  barcode: "Número del código de barras",
  openVoucher: "Abrir la ficha",
  transferTitle: "Paga con una transferencia",
  transferText: "Transfiere exactamente este monto con estos datos.",
  amount: "Monto",
  clabe: "CLABE",
  bank: "Banco",
  beneficiary: "Beneficiario",
  completedTitle: "Pago completado",
  completedText: (m) => `¡Gracias! ${m} recibió tu pago.`,
  failedTitle: "El pago no se realizó",
  failedText: "No quedan intentos para este pago.",
  expiredTitle: "Este enlace de pago venció",
  expiredText: "Vuelve a la tienda para empezar de nuevo.",
  canceledTitle: "Pago cancelado",
  canceledText: "No se realizó ningún cobro.",
  returnTo: (m) => `Volver a ${m}`,
  notFoundTitle: "No encontramos esta página de pago",
  notFoundText: "Revisa el enlace que te envió la tienda.",
  footer: "Pago seguro con Tender"
}

const pt: Messages = {
  checkout: "Pagamento",
  orderReference: (r) => `Pedido ${r}`,
  orderSummary: "Resumo do pedido",
  total: "Total",
  testMode: "Modo de teste · nenhum dinheiro real é movimentado",
  testCardHint: (n) => `Cartão de teste: ${n}, qualquer data futura e qualquer CVC.`,
  chooseMethod: "Escolha como pagar",
  payWith: (m) => `Pagar com ${m}`,
  methodNames: { card: "Cartão", crypto: "Criptomoedas", spei: "Transferência SPEI" },
  methodHints: {
    collect_card: "Cartão de crédito ou débito",
    collect_cvv: "Cartão de crédito ou débito",
    redirect: "Pague na página do provedor",
    qr: "Escaneie um QR code com seu app",
    voucher: "Pague com um documento de pagamento",
    bank_transfer: "Pague por transferência bancária"
  },
  cardIncomplete: "Informe o número do cartão, a validade e o código de segurança.",
  cardNeedsScript: "Para pagar com cartão é preciso JavaScript. Ative-o no seu navegador ou escolha outra forma de pagamento.",
  documents: { cpf: "CPF", curp_or_rfc: "CURP ou RFC", cedula: "Número da cédula" },
  email: "E-mail",
  phone: "Telefone",
  billingAddress: "Endereço de cobrança",
  addressLine1: "Rua e número",
  city: "Cidade",
  postalCode: "Código postal (CEP)",
  country: "País",
  optional: "opcional",
  pay: (a) => `Pagar ${a}`,
  continueTo: (m) => `Continuar para ${m}`,
  showQr: "Gerar QR code",
  getVoucher: "Gerar documento de pagamento",
  getTransferDetails: "Ver os dados da transferência",
  redirectNote: (m) => `Você vai concluir o pagamento na página de ${m}.`,
  cancel: "Cancelar pagamento",
  declines: {
    card_declined: "Seu cartão foi recusado.",
    insufficient_funds: "Seu cartão não tem saldo suficiente.",
    expired_card: "Seu cartão está vencido.",
    invalid_number: "O número do cartão não é válido.",
    authentication_failed: "Seu banco não conseguiu verificar o pagamento.",
    provider_unavailable: "O serviço de pagamento está temporariamente indisponível.",
    payment_declined: "O pagamento foi recusado.",
    expired: "O prazo para concluir o pagamento terminou.",
    canceled_by_customer: "O pagamento foi cancelado.",
    merchant_operation_not_allowed_status: "Este comerciante não pode aceitar pagamentos no momento."
  },
  declineFallback: "O pagamento não foi concluído.",
  tryAgain: "Tente novamente ou escolha outra forma de pagamento.",
  attemptsLeft: plural("pt", (n) => `Resta ${n} tentativa.`, (n) => `Restam ${n} tentativas.`),
  fieldRequired: "Este campo é obrigatório.",
  fieldInvalid: "Verifique este campo.",
  formInvalid: "Alguns dados estão faltando ou não são válidos.",
  methodUnavailable: "Esta forma de pagamento não está disponível para este pagamento.",
  genericError: "Algo deu errado. Tente novamente.",
  redirectTitle: "Continue seu pagamento",
  redirectText: "Conclua o pagamento na próxima página.",
  continue: "Continuar",
  qrTitle: "Escaneie para pagar",
  qrText: "Escaneie o QR code com o app do seu banco ou de pagamentos.",
  qrAlt: "QR code do pagamento",
  qrCopy: "Ou copie este código",
  cryptoAddress: "Endereço",
  cryptoAmount: "Valor a enviar",
  openApp: "Abrir o app",
  payInBrowser: "Pagar no navegador",
  openPaymentPage: "Abrir a página de pagamento",
  waiting: "Esta página mostra o resultado quando o pagamento chegar.",
  checkStatus: "Verificar o status do pagamento",
  payBefore: "Pague até",
  voucherTitle: "Seu documento de pagamento",
  voucherText: "Pague o valor com este documento antes do vencimento.",
  reference: "Referência",
  barcode: "Linha digitável",
  openVoucher: "Abrir o documento",
  transferTitle: "Pague por transferência bancária",
  transferText: "Transfira exatamente este valor com estes dados.",
  amount: "Valor",
  clabe: "CLABE",
  bank: "Banco",
  beneficiary: "Beneficiário",
  completedTitle: "Pagamento concluído",
  completedText: (m) => `Obrigado! ${m} recebeu seu pagamento.`,
  failedTitle: "O pagamento não foi concluído",
  failedText: "Não restam tentativas para este pagamento.",
  expiredTitle: "Este link de pagamento expirou",
  expiredText: "Volte à loja para começar de novo.",
  canceledTitle: "Pagamento cancelado",
  canceledText: "Nenhum valor foi cobrado.",
  returnTo: (m) => `Voltar para ${m}`,
  notFoundTitle: "Página de pagamento não encontrada",
  notFoundText: "Verifique o link que a loja enviou.",
  footer: "Pagamento seguro com Tender"
}

const nl: Messages = {
  checkout: "Afrekenen",
  orderReference: (r) => `Bestelling ${r}`,
  orderSummary: "Besteloverzicht",
  total: "Totaal",
  testMode: "Testmodus · er wordt geen echt geld overgemaakt",
  testCardHint: (n) => `Testkaart: ${n}, een datum in de toekomst en een willekeurige CVC.`,
  chooseMethod: "Kies hoe je betaalt",
  payWith: (m) => `Betalen met ${m}`,
  methodNames: { card: "Kaart", crypto: "Crypto", spei: "SPEI-overboeking" },
  methodHints: {
    collect_card: "Creditcard of debitcard",
    collect_cvv: "Creditcard of debitcard",
    redirect: "Betaal op de pagina van de aanbieder",
    qr: "Scan een QR-code met je app",
    voucher: "Betaal met een betaalbewijs",
    bank_transfer: "Betaal met een bankoverschrijving"
  },
  cardIncomplete: "Vul je kaartnummer, vervaldatum en beveiligingscode in.",
  cardNeedsScript: "Voor betalen met een kaart is JavaScript nodig. Zet het aan in je browser of kies een andere betaalmethode.",
  documents: { cpf: "CPF", curp_or_rfc: "CURP of RFC", cedula: "Identiteitsnummer (cédula)" },
  email: "E-mailadres",
  phone: "Telefoonnummer",
  billingAddress: "Factuuradres",
  addressLine1: "Straat en huisnummer",
  city: "Plaats",
  postalCode: "Postcode",
  country: "Land",
  optional: "optioneel",
  pay: (a) => `${a} betalen`,
  continueTo: (m) => `Verder naar ${m}`,
  showQr: "QR-code tonen",
  getVoucher: "Betaalbewijs aanmaken",
  getTransferDetails: "Overboekingsgegevens tonen",
  redirectNote: (m) => `Je rondt de betaling af op de pagina van ${m}.`,
  cancel: "Betaling annuleren",
  declines: {
    card_declined: "Je kaart is geweigerd.",
    insufficient_funds: "Er staat onvoldoende saldo op je kaart.",
    expired_card: "Je kaart is verlopen.",
    invalid_number: "Het kaartnummer is ongeldig.",
    authentication_failed: "Je bank kon de betaling niet verifiëren.",
    provider_unavailable: "De betaaldienst is tijdelijk niet beschikbaar.",
    payment_declined: "De betaling is geweigerd.",
    expired: "De tijd om de betaling af te ronden is verstreken.",
    canceled_by_customer: "De betaling is geannuleerd.",
    merchant_operation_not_allowed_status: "Deze verkoper kan op dit moment geen betalingen aannemen."
  },
  declineFallback: "De betaling is niet gelukt.",
  tryAgain: "Probeer het opnieuw of kies een andere betaalmethode.",
  attemptsLeft: plural("nl", (n) => `Nog ${n} poging over.`, (n) => `Nog ${n} pogingen over.`),
  fieldRequired: "Dit veld is verplicht.",
  fieldInvalid: "Controleer dit veld.",
  formInvalid: "Sommige gegevens ontbreken of zijn ongeldig.",
  methodUnavailable: "Deze betaalmethode is niet beschikbaar voor deze betaling.",
  genericError: "Er is iets misgegaan. Probeer het opnieuw.",
  redirectTitle: "Ga verder met je betaling",
  redirectText: "Rond de betaling af op de volgende pagina.",
  continue: "Doorgaan",
  qrTitle: "Scan om te betalen",
  qrText: "Scan de QR-code met je bank- of betaalapp.",
  qrAlt: "QR-code voor de betaling",
  qrCopy: "Of kopieer deze code",
  cryptoAddress: "Adres",
  cryptoAmount: "Te versturen bedrag",
  openApp: "Open de app",
  payInBrowser: "Betalen in de browser",
  openPaymentPage: "Betaalpagina openen",
  waiting: "Deze pagina toont het resultaat zodra je betaling binnen is.",
  checkStatus: "Betaalstatus controleren",
  payBefore: "Betaal vóór",
  voucherTitle: "Je betaalbewijs",
  voucherText: "Betaal het bedrag met dit betaalbewijs voordat het verloopt.",
  reference: "Referentie",
  barcode: "Barcodenummer",
  openVoucher: "Betaalbewijs openen",
  transferTitle: "Betaal met een bankoverschrijving",
  transferText: "Maak precies dit bedrag over met deze gegevens.",
  amount: "Bedrag",
  clabe: "CLABE",
  bank: "Bank",
  beneficiary: "Begunstigde",
  completedTitle: "Betaling geslaagd",
  completedText: (m) => `Bedankt! ${m} heeft je betaling ontvangen.`,
  failedTitle: "Betaling mislukt",
  failedText: "Er zijn geen pogingen meer over voor deze betaling.",
  expiredTitle: "Deze betaallink is verlopen",
  expiredText: "Ga terug naar de winkel om opnieuw te beginnen.",
  canceledTitle: "Betaling geannuleerd",
  canceledText: "Er is niets afgeschreven.",
  returnTo: (m) => `Terug naar ${m}`,
  notFoundTitle: "Betaalpagina niet gevonden",
  notFoundText: "Controleer de link die de winkel je heeft gestuurd.",
  footer: "Veilig betalen met Tender"
}

const de: Messages = {
  checkout: "Bezahlen",
  orderReference: (r) => `Bestellung ${r}`,
  orderSummary: "Bestellübersicht",
  total: "Gesamt",
  testMode: "Testmodus · es fließt kein echtes Geld",
  testCardHint: (n) => `Testkarte: ${n}, ein beliebiges zukünftiges Datum und eine beliebige Prüfnummer.`,
  chooseMethod: "Zahlungsart wählen",
  payWith: (m) => `Mit ${m} bezahlen`,
  methodNames: { card: "Karte", crypto: "Krypto", spei: "SPEI-Überweisung" },
  methodHints: {
    collect_card: "Kredit- oder Debitkarte",
    collect_cvv: "Kredit- oder Debitkarte",
    redirect: "Auf der Seite des Anbieters bezahlen",
    qr: "QR-Code mit Ihrer App scannen",
    voucher: "Mit einem Zahlschein bezahlen",
    bank_transfer: "Per Banküberweisung bezahlen"
  },
  cardIncomplete: "Geben Sie Kartennummer, Ablaufdatum und Prüfnummer ein.",
  cardNeedsScript: "Für die Kartenzahlung wird JavaScript benötigt. Aktivieren Sie es im Browser oder wählen Sie eine andere Zahlungsart.",
  documents: { cpf: "CPF", curp_or_rfc: "CURP oder RFC", cedula: "Ausweisnummer (Cédula)" },
  email: "E-Mail-Adresse",
  phone: "Telefonnummer",
  billingAddress: "Rechnungsadresse",
  addressLine1: "Straße und Hausnummer",
  city: "Ort",
  postalCode: "Postleitzahl",
  country: "Land",
  optional: "optional",
  pay: (a) => `${a} bezahlen`,
  continueTo: (m) => `Weiter zu ${m}`,
  showQr: "QR-Code anzeigen",
  getVoucher: "Zahlschein erstellen",
  getTransferDetails: "Überweisungsdaten anzeigen",
  redirectNote: (m) => `Sie schließen die Zahlung auf der Seite von ${m} ab.`,
  cancel: "Zahlung abbrechen",
  declines: {
    card_declined: "Ihre Karte wurde abgelehnt.",
    insufficient_funds: "Ihre Karte ist nicht ausreichend gedeckt.",
    expired_card: "Ihre Karte ist abgelaufen.",
    invalid_number: "Die Kartennummer ist ungültig.",
    authentication_failed: "Ihre Bank konnte die Zahlung nicht bestätigen.",
    provider_unavailable: "Der Zahlungsdienst ist vorübergehend nicht erreichbar.",
    payment_declined: "Die Zahlung wurde abgelehnt.",
    expired: "Die Zeit für die Zahlung ist abgelaufen.",
    canceled_by_customer: "Die Zahlung wurde abgebrochen.",
    merchant_operation_not_allowed_status: "Dieser Händler kann derzeit keine Zahlungen annehmen."
  },
  declineFallback: "Die Zahlung ist nicht durchgegangen.",
  tryAgain: "Versuchen Sie es erneut oder wählen Sie eine andere Zahlungsart.",
  attemptsLeft: plural("de", (n) => `Noch ${n} Versuch.`, (n) => `Noch ${n} Versuche.`),
  fieldRequired: "Dieses Feld ist erforderlich.",
  fieldInvalid: "Bitte prüfen Sie dieses Feld.",
  formInvalid: "Einige Angaben fehlen oder sind ungültig.",
  methodUnavailable: "Diese Zahlungsart ist für diese Zahlung nicht verfügbar.",
  genericError: "Etwas ist schiefgelaufen. Bitte versuchen Sie es erneut.",
  redirectTitle: "Zahlung fortsetzen",
  redirectText: "Schließen Sie die Zahlung auf der nächsten Seite ab.",
  continue: "Weiter",
  qrTitle: "Zum Bezahlen scannen",
  qrText: "Scannen Sie den QR-Code mit Ihrer Banking- oder Bezahl-App.",
  qrAlt: "QR-Code für die Zahlung",
  qrCopy: "Oder kopieren Sie diesen Code",
  cryptoAddress: "Adresse",
  cryptoAmount: "Zu sendender Betrag",
  openApp: "App öffnen",
  payInBrowser: "Im Browser bezahlen",
  openPaymentPage: "Zahlungsseite öffnen",
  waiting: "Diese Seite zeigt das Ergebnis, sobald Ihre Zahlung eingeht.",
  checkStatus: "Zahlungsstatus prüfen",
  payBefore: "Zahlen bis",
  voucherTitle: "Ihr Zahlschein",
  voucherText: "Bezahlen Sie den Betrag mit diesem Zahlschein vor Ablauf.",
  reference: "Referenz",
  barcode: "Barcode-Nummer",
  openVoucher: "Zahlschein öffnen",
  transferTitle: "Per Banküberweisung bezahlen",
  transferText: "Überweisen Sie genau diesen Betrag mit diesen Angaben.",
  amount: "Betrag",
  clabe: "CLABE",
  bank: "Bank",
  beneficiary: "Empfänger",
  completedTitle: "Zahlung abgeschlossen",
  completedText: (m) => `Vielen Dank! ${m} hat Ihre Zahlung erhalten.`,
  failedTitle: "Zahlung fehlgeschlagen",
  failedText: "Für diese Zahlung sind keine Versuche mehr übrig.",
  expiredTitle: "Dieser Zahlungslink ist abgelaufen",
  expiredText: "Kehren Sie zum Shop zurück, um neu zu beginnen.",
  canceledTitle: "Zahlung abgebrochen",
  canceledText: "Es wurde nichts abgebucht.",
  returnTo: (m) => `Zurück zu ${m}`,
  notFoundTitle: "Zahlungsseite nicht gefunden",
  notFoundText: "Prüfen Sie den Link, den Ihnen der Shop gesendet hat.",
  footer: "Sichere Zahlung mit Tender"
}

export const MESSAGES: Readonly<Record<Language, Messages>> = { en, es, pt, nl, de }

export const messages = (locale: Locale): Messages => MESSAGES[locale.language]

/** A decline code in the customer's words; unknown codes get the general sentence. */
export const declineMessage = (t: Messages, code: string): string => t.declines[code] ?? t.declineFallback
