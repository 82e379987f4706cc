/**
 * The Promise facade for merchants who do not use Effect:
 *
 *   const tender = createTenderClient({ baseUrl, secretKey, signingSecret })
 *   const payment = await tender.payments.create({ amount: "10.00", currency: "USD", … })
 *   const order = await tender.orders.get({ params: { id: payment.order_id } })
 *
 * Every method is the typed client's (same signing and verification); an endpoint that takes only
 * a body is called with the body, any other with `{ params, query, payload }`. Failures reject
 * with `TenderApiError` (the API's error envelope), `UnverifiedResponse`, or the transport's error.
 */
import { Effect } from "effect"
import { HttpClientError } from "effect/http"
import type { HttpApi, HttpApiClient, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Api } from "@tender/api/Api"
import { type Envelope, type FieldError, isApiError, statusOfApiError } from "@tender/api/ApiError"
import * as TenderClient from "./TenderClient.ts"

/** An error answer of the API: `{code, message, request_id, errors?}` and its HTTP status. */
export class TenderApiError extends Error {
  override readonly name = "TenderApiError"
  readonly status: number
  readonly code: string
  readonly request_id: string
  readonly errors: ReadonlyArray<FieldError> | undefined
  constructor(status: number, envelope: Envelope) {
    super(envelope.message)
    this.status = status
    this.code = envelope.code
    this.request_id = envelope.request_id
    this.errors = envelope.errors
  }
}

type Groups = typeof Api extends HttpApi.HttpApi<infer _Id, infer G> ? G : never
type Part<K extends string, T> = [T] extends [never] ? {} : { readonly [P in K]: T }
// Path parameters are plain strings here (ids as a merchant stores them); the server checks their form.
type Params<E extends HttpApiEndpoint.ConstraintRequest> = [E["~Params"]["Type"]] extends [never] ? never
  : { readonly [K in keyof E["~Params"]["Type"]]: E["~Params"]["Type"][K] extends string ? string : E["~Params"]["Type"][K] }
type Query<E extends HttpApiEndpoint.ConstraintRequest> = E["~Query"]["Type"]
type Body<E extends HttpApiEndpoint.ConstraintRequest> = E["~Payload"]["Type"]

type Args<E extends HttpApiEndpoint.ConstraintRequest> = [Params<E>, Query<E>] extends [never, never]
  ? ([Body<E>] extends [never] ? [] : [body: Body<E>])
  : [request: Part<"params", Params<E>> & Part<"query", Query<E>> & Part<"payload", Body<E>>]

type Method<E extends HttpApiEndpoint.ConstraintRequest> = (...args: Args<E>) => Promise<HttpApiClient.SuccessType<E["~Success"]>>

/** The typed client with Promises instead of Effects: one method per endpoint, grouped as the API groups them. */
export type TenderPromiseClient = {
  readonly [G in Groups as HttpApiGroup.Identifier<G>]: {
    readonly [K in keyof G["endpoints"]]: G["endpoints"][K] extends HttpApiEndpoint.ConstraintRequest ? Method<G["endpoints"][K]> : never
  }
}

const isEnvelope = (u: unknown): u is Envelope =>
  typeof u === "object" && u !== null && typeof (u as Envelope).code === "string" &&
  typeof (u as Envelope).message === "string" && typeof (u as Envelope).request_id === "string"

const fromEnvelope = (status: number, e: Envelope) => new TenderApiError(status, e)

/**
 * Declared error statuses arrive decoded; an undeclared one (405, 413, 415) arrives as the
 * HttpClient's status error with the (verified) response, whose envelope is read here.
 */
const toRejection = (error: unknown): Effect.Effect<unknown> => {
  if (isApiError(error)) {
    return Effect.succeed(fromEnvelope(statusOfApiError(error), error))
  }
  if (HttpClientError.isHttpClientError(error) && error.response !== undefined) {
    const response = error.response
    return response.json.pipe(
      Effect.map((body): unknown => isEnvelope(body) ? fromEnvelope(response.status, body) : error),
      Effect.orElseSucceed(() => error)
    )
  }
  return Effect.succeed(error)
}

/** A Promise-based client for code that does not use Effect; failures reject with `TenderApiError`. */
export const createTenderClient = (options: TenderClient.TenderClientOptions): TenderPromiseClient => {
  const client = Effect.runSync(TenderClient.make(options)) as unknown as Record<
    string,
    Record<string, (request: unknown) => Effect.Effect<unknown, unknown>>
  >
  const facade: Record<string, Record<string, (...args: Array<unknown>) => Promise<unknown>>> = {}
  for (const group of Object.values(Api.groups)) {
    const methods: Record<string, (...args: Array<unknown>) => Promise<unknown>> = {}
    for (const endpoint of Object.values(group.endpoints)) {
      // The same rule as `Args`: no path or query parameters → the only argument is the body.
      const bodyOnly = endpoint.params === undefined && endpoint.query === undefined
      const call = client[group.identifier][endpoint.identifier]
      methods[endpoint.identifier] = (...args) =>
        Effect.runPromise(
          call(bodyOnly ? (args.length > 0 ? { payload: args[0] } : undefined) : args[0]).pipe(
            Effect.catch((error) => Effect.flatMap(toRejection(error), Effect.fail))
          )
        )
    }
    facade[group.identifier] = methods
  }
  return facade as unknown as TenderPromiseClient
}
