/**
 * `npm run fakes`: starts every provider's wire-level fake (fake/Fakes.ts) on local ports and prints
 * the variables that point `npm start` (tender serve) at them, and the credentials files a channel
 * on them needs (README, "Adding a provider channel"). Runs until interrupted.
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
  `# Provider fakes are running (${fakes.all.map(([name]) => name).join(", ")}). In the shell that runs \`npm start\`:`,
  ...Object.entries(fakes.env).map(([name, value]) => `export ${name}=${value}`),
  "",
  "# Credentials files for `tender accounts channels add ID --provider NAME --mode test --credentials-file F`:",
  ...fakes.all.map(([name, fake]) => `# ${name}: ${JSON.stringify(fake.credentials("test"))}`),
  "# Ctrl-C stops them."
]
console.log(lines.join("\n"))

const stop = () => void fakes.close().then(() => process.exit(0))
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
