/**
 * The console operators' credential primitives on node:crypto (docs/decisions.md, "Operator console: access"):
 *
 *   passwords  scrypt N=2^15, r=8, p=1, a 16-byte salt, 32-byte key, stored self-describing as
 *              `scrypt$15$8$1$<salt b64>$<hash b64>` so the cost can be raised later and old hashes
 *              still verify. The async scrypt runs on libuv's pool: the event loop stays free.
 *   TOTP       RFC 6238 over RFC 4226's HOTP: HMAC-SHA-1, 6 digits, 30 s steps, one step of drift
 *              either side; secrets are 160 random bits in RFC 4648 base32 without padding.
 *   tokens     256 random bits, base64url; stored as their SHA-256 (hex).
 *
 * Every comparison of secrets is timingSafeEqual.
 */
import { createHmac, randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { OperatorCredentials } from "@tender/domain"
import { Effect, Layer } from "effect"
import { sha256Hex } from "./KeyHasherSha256.ts"

const LOG_N = 15
const R = 8
const P = 1
const KEY_BYTES = 32
const SALT_BYTES = 16
/** scrypt needs 128·N·r bytes (32 MiB here); Node's default cap is exactly that, so give it room. */
const maxmemFor = (logN: number, r: number) => 256 * (2 ** logN) * r

const scryptAsync = (password: string, salt: Buffer, logN: number, r: number, p: number, bytes: number) =>
  Effect.callback<Buffer>((resume) => {
    scrypt(password.normalize("NFC"), salt, bytes, { N: 2 ** logN, r, p, maxmem: maxmemFor(logN, r) }, (error, key) => {
      // Only bad parameters fail, and ours are fixed or read from our own format: a defect.
      resume(error === null ? Effect.succeed(key) : Effect.die(error))
    })
  })

export const hashPassword = (password: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    const salt = randomBytes(SALT_BYTES)
    const key = yield* scryptAsync(password, salt, LOG_N, R, P, KEY_BYTES)
    return `scrypt$${LOG_N}$${R}$${P}$${salt.toString("base64")}$${key.toString("base64")}`
  })

/** False for a hash not in our format, or with parameters outside sane bounds (never a defect from stored data). */
export const verifyPassword = (password: string, stored: string): Effect.Effect<boolean> => {
  const parts = stored.split("$")
  if (parts.length !== 6 || parts[0] !== "scrypt") return Effect.succeed(false)
  const [logN, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
  const inRange = (n: number, min: number, max: number) => Number.isInteger(n) && n >= min && n <= max
  if (!inRange(logN, 10, 20) || !inRange(r, 1, 32) || !inRange(p, 1, 16)) return Effect.succeed(false)
  const salt = Buffer.from(parts[4]!, "base64")
  const expected = Buffer.from(parts[5]!, "base64")
  if (salt.length === 0 || expected.length < 16) return Effect.succeed(false)
  return Effect.map(scryptAsync(password, salt, logN, r, p, expected.length), (key) => timingSafeEqual(key, expected))
}

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

/** RFC 4648 base32, no padding (what authenticator apps take in otpauth:// URIs). */
export const base32Encode = (bytes: Uint8Array): string => {
  let out = ""
  let buffer = 0
  let bits = 0
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31]
      bits -= 5
    }
    buffer &= (1 << bits) - 1
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31]
  return out
}

/** Decodes base32 (case-insensitive; spaces and padding ignored); undefined for any other character. */
export const base32Decode = (text: string): Uint8Array | undefined => {
  const clean = text.replace(/[\s=]/g, "").toUpperCase()
  const out: Array<number> = []
  let buffer = 0
  let bits = 0
  for (const char of clean) {
    const value = BASE32.indexOf(char)
    if (value < 0) return undefined
    buffer = (buffer << 5) | value
    bits += 5
    if (bits >= 8) {
      out.push((buffer >>> (bits - 8)) & 255)
      bits -= 8
    }
    buffer &= (1 << bits) - 1
  }
  return Uint8Array.from(out)
}

/** RFC 4226 HOTP: the `digits`-digit code of `counter` (dynamic truncation of HMAC-SHA-1). */
export const hotp = (key: Uint8Array, counter: number, digits = 6): string => {
  const message = Buffer.alloc(8)
  message.writeBigUInt64BE(BigInt(counter))
  const mac = createHmac("sha1", key).update(message).digest()
  const offset = mac[mac.length - 1]! & 0x0f
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!
  return String(binary % 10 ** digits).padStart(digits, "0")
}

export const TOTP_STEP_SECONDS = 30
export const TOTP_DIGITS = 6
/** Steps of clock drift accepted either side of now. */
export const TOTP_WINDOW = 1

export const totpStepOf = (nowMs: number): number => Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS)

/** The step within ±TOTP_WINDOW of now at which `code` is `secret`'s code, compared in constant time. */
export const totpStep = (secret: string, code: string, nowMs: number): number | undefined => {
  const key = base32Decode(secret)
  const given = Buffer.from(code.replace(/\s/g, ""), "utf8")
  if (key === undefined || key.length === 0 || given.length !== TOTP_DIGITS) return undefined
  const now = totpStepOf(nowMs)
  let found: number | undefined
  // Every candidate is computed and compared, so the time taken does not say which step matched.
  for (let step = Math.max(0, now - TOTP_WINDOW); step <= now + TOTP_WINDOW; step++) {
    if (timingSafeEqual(Buffer.from(hotp(key, step, TOTP_DIGITS), "utf8"), given) && found === undefined) found = step
  }
  return found
}

export const layer: Layer.Layer<OperatorCredentials> = Layer.succeed(
  OperatorCredentials,
  OperatorCredentials.of({
    hashPassword,
    verifyPassword,
    newTotpSecret: () => Effect.sync(() => base32Encode(randomBytes(20))),
    totpStep: (secret, code, nowMs) => Effect.sync(() => totpStep(secret, code, nowMs)),
    newToken: () => Effect.sync(() => randomBytes(32).toString("base64url")),
    hashToken: (token) => Effect.sync(() => sha256Hex(token))
  })
)

