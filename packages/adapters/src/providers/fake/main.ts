/**
 * `npm run fakes`: starts the Stripe and Adyen wire-level fakes on local ports and prints the
 * variables that point `npm start` (tender serve) at them, and the credentials files a channel on
 * them needs (README, "Adding a provider channel"). Runs until interrupted.
 *
 * The Stripe fake accepts any `sk_test_…` key, or only TENDER_FAKE_STRIPE_KEY when set (a live-mode
 * channel's `sk_live_…`); the Adyen fake one API key and merchant account (TENDER_FAKE_ADYEN_KEY,
 * TENDER_FAKE_ADYEN_MERCHANT; defaults below).
 */
import * as Fakes from "./Fakes.ts"

const fakes = await Fakes.start({
  stripe: { apiKey: process.env.TENDER_FAKE_STRIPE_KEY || undefined },
  adyen: { apiKey: process.env.TENDER_FAKE_ADYEN_KEY || undefined, merchantAccount: process.env.TENDER_FAKE_ADYEN_MERCHANT || undefined }
})

const lines = [
  "# Stripe and Adyen fakes are running. In the shell that runs `npm start`:",
  ...Object.entries(fakes.env).map(([name, value]) => `export ${name}=${value}`),
  "",
  "# Credentials files for `tender accounts channels add ID --provider stripe|adyen --mode test --credentials-file F`:",
  `# stripe: {"secret_key": "${process.env.TENDER_FAKE_STRIPE_KEY || "sk_test_anything"}", "webhook_secret": "whsec_anything"}`,
  `# adyen:  {"api_key": "${fakes.adyen.apiKey}", "merchant_account": "${fakes.adyen.merchantAccount}", "hmac_key": "${"00".repeat(32)}"}`,
  "# Ctrl-C stops them."
]
console.log(lines.join("\n"))

const stop = () => void fakes.close().then(() => process.exit(0))
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
