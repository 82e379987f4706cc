/**
 * What the domain knows of the providers a channel can be on: pure data, one descriptor per
 * provider. The descriptors are not written here: each provider is one folder of the adapters
 * (packages/adapters/src/providers/<name>/), whose module declares its descriptor beside its client,
 * notifications and fake, and the adapters' one list of providers hands them to the domain at wiring
 * (`ChannelProviders.catalog`). So adding a provider never touches the domain (docs/providers.md).
 */
import { Schema } from "effect"
import type { AccountMode } from "../accounts/Account.ts"
import { type FieldError, ValidationFailed } from "../kernel/Errors.ts"

/** One field of a provider's credentials file. */
export interface CredentialField {
  readonly name: string
  /** For the operator (the CLI's help): what the field is, in the provider's own words. */
  readonly about: string
  /** Whether the field must be present in this mode. */
  readonly required: (mode: AccountMode) => boolean
  /** The problem with a present value, or `undefined` when it is acceptable. Never repeats the value (a secret). */
  readonly check: (value: string, mode: AccountMode) => string | undefined
}

/** One provider as its adapter describes it: name, methods, transfers and credential fields. */
export interface ProviderDescriptor {
  /** The name channels record (`stripe`), the CLI's `--provider`, transactions' `provider`. */
  readonly name: string
  /**
   * The payment methods the provider's adapter carries. A method joins when its adapter does, so
   * routing never picks a channel that cannot take the payment; a channel may narrow it, never widen it.
   */
  readonly methods: ReadonlyArray<string>
  /** Whether the adapter pays transfers out through the provider; a transfer routed elsewhere is refused before anything is stored. */
  readonly transfers: boolean
  readonly credentials: ReadonlyArray<CredentialField>
}

/** Every provider the deployment's adapters carry, in the order the operator is shown them. */
export type ProviderCatalog = ReadonlyArray<ProviderDescriptor>

/** The catalog's entry for a provider name, if the deployment carries it. */
export const descriptorOf = (catalog: ProviderCatalog, name: string): ProviderDescriptor | undefined =>
  catalog.find((p) => p.name === name)

/** The methods `name`'s adapter carries; none for a provider the catalog lacks (no route to it). */
export const offeredBy = (catalog: ProviderCatalog, name: string): ReadonlyArray<string> =>
  descriptorOf(catalog, name)?.methods ?? []

/** Whether `name`'s adapter pays transfers out. */
export const paysTransfers = (catalog: ProviderCatalog, name: string): boolean =>
  descriptorOf(catalog, name)?.transfers ?? false

// --- credentials ---------------------------------------------------------------------------

/**
 * A channel's credentials as checked on the way in and sealed by the storage adapter: the
 * provider's name and its fields (a missing optional one `null`). Each provider's module reads its
 * own typed credentials from this when it builds the channel's client.
 */
export const ProviderCredentials = Schema.StructWithRest(
  Schema.Struct({ provider: Schema.String }),
  [Schema.Record(Schema.String, Schema.NullOr(Schema.String))]
)
export type ProviderCredentials = typeof ProviderCredentials.Type

/** A field every mode needs. */
export const always = () => true
/** A credential check: the value is non-empty and has no spaces (else the refusal, in words). */
export const noBlanks = (value: string) => /^\S+$/.test(value) ? undefined : "must be a non-empty string without spaces"

/**
 * Checks a credentials file's content for `provider` and `mode`: every field the provider needs,
 * each in its provider's format and of the channel's mode, and nothing else (a misspelt name is
 * reported, not silently dropped). Field errors are named `credentials.<field>`; the messages
 * never repeat a value, since values are secrets.
 */
export const parseCredentials = (
  provider: ProviderDescriptor,
  mode: AccountMode,
  input: unknown
): ProviderCredentials | ValidationFailed => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return new ValidationFailed({
      message: "Invalid request: credentials must be a JSON object",
      errors: [{ field: "credentials", message: "must be a JSON object" }]
    })
  }
  const given = input as Record<string, unknown>
  const fields = provider.credentials
  const errors: Array<FieldError> = []
  const values: Record<string, string | null> = {}
  for (const field of fields) {
    const value = given[field.name]
    const problem = value === undefined || value === null
      ? field.required(mode) ? "is required" : undefined
      : typeof value !== "string"
      ? "must be a string"
      : field.check(value, mode)
    if (problem !== undefined) errors.push({ field: `credentials.${field.name}`, message: problem })
    values[field.name] = typeof value === "string" ? value : null
  }
  for (const name of Object.keys(given)) {
    if (!fields.some((f) => f.name === name)) {
      errors.push({
        field: `credentials.${name}`,
        message: `is not one of the ${provider.name} credentials (expected ${fields.map((f) => f.name).join(", ")})`
      })
    }
  }
  if (errors.length > 0) {
    return new ValidationFailed({
      message: `Invalid request: the ${provider.name} credentials are incomplete or malformed`,
      errors
    })
  }
  return { ...values, provider: provider.name }
}
