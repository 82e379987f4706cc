/**
 * Where this deployment listens, for the webhook receiver policy (WebhookReceivers.ts, `WebhookReceiverPolicy`;
 * issue 21 item 10): no endpoint may target any of it, at registration and at every delivery, after
 * its host is resolved. Each place is a port, refused on every loopback address and on the place's
 * addresses:
 *
 * - every `serve` process's port on its machine's addresses (ServerListeners, read at each check),
 *   and the port this process was told to listen on (`listenPort`) on this machine's;
 * - the database: `DATABASE_URL`'s host resolved and its port, or the embedded PostgreSQL's port
 *   (it listens on loopback only); Redis: `REDIS_URL`'s host resolved and its port;
 * - the public, SDK and fields URLs' port, on the addresses their host resolves to when these are
 *   this deployment's (loopback, this machine's, a `serve` process's machine's). One resolving
 *   elsewhere is a load balancer or CDN whose addresses other sites share: not refused by address.
 *
 * A database or Redis on this machine (its host resolves to loopback or to one of the machine's
 * addresses) is refused on every address of the machine: it may listen on all of them. Names are
 * resolved through the HostResolver that webhook checks use. What changes only with the operator's
 * set-up (the services' addresses, the embedded server's port, the machine's) is worked out again
 * at most every SERVICES_TTL; the servers' rows are read at each check.
 */
import { networkInterfaces } from "node:os"
import {
  addressKind,
  Cidr,
  HostResolver,
  type Listener,
  LISTENER_STALE_MS,
  MachineAddresses,
  ServerListeners,
  WebhookReceiverPolicy
} from "@tender/domain"
import { Effect, Layer, Option } from "effect"
import type { TenderConfig } from "../Config.ts"
import * as EmbeddedPostgres from "../storage/postgres/Embedded.ts"

/** This machine's addresses, every interface's (loopback included), without an IPv6 zone. */
export const machineAddresses = (): ReadonlyArray<string> =>
  Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address.replace(/%.*$/, "")))

/** The MachineAddresses port: what a serving process records as its place (the HTTP server's `listening`). */
export const machineLayer: Layer.Layer<MachineAddresses> = Layer.succeed(
  MachineAddresses,
  MachineAddresses.of({ addresses: Effect.sync(machineAddresses) })
)

/** How long the services' addresses are kept before they are worked out again. */
export const SERVICES_TTL = "10 seconds"

/** A service URL's host (an IP literal unbracketed) and port (`fallback` when it names none), if it parses. */
const endpointOf = (raw: string | undefined, fallback: (url: URL) => number) => {
  const url = raw === undefined ? undefined : URL.parse(raw)
  if (url === undefined || url === null) return undefined
  return { host: url.hostname.replace(/^\[|\]$/g, ""), port: url.port === "" ? fallback(url) : Number(url.port) }
}

const webPort = (url: URL) => url.protocol === "https:" ? 443 : 80

const isOneOf = (addresses: ReadonlyArray<string>) => (address: string) => addresses.some((own) => Cidr.sameAddress(own, address))

/** On this machine: loopback, or one of its addresses. */
const isLocal = (machine: ReadonlyArray<string>) => (address: string) => addressKind(address) === "loopback" || isOneOf(machine)(address)

/** The operator's receiver policy, with this deployment's places as above (a Reference: the layer provides it, its type names no service). */
export const layer = (config: TenderConfig): Layer.Layer<never, never, ServerListeners | HostResolver> =>
  Layer.effect(
    WebhookReceiverPolicy,
    Effect.gen(function*() {
      const resolver = yield* HostResolver
      const listeners = yield* ServerListeners
      const resolve = (host: string) => Cidr.isValidIp(host) ? Effect.succeed([host]) : resolver.resolve(host)
      const services = yield* Effect.cachedWithTTL(
        Effect.gen(function*() {
          const machine = machineAddresses()
          // A database or Redis: where its name points, and the whole machine when that is this one.
          const backend = Effect.fnUntraced(function*(raw: string | undefined, fallback: (url: URL) => number) {
            const at = endpointOf(raw, fallback)
            if (at === undefined) return []
            const addresses = yield* resolve(at.host)
            return [{ port: at.port, addresses: addresses.some(isLocal(machine)) ? [...addresses, ...machine] : addresses }]
          })
          const fronts = yield* Effect.forEach([config.publicUrl, config.sdkUrl, config.fieldsUrl], (raw) => {
            const at = endpointOf(raw, webPort)
            return at === undefined ? Effect.succeed([]) : Effect.map(resolve(at.host), (addresses) => [{ port: at.port, addresses }])
          })
          const embedded = config.storage === "postgres" && config.databaseUrl === undefined
            ? Option.toArray(yield* EmbeddedPostgres.recordedPort(config.dataDir)).map((port) => ({ port, addresses: [] }))
            : []
          const listen = config.listenPort === undefined ? [] : [{ port: config.listenPort, addresses: machine }]
          return {
            machine,
            fixed: [...listen, ...embedded, ...(yield* backend(config.databaseUrl, () => 5432)), ...(yield* backend(config.redisUrl, () => 6379))],
            fronts: fronts.flat()
          }
        }),
        SERVICES_TTL
      )
      const deployment = Effect.gen(function*() {
        const { machine, fixed, fronts } = yield* services
        const serving = yield* listeners.listening(LISTENER_STALE_MS)
        // A front is this deployment's where its name points at it: loopback, this machine, a server's machine.
        const onServers = isOneOf(serving.flatMap((listener) => listener.addresses))
        const frontPlaces = fronts.flatMap((front): ReadonlyArray<Listener> => {
          const own = front.addresses.filter((address) => isLocal(machine)(address) || onServers(address))
          if (own.length === 0) return []
          return [{ port: front.port, addresses: own.some(isLocal(machine)) ? [...own, ...machine] : own }]
        })
        return [...fixed, ...serving, ...frontPlaces]
      })
      return { loopback: config.webhookAllowLoopback ?? true, deployment }
    })
  )
