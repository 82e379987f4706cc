import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Code, Reference } from "./Bounded.ts"

export class VaultApi extends HttpApiGroup.make("vault")
  .annotate(OpenApi.Description, "Short-lived tokens for the Vault API (accounts with the vault enabled).")
  .add(
  HttpApiEndpoint.post("createAccessToken", "/v1/vault/access_tokens", {
    payload: Schema.Struct({}),
    success: Schema.Struct({ token: Reference, expires_at: Code }).pipe(HttpApiSchema.status(201))
  }).annotate(OpenApi.Summary, "Create a vault access token")
    .annotate(OpenApi.Description, "A 5-minute token for the Vault API; requires the vault enabled on the account (else 403 vault_not_enabled).")
) {}
