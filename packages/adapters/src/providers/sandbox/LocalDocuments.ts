/**
 * The payment documents the sandbox hands out for local methods, built to the real formats (check
 * digits included) so that merchants can test their own parsing and display against them. Every
 * value derives from a seed (our reference), never from randomness: a retried start gives the same
 * document.
 */
import { digest } from "./SandboxIds.ts"

/** `length` decimal digits derived from `seed` (a SHA-256 digest read as a number). */
export const digitsOf = (seed: string, length: number): string => {
  let out = ""
  for (let round = 0; out.length < length; round++) {
    // The leading digit of a big number is biased; drop it.
    out += BigInt(`0x${digest(`${round}:${seed}`)}`).toString().slice(1)
  }
  return out.slice(0, length)
}

// Pix "copia e cola": an EMV QR Code (BR Code) payload, fields as ID + 2-digit length + value,
// closed by a CRC16/CCITT-FALSE over everything before the checksum's own value.

const tlv = (id: string, value: string): string => `${id}${String(value.length).padStart(2, "0")}${value}`

export const crc16Ccitt = (input: string): string => {
  let crc = 0xffff
  for (const byte of Buffer.from(input, "utf8")) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc.toString(16).toUpperCase().padStart(4, "0")
}

export const pixCopyPaste = (options: {
  readonly key: string
  /** The amount as a decimal string in BRL (e.g. "10.50"). */
  readonly amount: string
  readonly merchantName: string
  readonly merchantCity: string
  readonly txid: string
}): string => {
  const body = tlv("00", "01") +
    // "12": the code may be paid once.
    tlv("01", "12") +
    tlv("26", tlv("00", "br.gov.bcb.pix") + tlv("01", options.key)) +
    tlv("52", "0000") +
    tlv("53", "986") +
    tlv("54", options.amount) +
    tlv("58", "BR") +
    tlv("59", options.merchantName.slice(0, 25)) +
    tlv("60", options.merchantCity.slice(0, 15)) +
    // The transaction id field admits 25 letters and digits at most.
    tlv("62", tlv("05", options.txid.replace(/[^A-Za-z0-9]/g, "").slice(-25))) +
    "6304"
  return body + crc16Ccitt(body)
}

// Boleto: the 47-digit "linha digitável" a payer types, built from the 44-digit barcode.

/** Modulo 10 with weights 2, 1 from the right (digits of products summed), as used per field. */
export const mod10 = (digits: string): number => {
  let sum = 0
  let weight = 2
  for (let i = digits.length - 1; i >= 0; i--) {
    const product = Number(digits[i]) * weight
    sum += product > 9 ? product - 9 : product
    weight = weight === 2 ? 1 : 2
  }
  return (10 - (sum % 10)) % 10
}

/** Modulo 11 with weights 2…9 from the right; the barcode's general check digit is never 0. */
export const mod11 = (digits: string): number => {
  let sum = 0
  let weight = 2
  for (let i = digits.length - 1; i >= 0; i--) {
    sum += Number(digits[i]) * weight
    weight = weight === 9 ? 2 : weight + 1
  }
  const dv = 11 - (sum % 11)
  return dv === 0 || dv === 10 || dv === 11 ? 1 : dv
}

const DAY_MS = 86_400_000
const BOLETO_BASE = Date.UTC(1997, 9, 7)

/**
 * Days since 1997-10-07; the factor wrapped from 9999 to 1000 on 2025-02-22 and keeps cycling
 * through 1000…9999.
 */
export const dueDateFactor = (dueMillis: number): string => {
  const days = Math.floor((dueMillis - BOLETO_BASE) / DAY_MS)
  const factor = days <= 9999 ? days : ((days - 10000) % 9000) + 1000
  return String(factor).padStart(4, "0")
}

export const boletoLine = (options: {
  readonly bank: string
  /** Minor units (centavos); amounts that do not fit ten digits are left for the payer to type. */
  readonly amount: number
  readonly dueMillis: number
  /** 25 digits of the bank's own use (our number, agreement). */
  readonly freeField: string
}): string => {
  const amount = String(options.amount).length > 10 ? "0".repeat(10) : String(options.amount).padStart(10, "0")
  const head = `${options.bank}9`
  const tail = `${dueDateFactor(options.dueMillis)}${amount}`
  const free = options.freeField
  const general = mod11(head + tail + free)
  const field = (digits: string) => digits + mod10(digits)
  return field(head + free.slice(0, 5)) + field(free.slice(5, 15)) + field(free.slice(15, 25)) + general + tail
}

// SPEI: an 18-digit CLABE = bank (3) + branch plaza (3) + account (11) + check digit, weights 3, 7, 1.

export const clabeCheckDigit = (first17: string): number => {
  const weights = [3, 7, 1]
  let sum = 0
  for (let i = 0; i < 17; i++) sum += (Number(first17[i]) * weights[i % 3]) % 10
  return (10 - (sum % 10)) % 10
}

export const clabe = (bank: string, plaza: string, account: string): string => {
  const first17 = bank + plaza + account
  return first17 + clabeCheckDigit(first17)
}

// Crypto: a bitcoin testnet native segwit (bech32, BIP 173) address, so real wallets accept it.

const BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

const polymod = (values: ReadonlyArray<number>): number => {
  const generators = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
  let chk = 1
  for (const value of values) {
    const top = chk >>> 25
    chk = ((chk & 0x1ffffff) << 5) ^ value
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= generators[i]
  }
  return chk
}

const hrpExpand = (hrp: string): Array<number> => [
  ...[...hrp].map((c) => c.charCodeAt(0) >> 5),
  0,
  ...[...hrp].map((c) => c.charCodeAt(0) & 31)
]

const toFiveBits = (bytes: Uint8Array): Array<number> => {
  const out: Array<number> = []
  let acc = 0
  let bits = 0
  for (const byte of bytes) {
    acc = (acc << 8) | byte
    bits += 8
    while (bits >= 5) {
      bits -= 5
      out.push((acc >> bits) & 31)
    }
  }
  if (bits > 0) out.push((acc << (5 - bits)) & 31)
  return out
}

export const bech32Checksum = (hrp: string, data: ReadonlyArray<number>): Array<number> => {
  const mod = polymod([...hrpExpand(hrp), ...data, 0, 0, 0, 0, 0, 0]) ^ 1
  return Array.from({ length: 6 }, (_, i) => (mod >>> (5 * (5 - i))) & 31)
}

export const bech32Verify = (address: string): boolean => {
  const split = address.lastIndexOf("1")
  const data = [...address.slice(split + 1)].map((c) => BECH32.indexOf(c))
  return split > 0 && !data.includes(-1) && polymod([...hrpExpand(address.slice(0, split)), ...data]) === 1
}

/** A testnet P2WPKH address whose 20-byte program comes from `seed`. */
export const testnetAddress = (seed: string): string => {
  const program = Buffer.from(digest(seed).slice(0, 40), "hex")
  const data = [0, ...toFiveBits(program)]
  return `tb1${[...data, ...bech32Checksum("tb", data)].map((v) => BECH32[v]).join("")}`
}

const SATOSHIS_PER_COIN = 100_000_000n

/**
 * Minor units of a fiat currency → bitcoin at `minorPerCoin` (the price of one coin in minor
 * units), rounded up to the satoshi so the merchant is never short, as an 8-decimal string.
 */
export const coinAmount = (minor: number, minorPerCoin: number): string => {
  const numerator = BigInt(minor) * SATOSHIS_PER_COIN
  const rate = BigInt(minorPerCoin)
  const sats = (numerator + rate - 1n) / rate
  return `${sats / SATOSHIS_PER_COIN}.${String(sats % SATOSHIS_PER_COIN).padStart(8, "0")}`
}
