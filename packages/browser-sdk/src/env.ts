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

export const ENV_PLACEHOLDER = "__TENDER_ENV__"

export const readEnv = (): TenderEnv => JSON.parse("__TENDER_ENV__") as TenderEnv
