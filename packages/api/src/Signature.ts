/**
 * Tender's HMAC signatures (contract.md, Signatures): `X-Signature: t=<unix seconds>, v1=<hex>`,
 * HMAC-SHA256 over `t` + a path (with its query, exactly as sent) + the raw body bytes. One home for
 * the scheme (requests, responses and webhooks); the merchant side of it (the headers a request
 * carries, the verdict on an answer) is @tender/client's Raw.ts.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto"

/** The header carrying a signature (lower case, as Node gives header names). */
export const SIGNATURE_HEADER = "x-signature"
/** Replay window either side of the server clock, in seconds. */
export const REPLAY_WINDOW_SECONDS = 300

/**
 * How the refusal of a signed write already accepted (409 `conflict`) begins: nothing of the second
 * arrival applied, so a client that sent the same bytes apart from the first (another process, the
 * same second) may sign it again in a later second and send it.
 */
export const ALREADY_ACCEPTED = "This signed request was already accepted"

/** A signature header parsed: its timestamp and every `v1` signature. */
export interface ParsedSignature {
  readonly timestamp: number
  readonly signatures: ReadonlyArray<string>
}

const ENTRY = /^\s*(t|v1)=([^,\s]+)\s*$/

/** Parses `t=…, v1=…[, v1=…]`; `undefined` when the header is not in that form. */
export const parseSignatureHeader = (header: string | undefined): ParsedSignature | undefined => {
  if (header === undefined || header.trim() === "") return undefined
  let timestamp: number | undefined
  const signatures: Array<string> = []
  for (const part of header.split(",")) {
    const match = ENTRY.exec(part)
    if (match === null) return undefined
    const [, key, value] = match
    if (key === "t") {
      if (timestamp !== undefined || !/^\d{1,12}$/.test(value)) return undefined
      timestamp = Number(value)
    } else {
      if (!/^[0-9a-fA-F]{64}$/.test(value)) return undefined
      signatures.push(value.toLowerCase())
    }
  }
  if (timestamp === undefined || signatures.length === 0) return undefined
  return { timestamp, signatures }
}

const toBytes = (body: Uint8Array | string): Uint8Array =>
  typeof body === "string" ? Buffer.from(body, "utf8") : body

/** Hex HMAC-SHA256 of `t + path + body` under `secret`. */
export const computeSignature = (
  secret: string,
  timestamp: number,
  pathWithQuery: string,
  body: Uint8Array | string
): string =>
  createHmac("sha256", secret).update(`${timestamp}${pathWithQuery}`, "utf8").update(toBytes(body)).digest("hex")

/**
 * What a signature covers, whatever secret signed it: SHA-256 of `t + path + body`. The replay cache
 * keys on this, not on a `v1` entry, so a payload signed under two secrets during a rotation (a
 * request with both entries, then a copy with only the old one) is one payload, and a response's
 * digest is exactly the one a request replaying it would present.
 */
export const contentDigest = (timestampSeconds: number, pathWithQuery: string, body: Uint8Array | string): string =>
  createHash("sha256").update(`${timestampSeconds}${pathWithQuery}`, "utf8").update(toBytes(body)).digest("hex")

/** The `v1` entries of a payload signed at `timestampSeconds`, one per secret (several while a secret rotates). */
const signaturesOf = (
  secrets: string | ReadonlyArray<string>,
  timestampSeconds: number,
  pathWithQuery: string,
  body: Uint8Array | string
): ReadonlyArray<string> =>
  (typeof secrets === "string" ? [secrets] : secrets).map((secret) => computeSignature(secret, timestampSeconds, pathWithQuery, body))

/** The full header value for a payload signed now: one `v1` entry per secret, the current one first. */
export const signatureHeader = (
  secrets: string | ReadonlyArray<string>,
  timestampSeconds: number,
  pathWithQuery: string,
  body: Uint8Array | string
): string =>
  [`t=${timestampSeconds}`, ...signaturesOf(secrets, timestampSeconds, pathWithQuery, body).map((v1) => `v1=${v1}`)].join(", ")

/** A signature's verdict: valid, malformed, invalid (no signature matches) or expired (outside the replay window). */
export type VerifyResult = "valid" | "malformed" | "invalid" | "expired"

/** A verdict, and on `valid` the timestamp and the payload's `contentDigest` (what the replay cache keys on). */
export type Verification =
  | { readonly verdict: "valid"; readonly digest: string; readonly timestamp: number }
  | { readonly verdict: Exclude<VerifyResult, "valid"> }

/**
 * Verifies a header against the payload under any of `secrets` (the current signing secret, and the
 * previous one while a rotation overlaps): one matching `v1` entry is enough; the comparison is
 * constant-time; a timestamp more than the window away from `nowSeconds` (either side) is expired.
 */
export const verify = (
  secrets: string | ReadonlyArray<string>,
  header: string | undefined,
  pathWithQuery: string,
  body: Uint8Array | string,
  nowSeconds: number,
  windowSeconds: number = REPLAY_WINDOW_SECONDS
): Verification => {
  const parsed = parseSignatureHeader(header)
  if (parsed === undefined) return { verdict: "malformed" }
  if (Math.abs(nowSeconds - parsed.timestamp) > windowSeconds) return { verdict: "expired" }
  for (const expected of signaturesOf(secrets, parsed.timestamp, pathWithQuery, body)) {
    const bytes = Buffer.from(expected, "hex")
    for (const candidate of parsed.signatures) {
      if (timingSafeEqual(bytes, Buffer.from(candidate, "hex"))) {
        return { verdict: "valid", digest: contentDigest(parsed.timestamp, pathWithQuery, body), timestamp: parsed.timestamp }
      }
    }
  }
  return { verdict: "invalid" }
}

/** `verify`'s verdict alone. */
export const verifySignature = (...args: Parameters<typeof verify>): VerifyResult => verify(...args).verdict
