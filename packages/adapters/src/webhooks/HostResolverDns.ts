/**
 * Host names to addresses for the SSRF check of endpoint URLs, at registration and at every delivery
 * (the transport then connects to exactly these addresses). A name that does not resolve, or not in
 * time, gives no addresses, which the check refuses.
 *
 * DNS goes through c-ares (`dns.promises.Resolver`: A and AAAA queries on the event loop), not
 * `getaddrinfo`: that runs on libuv's four-thread pool and blocks its thread for the system
 * resolver's whole timeout, which an Effect timeout cannot end, so a merchant's names in a zone whose
 * nameservers drop packets would stall every other merchant's lookups and every file operation.
 * Each lookup is bounded (`timeoutMs`, the c-ares query cancelled when it passes) and at most
 * `concurrency` run at once in the process.
 *
 * c-ares does not read /etc/hosts, which `getaddrinfo` did: names listed there (`localhost`, an
 * operator's pinned receivers) are answered from the file, read at each lookup as getaddrinfo does;
 * `localhost` without an entry is loopback (RFC 6761). Everything else must be in DNS.
 */
import { readFile } from "node:fs/promises"
import { Resolver } from "node:dns/promises"
import { isIP } from "node:net"
import { HostResolver } from "@tender/domain"
import { Effect, Layer, Semaphore } from "effect"

export interface Options {
  /** Nameservers (`ip` or `ip:port`); unset → the system's (/etc/resolv.conf). */
  readonly servers?: ReadonlyArray<string> | undefined
  /** A whole lookup (A and AAAA, every try) gives up after this long and resolves to nothing. */
  readonly timeoutMs?: number | undefined
  /** Lookups in flight at once in this process; more wait for a slot (inside their timeout). */
  readonly concurrency?: number | undefined
  /** The hosts file answered before DNS. */
  readonly hostsFile?: string | undefined
}

export const DEFAULT_TIMEOUT_MS = 3_000
export const DEFAULT_CONCURRENCY = 32
/** Each query tried this many times inside the lookup's timeout (UDP loses packets). */
const TRIES = 2

/** `URL.hostname` keeps the brackets of an IPv6 literal. */
const unbracket = (host: string) => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host)

/** The addresses a hosts file gives `name` (matched without case, as getaddrinfo does), in file order. */
const fromHostsFile = async (file: string, name: string): Promise<ReadonlyArray<string>> => {
  const text = await readFile(file, "utf8").catch(() => "")
  const wanted = name.toLowerCase()
  const found: Array<string> = []
  for (const line of text.split("\n")) {
    const [address, ...names] = line.replace(/#.*/, "").trim().split(/\s+/)
    if (address !== undefined && isIP(address) !== 0 && names.some((entry) => entry.toLowerCase() === wanted)) {
      found.push(address)
    }
  }
  return found
}

/** A and AAAA through a resolver of the lookup's own, cancelled when the lookup is interrupted. */
const query = (name: string, options: Options, interrupted: AbortSignal): Promise<ReadonlyArray<string>> => {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  // c-ares doubles the timeout at each retry: the first try gets a third, the second two thirds.
  const resolver = new Resolver({ timeout: Math.max(1, Math.floor(timeoutMs / 3)), tries: TRIES })
  if (options.servers !== undefined) resolver.setServers([...options.servers])
  interrupted.addEventListener("abort", () => resolver.cancel(), { once: true })
  const none = () => [] as Array<string>
  return Promise.all([resolver.resolve4(name).catch(none), resolver.resolve6(name).catch(none)]).then(([v4, v6]) => [...v4, ...v6])
}

export const make = (options: Options = {}) =>
  Effect.map(Semaphore.make(options.concurrency ?? DEFAULT_CONCURRENCY), (slots) =>
    HostResolver.of({
      resolve: (host) => {
        const name = unbracket(host).replace(/\.$/, "")
        if (isIP(name) !== 0) return Effect.succeed([name])
        return Effect.promise(() => fromHostsFile(options.hostsFile ?? "/etc/hosts", name)).pipe(
          Effect.flatMap((listed) => {
            if (listed.length > 0) return Effect.succeed(listed)
            if (name.toLowerCase() === "localhost") return Effect.succeed(["127.0.0.1", "::1"])
            return slots.withPermits(1)(Effect.promise((interrupted) => query(name, options, interrupted)))
          }),
          // The slot wait counts too: a lookup answers within its timeout whatever else is in flight.
          Effect.timeoutOption(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
          Effect.map((found) => (found._tag === "Some" ? [...new Set(found.value)] : [])),
          Effect.withSpan("HostResolverDns.resolve")
        )
      }
    }))

export const layerWith = (options: Options): Layer.Layer<HostResolver> => Layer.effect(HostResolver, make(options))

/** The system's nameservers, the default timeout and slots. */
export const layer: Layer.Layer<HostResolver> = layerWith({})
