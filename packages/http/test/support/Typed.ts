/**
 * The suites' well-formed calls go through the typed client (@tender/client), as a merchant's server
 * makes them: every request signed, every answer verified and decoded against the Api value, an
 * error answer rejected as the API's envelope. The raw `send` (@tender/client/Testing) stays for
 * what the typed API cannot express on purpose: malformed bodies, unknown fields, wrong signatures.
 */
import { createTenderClient, TenderApiError, type TenderPromiseClient } from "@tender/client"
import type { Credentials } from "@tender/client/Testing"
import { expect } from "vitest"

export type { TenderPromiseClient }

/** The typed client of an account the test kit created. */
export const typedClient = (server: { readonly baseUrl: string }, creds: Credentials): TenderPromiseClient =>
  createTenderClient({ baseUrl: server.baseUrl, secretKey: creds.secret_key, signingSecret: creds.signing_secret })

/** A typed call's rejection, checked to be the API's error envelope with this status and code. */
export const apiError = async (call: Promise<unknown>, status: number, code: string): Promise<TenderApiError> => {
  const error: unknown = await call.then(
    (value) => { throw new Error(`expected ${status} ${code}, the call succeeded: ${JSON.stringify(value)}`) },
    (rejected: unknown) => rejected
  )
  expect(error).toBeInstanceOf(TenderApiError)
  const apiError = error as TenderApiError
  expect({ status: apiError.status, code: apiError.code }).toEqual({ status, code })
  expect(apiError.request_id).toMatch(/^req_/)
  return apiError
}

/** The body type of a typed call that takes only a body, e.g. `BodyOf<"payments", "create">`. */
export type BodyOf<G extends keyof TenderPromiseClient, M extends keyof TenderPromiseClient[G]> =
  TenderPromiseClient[G][M] extends (body: infer B) => Promise<unknown> ? B : never
