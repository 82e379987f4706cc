/**
 * Where webhooks may go: the SSRF policy of endpoint URLs (checked at registration and at every
 * delivery), the operator's receiver settings, and the places this deployment's servers listen
 * (which no endpoint may target), kept fresh by each serving process.
 */
import { Context, Effect, Schedule } from "effect"
import type { Account } from "../accounts/Account.ts"
import { BoundedCache } from "../kernel/BoundedCache.ts"
import * as Cidr from "../kernel/Cidr.ts"
import { invalidField } from "../kernel/Errors.ts"
import { urlProblem } from "../payments/RequestChecks.ts"
import { HostResolver, type Listener, ServerListeners } from "./WebhookPorts.ts"

/**
 * What an address is, for the SSRF check of webhook endpoints: `loopback` (allowed only to a test-mode
 * `http` endpoint on a loopback host), `private` (allowed when the operator sets TENDER_WEBHOOK_ALLOW_PRIVATE),
 * `special` (never). Public addresses are in none of the ranges.
 *
 * Source: the IANA IPv4 and IPv6 Special-Purpose Address Registries
 * (iana.org/assignments/iana-ipv4-special-registry, …/iana-ipv6-special-registry, as of 2025), plus the
 * multicast blocks (IANA multicast registries), 6to4's retired relay anycast and IPv6 site-local. Blocks
 * whose registry entry says "globally reachable" but which no receiver lives in (192.0.0.0/24 as a
 * whole, NAT64's 64:ff9b::/96, Teredo and the rest of 2001::/23) are refused too: each carries or
 * reaches another address (an embedded IPv4, a tunnel) that this check could not see. IPv4-mapped
 * IPv6 (::ffff:0:0/96) is matched as the IPv4 address it carries (Cidr.ts).
 */
const SPECIAL_PURPOSE: ReadonlyArray<readonly [cidr: string, kind: "loopback" | "private" | "special", name: string]> = [
  ["0.0.0.0/8", "special", "this network (connects to the host itself on Linux)"],
  ["10.0.0.0/8", "private", "private-use"],
  ["100.64.0.0/10", "private", "shared address space (CGNAT)"],
  ["127.0.0.0/8", "loopback", "loopback"],
  ["169.254.0.0/16", "special", "link-local (cloud metadata services)"],
  ["172.16.0.0/12", "private", "private-use"],
  ["192.0.0.0/24", "special", "IETF protocol assignments"],
  ["192.0.2.0/24", "special", "documentation (TEST-NET-1)"],
  ["192.88.99.0/24", "special", "6to4 relay anycast (deprecated)"],
  ["192.168.0.0/16", "private", "private-use"],
  ["198.18.0.0/15", "special", "benchmarking"],
  ["198.51.100.0/24", "special", "documentation (TEST-NET-2)"],
  ["203.0.113.0/24", "special", "documentation (TEST-NET-3)"],
  ["224.0.0.0/4", "special", "multicast"],
  ["240.0.0.0/4", "special", "reserved (and 255.255.255.255, limited broadcast)"],
  ["::/128", "special", "unspecified"],
  ["::1/128", "loopback", "loopback"],
  ["::/96", "special", "IPv4-compatible (deprecated)"],
  ["64:ff9b::/96", "special", "NAT64 (IPv4-IPv6 translation)"],
  ["64:ff9b:1::/48", "special", "NAT64 (local-use translation)"],
  ["100::/64", "special", "discard-only"],
  ["100:0:0:1::/64", "special", "dummy prefix"],
  ["2001::/23", "special", "IETF protocol assignments (Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID, …)"],
  ["2001:db8::/32", "special", "documentation"],
  ["2002::/16", "special", "6to4"],
  ["3fff::/20", "special", "documentation"],
  ["5f00::/16", "special", "segment routing (SRv6) SIDs"],
  ["fc00::/7", "private", "unique local (ULA)"],
  ["fe80::/10", "special", "link-local"],
  ["fec0::/10", "special", "site-local (deprecated)"],
  ["ff00::/8", "special", "multicast"]
]

const RANGES = SPECIAL_PURPOSE.map(([cidr, kind, name]) => ({ cidr: Cidr.parseCidr(cidr)!, kind, name }))

/** Addresses already placed (`null`: public): every delivery asks about its endpoint's few addresses again. */
const placed = new BoundedCache<string, (typeof RANGES)[number] | null>(1_024)

/** The special-purpose range an address is in, or `undefined` for a public one. */
const specialRangeOf = (ip: string) => {
  let range = placed.get(ip)
  if (range === undefined) placed.set(ip, range = RANGES.find((r) => Cidr.cidrContains(r.cidr, ip)) ?? null)
  return range ?? undefined
}

/** A host written as loopback (`URL.hostname` form: `localhost`, 127.x.x.x, `[::1]`). */
const isLoopbackHost = (host: string) => {
  const literal = host.replace(/^\[|\]$/g, "")
  return host === "localhost" || (Cidr.isValidIp(literal) && specialRangeOf(literal)?.kind === "loopback")
}

/**
 * The one way to reach loopback: `http` on a loopback host, a test-mode account's local receiver (live
 * mode refuses `http`, so a stored URL of this shape was registered in test mode).
 */
const isLocalReceiver = (url: URL) => url.protocol === "http:" && isLoopbackHost(url.hostname)

/**
 * The operator's receiver policy. `loopback` (`TENDER_WEBHOOK_ALLOW_LOOPBACK`, default on): test-mode
 * local receivers at all; a shared production deployment turns it off, since any merchant could
 * otherwise have the server POST to any loopback port (a port scan, an admin endpoint such as a
 * sidecar's). `deployment`: where this deployment listens, which no endpoint may target, asked at
 * every check (registration, each delivery) after the URL's host is resolved: each place a port on
 * every loopback address and on its `addresses`. Every `serve` process's (ServerListeners, shared
 * through storage, so a standalone `tender worker` knows them too), the database's, Redis's, and the
 * public, SDK and fields URLs' when they resolve to this deployment (webhooks/Deployment.ts in the
 * adapters works them out).
 */
export interface ReceiverPolicy {
  readonly loopback: boolean
  readonly deployment: Effect.Effect<ReadonlyArray<Listener>>
}

/** The receiver policy in effect: by default loopback endpoints allowed, no deployment addresses known. */
export const WebhookReceiverPolicy = Context.Reference<ReceiverPolicy>("@tender/domain/WebhookReceiverPolicy", {
  defaultValue: () => ({ loopback: true, deployment: Effect.succeed([]) })
})

/**
 * How often a serving process refreshes its ServerListeners row, and how old a row may be and still
 * count: three refreshes missed, the process is gone (killed, its host lost).
 */
export const LISTENER_HEARTBEAT_MS = 30_000
/** How old a ServerListeners row may be and still count. */
export const LISTENER_STALE_MS = 3 * LISTENER_HEARTBEAT_MS

/**
 * Keeps this process's ServerListeners row while the scope is open: written now, refreshed every
 * `everyMs`, deleted when the scope closes (a graceful stop). A refresh that fails (the database away
 * a moment) or hangs (a lock held on the table) is logged and the next one tries again: a heartbeat
 * that stopped would free the port to webhooks once the row went stale, while the server still
 * answers on it. A hanging one is given up after `everyMs` (interrupted: its statement cancelled).
 */
export const keepListed = Effect.fnUntraced(function*(process: string, listener: Listener, everyMs: number = LISTENER_HEARTBEAT_MS) {
  const listeners = yield* ServerListeners
  const beat = listeners.register(process, listener, LISTENER_STALE_MS).pipe(
    Effect.timeout(everyMs),
    Effect.catchCause((cause) => Effect.logWarning(`recording port ${listener.port} as this server's failed; trying again in ${everyMs} ms`, cause))
  )
  yield* Effect.acquireRelease(beat, () =>
    listeners.unregister(process).pipe(
      Effect.catchCause((cause) => Effect.logWarning(`port ${listener.port} could not be given back; it stops counting once stale`, cause))
    ))
  yield* Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(everyMs)))
})

/** The port a URL reaches (its scheme's default when it names none). */
const portOfUrl = (url: URL) => url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80

/** Why a local receiver may not be used under the operator's policy, or `undefined`. */
const localReceiverRefusal = (policy: ReceiverPolicy) =>
  policy.loopback ? undefined : "must be https (loopback receivers are turned off on this server)"

/** Which of SPECIAL_PURPOSE's kinds an address is in (`loopback` for 127.0.0.0/8, ::1 and their IPv4-mapped forms), else `public`. */
export const addressKind = (address: string) => specialRangeOf(address)?.kind ?? "public"

/** Why `address`:`port` may not be reached because this deployment is there, or `undefined`. */
const deploymentRefusal = (address: string, port: number, deployment: ReadonlyArray<Listener>) => {
  const loopback = addressKind(address) === "loopback"
  const ours = deployment.some((place) =>
    place.port === port && (loopback || place.addresses.some((own) => Cidr.sameAddress(own, address)))
  )
  if (!ours) return undefined
  return loopback ? `must not point at loopback port ${port} (used by this server)` : `must not point at ${address} port ${port} (used by this server)`
}

/**
 * The operator's choice (`TENDER_WEBHOOK_ALLOW_PRIVATE`): endpoints may be on private-use, CGNAT and
 * unique-local addresses (receivers inside the operator's own network). Read at registration and at
 * every delivery.
 */
export const WebhookPrivateReceivers = Context.Reference<boolean>("@tender/domain/WebhookPrivateReceivers", {
  defaultValue: () => false
})

/** RFC 1035 / 1123 host names: letters, digits and hyphens, labels of 1–63, at most 253 in all. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i
const MAX_HOSTNAME = 253

const hostnameProblem = (hostname: string): string | undefined => {
  // An IP literal: the URL parser has already checked and normalised it (`[…]` for IPv6).
  if (hostname.startsWith("[") || Cidr.isValidIp(hostname)) return undefined
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname
  if (name.length > MAX_HOSTNAME) return `host must be at most ${MAX_HOSTNAME} characters`
  if (!name.split(".").every((label) => LABEL.test(label))) {
    return "host must be a domain name (labels of letters, digits and hyphens, at most 63 characters each) or an IP address"
  }
  return undefined
}

/**
 * What is wrong with an endpoint URL as written, whatever its host resolves to, or the parsed URL.
 * Live mode: https only. Test mode: https, or http on a loopback host (local receivers).
 */
const endpointUrlProblem = (raw: string, mode: Account["mode"], policy: ReceiverPolicy) => {
  const problem = urlProblem(raw)
  if (problem !== undefined) return problem
  const url = new URL(raw)
  if (url.username !== "" || url.password !== "") return "must not carry credentials"
  const host = hostnameProblem(url.hostname)
  if (host !== undefined) return host
  if (url.protocol === "https:") return url
  if (mode === "live") return "must be https in live mode"
  if (!isLocalReceiver(url)) return "must be https (http is allowed for loopback hosts in test mode)"
  return localReceiverRefusal(policy) ?? url
}

/** Why an endpoint may not be reached at `address` (what its host resolved to), or `undefined`. */
const addressRefusal = (address: string, allow: { readonly loopback: boolean; readonly private: boolean }) => {
  if (!Cidr.isValidIp(address)) return `resolves to ${address}, not an IP address`
  const range = specialRangeOf(address)
  if (range === undefined || (range.kind === "loopback" && allow.loopback) || (range.kind === "private" && allow.private)) {
    return undefined
  }
  return `must not point at ${address} (${range.name})`
}

/** The addresses a URL's host stands for: an IP literal itself, a name through the resolver. */
const addressesOf = (url: URL) => {
  const host = url.hostname.replace(/^\[|\]$/g, "")
  return Cidr.isValidIp(host) ? Effect.succeed([host]) : Effect.flatMap(HostResolver, (resolver) => resolver.resolve(host))
}

/**
 * Every address the host resolves to, checked: the first refusal, or the addresses. Registration and
 * each delivery ask (a name may point elsewhere since), and the transport connects only to these.
 * Beyond the address ranges, no address may be one of this deployment's at the URL's port.
 */
const checkAddresses = Effect.fnUntraced(function*(url: URL) {
  const allow = { loopback: isLocalReceiver(url), private: yield* WebhookPrivateReceivers }
  const addresses = yield* addressesOf(url)
  for (const address of addresses) {
    const refusal = addressRefusal(address, allow)
    if (refusal !== undefined) return { _tag: "Refused" as const, reason: refusal, of: "host" as const }
  }
  if (addresses.length > 0) {
    const deployment = yield* (yield* WebhookReceiverPolicy).deployment
    for (const address of addresses) {
      const refusal = deploymentRefusal(address, portOfUrl(url), deployment)
      if (refusal !== undefined) return { _tag: "Refused" as const, reason: refusal, of: "URL" as const }
    }
  }
  return { _tag: "Checked" as const, addresses }
})

/**
 * An endpoint URL as registered (create, or update of its URL): well-formed, its scheme allowed in the
 * account's mode, and every address its host resolves to allowed (loopback only to `http` on a
 * loopback host, in test mode; never an address:port of this deployment). A name that does not
 * resolve is refused in live mode; in test mode it may be registered (a receiver not set up yet), and
 * each delivery checks it again anyway.
 */
export const checkEndpointUrl = Effect.fnUntraced(function*(mode: Account["mode"], raw: string) {
  const url = endpointUrlProblem(raw, mode, yield* WebhookReceiverPolicy)
  if (typeof url === "string") return yield* invalidField("url", url)
  const checked = yield* checkAddresses(url)
  if (checked._tag === "Refused") return yield* invalidField("url", checked.reason)
  if (checked.addresses.length === 0 && mode === "live") return yield* invalidField("url", `host ${url.hostname} does not resolve`)
  return url.toString()
})

/**
 * Where a delivery to a stored endpoint URL may connect: its host resolved now and every address
 * checked as at registration (a URL stored before a rule existed is held to it too). The transport
 * connects to these addresses only, so a name re-pointed between this check and the connection (DNS
 * rebinding) reaches nothing else.
 */
export const deliveryTargets = Effect.fnUntraced(function*(raw: string) {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { _tag: "Refused" as const, reason: "endpoint URL is not a URL" }
  }
  if (url.protocol !== "https:" && !isLocalReceiver(url)) return { _tag: "Refused" as const, reason: "endpoint URL must be https" }
  // A local receiver registered before the operator turned loopback off.
  const local = isLocalReceiver(url) ? localReceiverRefusal(yield* WebhookReceiverPolicy) : undefined
  if (local !== undefined) return { _tag: "Refused" as const, reason: `endpoint URL ${local}` }
  const checked = yield* checkAddresses(url)
  if (checked._tag === "Refused") return { _tag: "Refused" as const, reason: `endpoint ${checked.of} ${checked.reason}` }
  if (checked.addresses.length === 0) return { _tag: "Refused" as const, reason: `host ${url.hostname} does not resolve` }
  return checked
})
