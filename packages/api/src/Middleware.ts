/**
 * The API's middleware as the definition declares it (Api.ts): the bearer scheme and the error
 * envelope of every endpoint, and the schema-failure transform's error. They are service keys only;
 * the server (packages/http/src/Middleware.ts) implements them, and a client needs none of them.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import * as ApiError from "./ApiError.ts"

/** `Authorization: Bearer sk_…`: every merchant endpoint, answering any of the declared errors. */
export class ApiKeyAuth extends HttpApiMiddleware.Service<ApiKeyAuth>()(
  "@tender/api/ApiKeyAuth",
  { security: { bearer: HttpApiSecurity.bearer }, error: ApiError.ApiErrors }
) {}

/** A request that does not fit its schema: 400 with the envelope naming every offending field. */
export class RequestValidation extends HttpApiMiddleware.Service<RequestValidation>()(
  "@tender/api/RequestValidation",
  { error: ApiError.BadRequest }
) {}
