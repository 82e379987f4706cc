/**
 * Where the API and the fields live. The built scripts carry a placeholder that the server fills in
 * when it serves them (packages/http SdkAssets), so one build serves any deployment's hosts.
 */
export interface TenderEnv {
  /** The merchant API's origin, e.g. `https://api.example.com` (no trailing slash). */
  readonly apiUrl: string
  /** The secure fields host, e.g. `https://fields.example.com` (no trailing slash). */
  readonly fieldsUrl: string
}

/**
 * The one home of the placeholder: the bundle holds it once as a string literal (build.ts checks),
 * and assets.ts replaces that literal with the deployment's hosts as a JSON string.
 */
export const ENV_PLACEHOLDER = "__TENDER_ENV__"

/** The placeholder as it stands in the built script: a quoted string literal. */
export const ENV_LITERAL = JSON.stringify(ENV_PLACEHOLDER)

export const readEnv = (): TenderEnv => JSON.parse(ENV_PLACEHOLDER) as TenderEnv
