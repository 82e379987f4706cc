import { describe, expect, it } from "vitest"
import * as Cidr from "../src/kernel/Cidr.ts"

describe("Cidr", () => {
  it.each([
    ["10.0.0.0/8", "10.255.1.2", true],
    ["10.0.0.0/8", "11.0.0.1", false],
    ["192.168.1.7", "192.168.1.7", true],
    ["192.168.1.7/32", "192.168.1.8", false],
    ["127.0.0.0/8", "::ffff:127.0.0.1", true],
    ["::1/128", "::1", true],
    ["2001:db8::/32", "2001:db8:ffff::1", true],
    ["2001:db8::/32", "2001:db9::1", false],
    ["0.0.0.0/0", "8.8.8.8", true],
    ["::/0", "2001:db8::1", true],
    ["0.0.0.0/0", "2001:db8::1", false]
  ])("%s contains %s: %s", (cidr, ip, expected) => {
    const parsed = Cidr.parseCidr(cidr)
    expect(parsed).toBeDefined()
    expect(Cidr.cidrContains(parsed!, ip)).toBe(expected)
  })

  it.each(["10.0.0.0/33", "300.1.1.1", "1.2.3/8", "::1/129", "fe80::1::2", "abc", ""])("refuses %s", (cidr) => {
    expect(Cidr.parseCidr(cidr)).toBeUndefined()
  })

  it("an empty allowlist permits everyone", () => {
    expect(Cidr.allowlistPermits([], "203.0.113.9")).toBe(true)
    expect(Cidr.allowlistPermits(["10.0.0.0/8"], "203.0.113.9")).toBe(false)
  })
})
