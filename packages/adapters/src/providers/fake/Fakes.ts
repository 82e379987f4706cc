/**
 * Both providers' wire-level fakes at once, and the configuration that points Tender at them: one
 * home for `npm run fakes` (a developer's `npm start` against them) and for the HTTP tests that run a
 * real server over them (packages/http/test/ProviderContract.test.ts). The Adyen library speaks
 * HTTPS only, so the fake's self-signed certificate is written to a file Tender is told to trust
 * (`TENDER_ADYEN_CA_FILE`); the file is removed on `close`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as AdyenFake from "../adyen/AdyenFake.ts"
import * as StripeFake from "../stripe/StripeFake.ts"

export interface FakesOptions {
  readonly stripe?: StripeFake.StripeFakeOptions | undefined
  readonly adyen?: AdyenFake.AdyenFakeOptions | undefined
}

export const start = async (options: FakesOptions = {}) => {
  const stripe = await StripeFake.start(options.stripe)
  const adyen = await AdyenFake.start(options.adyen).catch(async (error: unknown) => {
    await stripe.close()
    throw error
  })
  const dir = mkdtempSync(join(tmpdir(), "tender-fakes-"))
  const caFile = join(dir, "adyen-ca.pem")
  writeFileSync(caFile, adyen.caCertificate)
  /** TenderConfig's fields for the fakes (Config.ts). */
  const config = { stripeApiUrl: stripe.url, adyenApiUrl: adyen.endpoint, adyenCaFile: caFile }
  return {
    stripe,
    adyen,
    config,
    /** The same, as the environment `tender serve` reads (configFromEnv). */
    env: { TENDER_STRIPE_API_URL: config.stripeApiUrl, TENDER_ADYEN_API_URL: config.adyenApiUrl, TENDER_ADYEN_CA_FILE: caFile },
    close: async () => {
      await Promise.all([stripe.close(), adyen.close()])
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

export type Fakes = Awaited<ReturnType<typeof start>>
