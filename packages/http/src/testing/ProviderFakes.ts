/**
 * A test kit for channels: the test server with every Stripe and Adyen channel's client pointed at
 * the repository's wire-level fakes (TENDER_STRIPE_API_URL, TENDER_ADYEN_API_URL, and the Adyen fake's
 * self-signed certificate as TENDER_ADYEN_CA_FILE), as a `tender` dev run would be.
 */
import type { TenderConfig } from "@tender/adapters/Config"
import * as AdyenFake from "@tender/adapters/providers/adyen/AdyenFake"
import * as StripeFake from "@tender/adapters/providers/stripe/StripeFake"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startTestServer, type TestServer } from "./TestServer.ts"

export interface ProviderFakes {
  readonly server: TestServer
  readonly stripe: StripeFake.StripeFake
  readonly adyen: AdyenFake.AdyenFake
  /** Stops the server and both fakes, and removes the certificate's file. */
  readonly close: () => Promise<void>
}

export const startWithProviderFakes = async (storage: Pick<TenderConfig, "storage" | "dataDir">): Promise<ProviderFakes> => {
  const stripe = await StripeFake.start()
  const adyen = await AdyenFake.start()
  // A directory of its own: two suites in one process each have their fake's certificate.
  const caDir = mkdtempSync(join(tmpdir(), "tender-provider-fakes-"))
  const adyenCaFile = join(caDir, "adyen-ca.pem")
  writeFileSync(adyenCaFile, adyen.caCertificate)
  const server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, {
    ...storage,
    stripeApiUrl: stripe.url,
    adyenApiUrl: adyen.endpoint,
    adyenCaFile
  })
  return {
    server,
    stripe,
    adyen,
    close: async () => {
      await server.close()
      await stripe.close()
      await adyen.close()
      rmSync(caDir, { recursive: true, force: true })
    }
  }
}
