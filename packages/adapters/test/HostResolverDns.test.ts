/** The resolver behind the SSRF check: literals as they are, names through /etc/hosts then DNS (c-ares), failures empty. */
import { describe, expect, it } from "@effect/vitest"
import { HostResolver } from "@tender/domain"
import { Effect } from "effect"
import * as HostResolverDns from "../src/webhooks/HostResolverDns.ts"

const resolve = (host: string) =>
  Effect.flatMap(HostResolver, (resolver) => resolver.resolve(host)).pipe(Effect.provide(HostResolverDns.layer))

describe("HostResolverDns", () => {
  it.live("an IP literal resolves to itself, an IPv6 one with or without brackets", () =>
    Effect.gen(function*() {
      expect(yield* resolve("127.0.0.1")).toEqual(["127.0.0.1"])
      expect(yield* resolve("10.1.2.3")).toEqual(["10.1.2.3"])
      expect(yield* resolve("[::1]")).toEqual(["::1"])
      expect(yield* resolve("fe80::1")).toEqual(["fe80::1"])
    }))

  it.live("a name resolves to its addresses", () =>
    Effect.gen(function*() {
      const addresses = yield* resolve("localhost")
      expect(addresses.length).toBeGreaterThan(0)
      expect(addresses.some((a) => a === "127.0.0.1" || a === "::1")).toBe(true)
    }))

  it.live("a name that does not resolve gives no addresses", () =>
    Effect.gen(function*() {
      expect(yield* resolve("does-not-exist.invalid")).toEqual([])
      expect(yield* resolve("")).toEqual([])
    }))
})
