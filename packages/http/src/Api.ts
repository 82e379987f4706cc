/**
 * The merchant API as this server serves it: @tender/api's definition, plus what only the server
 * knows. Its handlers get the authenticated account (`AccountContext`, a server-side middleware:
 * the definition cannot name the domain's Account), and the document it serves
 * (`/v1/openapi.json`, `/docs`) lists the browser SDK's `/v1/client/…` routes too, added after the
 * definition has required the signature, which is the merchant API's alone.
 */
import { Api as Definition, finishDocument } from "@tender/api/Api"
import { OpenApi } from "effect/http-api"
import { addClientRoutes } from "./client/ClientOpenApi.ts"
import { AccountContext } from "./Middleware.ts"

export const Api = Definition
  .middleware(AccountContext)
  .annotateMerge(OpenApi.annotations({
    transform: finishDocument(addClientRoutes)
  }))
