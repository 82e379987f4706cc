/**
 * The resolver against nameservers the test runs (real UDP on loopback): one that answers crafted A
 * and AAAA records, one that never answers (a zone whose nameservers drop packets). A lookup is
 * bounded by its timeout, holds no thread of libuv's pool meanwhile (file reads go on), and at most
 * `concurrency` are in flight; registration answers `validation_failed` naming url within the timeout.
 */
import * as dgram from "node:dgram"
import { mkdtemp, readFile, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Accounts, HostResolver, Webhooks } from "@tender/domain"
import { Effect, Fiber, Layer } from "effect"
import * as Infrastructure from "../src/Infrastructure.ts"
import * as HostResolverDns from "../src/webhooks/HostResolverDns.ts"

type Records = Record<string, { readonly A?: ReadonlyArray<string>; readonly AAAA?: ReadonlyArray<string> }>

const ipv6Bytes = (address: string) => {
  const [head, tail = ""] = address.split("::")
  const left = head === "" ? [] : head.split(":")
  const right = tail === "" ? [] : tail.split(":")
  const groups = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
  return Buffer.from(groups.flatMap((group) => [parseInt(group, 16) >> 8, parseInt(group, 16) & 0xff]))
}

/**
 * A nameserver on 127.0.0.1: answers A (type 1) and AAAA (28) from `records` (no records: an empty
 * answer), or never answers when `records` is undefined. Records the names it was asked.
 */
const nameserver = (records: Records | undefined) =>
  Effect.acquireRelease(
    Effect.callback<dgram.Socket>((resume) => {
      const socket = dgram.createSocket("udp4")
      socket.bind(0, "127.0.0.1", () => resume(Effect.succeed(socket)))
    }),
    (socket) => Effect.sync(() => socket.close())
  ).pipe(Effect.map((socket) => {
    const asked: Array<string> = []
    socket.on("message", (query, from) => {
      const labels: Array<string> = []
      let at = 12
      while (query[at] !== 0) {
        labels.push(query.subarray(at + 1, at + 1 + query[at]).toString("ascii"))
        at += query[at] + 1
      }
      const type = query.readUInt16BE(at + 1)
      const name = labels.join(".").toLowerCase()
      asked.push(name)
      if (records === undefined) return
      const question = query.subarray(12, at + 5)
      const addresses = (type === 1 ? records[name]?.A : type === 28 ? records[name]?.AAAA : undefined) ?? []
      const header = Buffer.alloc(12)
      query.copy(header, 0, 0, 2)
      header.writeUInt16BE(0x8180, 2) // a response, recursion desired and available, no error
      header.writeUInt16BE(1, 4)
      header.writeUInt16BE(addresses.length, 6)
      const answers = addresses.map((address) => {
        const data = type === 1 ? Buffer.from(address.split(".").map(Number)) : ipv6Bytes(address)
        const fixed = Buffer.alloc(12)
        fixed.writeUInt16BE(0xc00c, 0) // the name: a pointer to the question's
        fixed.writeUInt16BE(type, 2)
        fixed.writeUInt16BE(1, 4) // IN
        fixed.writeUInt32BE(60, 6)
        fixed.writeUInt16BE(data.length, 10)
        return Buffer.concat([fixed, data])
      })
      socket.send(Buffer.concat([header, question, ...answers]), from.port, from.address)
    })
    return { server: `127.0.0.1:${socket.address().port}`, asked }
  }))

const resolveWith = (options: HostResolverDns.Options, host: string) =>
  Effect.flatMap(HostResolver, (resolver) => resolver.resolve(host)).pipe(Effect.provide(HostResolverDns.layerWith(options)))

const PUBLIC = "93.184.215.14"

describe("HostResolverDns against local nameservers", () => {
  it.live("a name is answered with its A and AAAA records, from the configured nameserver", () =>
    Effect.gen(function*() {
      const dns = yield* nameserver({ "receiver.test": { A: [PUBLIC], AAAA: ["2606:2800:21f:cb07::1"] } })
      expect(yield* resolveWith({ servers: [dns.server] }, "receiver.test")).toEqual([PUBLIC, "2606:2800:21f:cb07::1"])
      expect(yield* resolveWith({ servers: [dns.server] }, "nothing.test")).toEqual([])
    }).pipe(Effect.scoped))

  it.live("a nameserver that never answers: nothing, within the timeout, while file reads and other lookups go on", () =>
    Effect.gen(function*() {
      const silent = yield* nameserver(undefined)
      const answering = yield* nameserver({ "fast.test": { A: [PUBLIC] } })
      const started = Date.now()
      // More hung lookups than libuv has threads: getaddrinfo would have blocked all four.
      const hung = yield* Effect.forkChild(Effect.all(
        Array.from({ length: 8 }, (_, i) => resolveWith({ servers: [silent.server], timeoutMs: 2_000 }, `hang${i}.test`)),
        { concurrency: "unbounded" }
      ))
      yield* Effect.sleep("50 millis")
      yield* Effect.promise(() => readFile(import.meta.filename))
      expect(yield* resolveWith({ servers: [answering.server] }, "fast.test")).toEqual([PUBLIC])
      expect(Date.now() - started).toBeLessThan(1_000)
      const results = yield* Fiber.join(hung)
      expect(results.every((found) => found.length === 0)).toBe(true)
      expect(Date.now() - started).toBeLessThan(3_500)
      expect(silent.asked.length).toBeGreaterThan(0)
    }).pipe(Effect.scoped))

  it.live("at most `concurrency` lookups are in flight: one more waits for a slot, inside its own timeout", () =>
    Effect.gen(function*() {
      const silent = yield* nameserver(undefined)
      const layer = HostResolverDns.layerWith({ servers: [silent.server], timeoutMs: 1_000, concurrency: 2 })
      const found = yield* Effect.flatMap(HostResolver, (resolver) =>
        Effect.gen(function*() {
          const all = yield* Effect.forkChild(Effect.all(["a.test", "b.test", "c.test"].map((name) => resolver.resolve(name)), { concurrency: "unbounded" }))
          // While two hold both slots, the third has sent nothing (which two start first is the
          // scheduler's choice: CI once saw a and c).
          yield* Effect.sleep("400 millis")
          expect(new Set(silent.asked).size).toBe(2)
          expect(silent.asked.every((name) => ["a.test", "b.test", "c.test"].includes(name))).toBe(true)
          return yield* Fiber.join(all)
        })).pipe(Effect.provide(layer))
      expect(found).toEqual([[], [], []])
    }).pipe(Effect.scoped))

  it.live("names in the hosts file are answered from it, without DNS; localhost without an entry is loopback", () =>
    Effect.gen(function*() {
      const silent = yield* nameserver(undefined)
      const dir = yield* Effect.promise(() => mkdtemp(path.join(tmpdir(), "hosts-")))
      const hostsFile = path.join(dir, "hosts")
      yield* Effect.promise(() => writeFile(hostsFile, "# pinned receivers\n10.9.8.7  Pinned.Test pinned # the operator's\n"))
      const options = { servers: [silent.server], timeoutMs: 2_000, hostsFile }
      const started = Date.now()
      expect(yield* resolveWith(options, "pinned.test")).toEqual(["10.9.8.7"])
      expect(yield* resolveWith(options, "localhost")).toEqual(["127.0.0.1", "::1"])
      expect(Date.now() - started).toBeLessThan(500)
      expect(silent.asked).toEqual([])
    }).pipe(Effect.scoped))

  it.live("registration through the wired infrastructure (TENDER_WEBHOOK_DNS_SERVERS): a silent zone is refused in time, a crafted answer is checked", () =>
    Effect.gen(function*() {
      const silent = yield* nameserver(undefined)
      const answering = yield* nameserver({ "rebind.test": { A: [PUBLIC, "127.0.0.1"] }, "hooks.test": { A: [PUBLIC] } })
      const register = (servers: ReadonlyArray<string>, url: string) =>
        Effect.gen(function*() {
          const accounts = yield* Accounts
          const account = yield* accounts.get((yield* accounts.create({ name: "dns", mode: "live" })).account_id)
          return yield* (yield* Webhooks).createEndpoint(account, { url })
        }).pipe(
          Effect.provide(Layer.mergeAll(Accounts.layer, Webhooks.layer).pipe(
            Layer.provideMerge(Infrastructure.layer({ storage: "memory", dataDir: ".tender-unused", webhookDnsServers: servers }))
          ))
        )
      const started = Date.now()
      const slow = yield* Effect.flip(register([silent.server], "https://slow.test/hook"))
      expect(Date.now() - started).toBeLessThan(HostResolverDns.DEFAULT_TIMEOUT_MS + 1_000)
      expect(slow).toMatchObject({ code: "validation_failed", errors: [{ field: "url", message: expect.stringContaining("does not resolve") }] })
      const rebound = yield* Effect.flip(register([answering.server], "https://rebind.test/hook"))
      expect(rebound).toMatchObject({ errors: [{ field: "url", message: expect.stringContaining("127.0.0.1") }] })
      expect(yield* register([answering.server], "https://hooks.test/hook")).toMatchObject({ url: "https://hooks.test/hook" })
    }).pipe(Effect.scoped), 15_000)
})
