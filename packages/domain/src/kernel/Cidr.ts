/**
 * IP allowlists: CIDR parsing and matching for IPv4 and IPv6 (IPv4-mapped IPv6 addresses such as
 * `::ffff:127.0.0.1`, as Node reports them on dual-stack sockets, match IPv4 ranges).
 */

export interface Cidr {
  readonly family: 4 | 6
  readonly bits: bigint
  readonly prefix: number
}

const parseV4 = (s: string): bigint | undefined => {
  const parts = s.split(".")
  if (parts.length !== 4) return undefined
  let n = 0n
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined
    n = (n << 8n) | BigInt(Number(p))
  }
  return n
}

const parseV6 = (s: string): bigint | undefined => {
  let head = s
  let tailV4: bigint | undefined
  const lastColon = s.lastIndexOf(":")
  if (s.includes(".")) {
    tailV4 = parseV4(s.slice(lastColon + 1))
    if (tailV4 === undefined) return undefined
    head = s.slice(0, lastColon + 1) + "0:0"
  }
  const halves = head.split("::")
  if (halves.length > 2) return undefined
  const groups = (x: string) => (x === "" ? [] : x.split(":"))
  const left = groups(halves[0])
  const right = halves.length === 2 ? groups(halves[1]) : []
  const missing = 8 - left.length - right.length
  if ((halves.length === 1 && missing !== 0) || missing < 0 || (halves.length === 2 && missing < 1)) return undefined
  const all = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...right]
  let n = 0n
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined
    n = (n << 16n) | BigInt(parseInt(g, 16))
  }
  if (tailV4 !== undefined) n = (n & ~0xffffffffn) | tailV4
  return n
}

const parseIp = (ip: string): { family: 4 | 6; bits: bigint } | undefined => {
  const v4 = parseV4(ip)
  if (v4 !== undefined) return { family: 4, bits: v4 }
  const v6 = parseV6(ip)
  if (v6 === undefined) return undefined
  // IPv4-mapped (::ffff:a.b.c.d) is treated as the IPv4 address it carries.
  if (v6 >> 32n === 0xffffn) return { family: 4, bits: v6 & 0xffffffffn }
  return { family: 6, bits: v6 }
}

/** Parses `addr/prefix` (IPv4 or IPv6; a bare address is a full-length prefix), or `undefined`. */
export const parseCidr = (input: string): Cidr | undefined => {
  const [addr, prefixText, ...rest] = input.trim().split("/")
  if (rest.length > 0 || addr === undefined) return undefined
  const ip = parseIp(addr)
  if (ip === undefined) return undefined
  const max = ip.family === 4 ? 32 : 128
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return undefined
  return { family: ip.family, bits: ip.bits, prefix }
}

/** Whether the string is an IPv4 or IPv6 address. */
export const isValidIp = (ip: string): boolean => parseIp(ip) !== undefined

/** Whether the range contains the address (IPv4-mapped IPv6 addresses match IPv4 ranges). */
export const cidrContains = (cidr: Cidr, ip: string): boolean => {
  const parsed = parseIp(ip)
  if (parsed === undefined || parsed.family !== cidr.family) return false
  const width = BigInt(cidr.family === 4 ? 32 : 128)
  const shift = width - BigInt(cidr.prefix)
  return (parsed.bits >> shift) === (cidr.bits >> shift)
}

/** An empty allowlist means "unrestricted". */
export const allowlistPermits = (allowlist: ReadonlyArray<string>, ip: string): boolean => {
  if (allowlist.length === 0) return true
  for (const entry of allowlist) {
    const cidr = parseCidr(entry)
    if (cidr !== undefined && cidrContains(cidr, ip)) return true
  }
  return false
}

/**
 * The network one client owns, as a per-client rate limit keys it: an IPv4 address (an IPv4-mapped
 * IPv6 one is that IPv4 address) on its own, an IPv6 address by its /64 — the block one subscriber
 * or host is given, so hopping addresses inside it does not buy a new bucket. Anything unparsable
 * is its own key, lower-cased.
 */
export const clientNetwork = (ip: string): string => {
  const parsed = parseIp(ip)
  if (parsed === undefined) return ip.toLowerCase()
  if (parsed.family === 4) {
    return [24n, 16n, 8n, 0n].map((shift) => String((parsed.bits >> shift) & 0xffn)).join(".")
  }
  const groups = [112n, 96n, 80n, 64n].map((shift) => ((parsed.bits >> shift) & 0xffffn).toString(16))
  return `${groups.join(":")}::/64`
}

/** Two spellings of one address (`::ffff:10.0.0.1` is `10.0.0.1`, `fd00::2` is `fd00:0::2`). */
export const sameAddress = (a: string, b: string): boolean => {
  const [x, y] = [parseIp(a), parseIp(b)]
  return x !== undefined && y !== undefined && x.family === y.family && x.bits === y.bits
}
