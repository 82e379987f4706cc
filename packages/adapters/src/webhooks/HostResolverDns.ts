/**
 * Host names to addresses through the system resolver (`getaddrinfo`), for the SSRF check of
 * endpoint URLs at registration and at every delivery (the transport then connects to exactly these
 * addresses). A name that does not resolve gives no addresses, which the check refuses.
 */
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"
import { HostResolver } from "@tender/domain"
import { Effect, Layer } from "effect"

/** `URL.hostname` keeps the brackets of an IPv6 literal. */
const unbracket = (host: string) => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host)

export const layer: Layer.Layer<HostResolver> = Layer.succeed(
  HostResolver,
  HostResolver.of({
    resolve: (host) => {
      const name = unbracket(host)
      if (isIP(name) !== 0) return Effect.succeed([name])
      return Effect.promise(() =>
        lookup(name, { all: true }).then(
          (found) => [...new Set(found.map((entry) => entry.address))],
          () => []
        )
      ).pipe(Effect.withSpan("HostResolverDns.resolve"))
    }
  })
)
