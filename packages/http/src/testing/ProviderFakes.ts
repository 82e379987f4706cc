/**
 * A test kit for channels: the test server with every channel's client pointed at the repository's
 * wire-level fakes (adapters' providers/fake/Fakes.ts: one fake per provider of the list and the
 * configuration that points Tender at them), as a `tender` run against `npm run fakes` would be.
 */
import type { TenderConfig } from "@tender/adapters/Config"
import * as Fakes from "@tender/adapters/providers/fake/Fakes"
import type { Account } from "@tender/domain"
import { Effect } from "effect"
import { startTestServer, type TestServer } from "./TestServer.ts"

export interface ProviderFakes {
  readonly server: TestServer
  readonly stripe: Fakes.Fakes["stripe"]
  readonly adyen: Fakes.Fakes["adyen"]
  /** Stops the server and every fake. */
  readonly close: () => Promise<void>
}

export const startWithProviderFakes = async (
  storage: Pick<TenderConfig, "storage" | "dataDir" | "databaseUrl" | "vaultKey">,
  options: Fakes.FakesOptions = {}
): Promise<ProviderFakes> => {
  const fakes = await Fakes.start(options)
  const server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, { ...storage, ...fakes.config })
    .catch(async (error: unknown) => {
      await fakes.close()
      throw error
    })
  return {
    server,
    stripe: fakes.stripe,
    adyen: fakes.adyen,
    close: async () => {
      await server.close()
      await fakes.close()
    }
  }
}

/**
 * A test-mode account of `server` whose 3-D Secure display mode is `mode`; with `stripe`, its only
 * channel is Stripe's (the fake takes any `sk_test_` key), otherwise it pays on the built-in sandbox.
 */
export const merchantIn = async (server: TestServer, mode: Account.ThreeDsDisplayMode, options: { readonly name: string; readonly stripe: boolean }) => {
  const merchant = await Effect.runPromise(server.accounts.create({ name: options.name, mode: "test" }))
  await Effect.runPromise(server.accounts.setThreeDsDisplayMode(merchant.account_id, mode))
  if (options.stripe) {
    await Effect.runPromise(server.channels.add(merchant.account_id, {
      provider: "stripe",
      mode: "test",
      methods: null,
      currencies: null,
      countries: null,
      priority: null,
      credentials: { secret_key: "sk_test_browser", webhook_secret: "whsec_browser" }
    }))
  }
  return merchant
}
