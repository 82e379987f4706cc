/**
 * The raw path for tests of Tender over HTTP: `send` is `signedFetch` with the credentials in the
 * shape an account is created with (`secret_key`, `signing_secret`), for the requests a test makes
 * malformed on purpose (bad JSON, unknown fields, another content type, a wrong or absent signature)
 * and the routes outside the typed API. Well-formed calls belong to the typed client.
 *
 * Every answer is checked as the typed client checks it: a request that names an account with a
 * secret key must get an answer that verifies under that account's signing secret, whatever its
 * status, or `send` throws. Only an answer no account can sign (a key that is unknown or revoked;
 * a publishable key, or none, which never names an account on the merchant API) may arrive
 * unsigned, and a test expecting one says so with `unsigned: true` (implied with no secret key);
 * such an answer is checked to carry no signature at all.
 */
import { type Answer, type RawReply, type RawRequest, signedFetch } from "./Raw.ts"

export interface Credentials {
  readonly secret_key: string
  readonly signing_secret: string
}

export interface SendOptions extends RawRequest {
  /** The answer is expected unsigned: the key names no account (implied when no `sk_` key is sent). */
  readonly unsigned?: boolean | undefined
}

/** What a test reads of an answer (a browser-side request's too); `send` gives the verdict as well. */
export type Reply = Answer

/** Sends a request signed like a merchant server would, unless told otherwise, and checks the answer's signature. */
export const send = async (
  server: { readonly baseUrl: string },
  creds: Credentials | undefined,
  method: string,
  pathWithQuery: string,
  options: SendOptions = {}
): Promise<RawReply> => {
  const { unsigned, ...request } = options
  const reply = await signedFetch(
    { baseUrl: server.baseUrl, secretKey: creds?.secret_key ?? "", signingSecret: creds?.signing_secret ?? "" },
    method,
    pathWithQuery,
    // No credentials: no authorization and no signature, unless the test sets its own.
    creds === undefined ? { ...request, signature: request.signature ?? null, headers: { authorization: null, ...request.headers } } : request
  )
  const expectUnsigned = unsigned ?? (creds === undefined || !creds.secret_key.startsWith("sk_"))
  if (expectUnsigned ? reply.verdict !== "missing" : !reply.verified) {
    throw new Error(
      `${method} ${pathWithQuery} → HTTP ${reply.status}: ` +
        (expectUnsigned ? "expected an unsigned answer, got a signed one" : `the answer does not verify (${reply.verdict})`) +
        `\n${reply.text.slice(0, 500)}`
    )
  }
  return reply
}
