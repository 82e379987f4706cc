/**
 * Every provider's wire-level fake at once (one per module of the providers' list, Providers.ts),
 * and the configuration that points Tender at them: one home for `npm run fakes` (a developer's
 * `npm start` against them) and for the HTTP tests that run a real server over them
 * (packages/http/test/ProviderContract.test.ts). A fake with a certificate of its own (Adyen's
 * library speaks HTTPS only) has it written to a file Tender is told to trust
 * (`TENDER_<NAME>_CA_FILE`); the files are removed on `close`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ProviderEndpointSetting } from "../../Config.ts"
import { endpointEnv, type RunningFake } from "../ProviderModule.ts"
import { type Provider, PROVIDERS } from "../Providers.ts"

type Named<M extends Provider> = M["descriptor"]["name"]
type OptionsOf<M extends Provider> = NonNullable<Parameters<M["fake"]["start"]>[0]>
type FakeOf<M extends Provider> = Awaited<ReturnType<M["fake"]["start"]>>

/**
 * Each fake's own options by provider name; `notifyUrl` is every fake's (a provider's own value
 * wins): where they POST their webhooks and notifications.
 */
export type FakesOptions = { readonly [M in Provider as Named<M>]?: OptionsOf<M> } & { readonly notifyUrl?: string | undefined }

export type RunningFakes = { readonly [M in Provider as Named<M>]: FakeOf<M> }

export const start = async (options: FakesOptions = {}) => {
  const running: Array<readonly [string, FakeOf<Provider>]> = []
  const dir = mkdtempSync(join(tmpdir(), "tender-fakes-"))
  const close = async () => {
    await Promise.all(running.map(([, fake]) => fake.close()))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    for (const module of PROVIDERS) {
      const name = module.descriptor.name
      const own = (options as Record<string, object | undefined>)[name] ?? {}
      const start = module.fake.start as (options: object) => Promise<FakeOf<Provider>>
      running.push([name, await start({ notifyUrl: options.notifyUrl, ...own })])
    }
  } catch (error) {
    await close()
    throw error
  }
  /** Config.ts's `providerEndpoints` for the fakes. */
  const providerEndpoints: Record<string, ProviderEndpointSetting> = {}
  const env: Record<string, string> = {}
  for (const [name, fake] of running as ReadonlyArray<readonly [string, RunningFake]>) {
    const names = endpointEnv(name)
    let caFile: string | undefined
    if (fake.target.caCertificate !== undefined) {
      caFile = join(dir, `${name}-ca.pem`)
      writeFileSync(caFile, fake.target.caCertificate)
      env[names.caFile] = caFile
    }
    providerEndpoints[name] = { apiUrl: fake.target.apiUrl, caFile }
    env[names.apiUrl] = fake.target.apiUrl
  }
  return {
    ...(Object.fromEntries(running) as unknown as RunningFakes),
    /** Every fake, by provider name, as the harness drives them all. */
    all: running,
    /** TenderConfig's fields for the fakes (Config.ts). */
    config: { providerEndpoints },
    /** The same, as the environment `tender serve` reads (configFromEnv). */
    env,
    /** Waits for the deliveries every fake started so far. */
    delivered: () => Promise.all(running.map(([, fake]) => fake.delivered())).then(() => undefined),
    close
  }
}

export type Fakes = Awaited<ReturnType<typeof start>>
