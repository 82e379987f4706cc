/**
 * Tender's HMAC signatures (contract.md, Signatures): `X-Signature: t=<unix seconds>, v1=<hex>`,
 * HMAC-SHA256 over `t` + a path (with its query, exactly as sent) + the raw body bytes. One home for
 * the scheme (requests, responses and webhooks); the merchant side of it (the headers a request
 * carries, the verdict on an answer) is @tender/client's Raw.ts.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

export const SIGNATURE_HEADER = "x-signature"
/** Replay window either side of the server clock, in seconds. */
export const REPLAY_WINDOW_SECONDS = 300

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

/** The full header value for a payload signed now. */
export const signatureHeader = (
  secret: string,
  timestampSeconds: number,
  pathWithQuery: string,
  body: Uint8Array | string
): string => `t=${timestampSeconds}, v1=${computeSignature(secret, timestampSeconds, pathWithQuery, body)}`

export type VerifyResult = "valid" | "malformed" | "invalid" | "expired"

/**
 * Verifies a header against the payload: one matching `v1` entry is enough; the comparison is
 * constant-time; a timestamp more than the window away from `nowSeconds` (either side) is expired.
 */
export const verifySignature = (
  secret: string,
  header: string | undefined,
  pathWithQuery: string,
  body: Uint8Array | string,
  nowSeconds: number,
  windowSeconds: number = REPLAY_WINDOW_SECONDS
): VerifyResult => {
  const parsed = parseSignatureHeader(header)
  if (parsed === undefined) return "malformed"
  if (Math.abs(nowSeconds - parsed.timestamp) > windowSeconds) return "expired"
  const expected = Buffer.from(computeSignature(secret, parsed.timestamp, pathWithQuery, body), "hex")
  for (const candidate of parsed.signatures) {
    if (timingSafeEqual(expected, Buffer.from(candidate, "hex"))) return "valid"
  }
  return "invalid"
}
