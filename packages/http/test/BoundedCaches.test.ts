/**
 * In-process caches whose keys a caller chooses stay bounded: the hosted page's country names (keyed
 * by what the names depend on, not the raw Accept-Language) and the in-process rate limiter's
 * buckets (keyed by client IPs among others).
 */
import { describe, expect, it } from "vitest"
import { type AccountId, type CheckoutSession, type CheckoutSessionId, type OrderId, PaymentMethods, RateLimiter } from "@tender/domain"
import { BoundedCache } from "@tender/domain/BoundedCache"
import * as RateLimiterMemory from "@tender/adapters/ratelimit/RateLimiterMemory"
import { Effect } from "effect"
import { type CheckoutView, countriesFor, regionNames, renderCheckoutPage } from "../src/hosted/CheckoutPage.ts"
import { resolveLocale } from "../src/hosted/i18n.ts"

describe("BoundedCache", () => {
  it("keeps at most its capacity, evicting the least recently used", () => {
    const cache = new BoundedCache<string, number>(2)
    cache.set("a", 1).set("b", 2)
    expect(cache.get("a")).toBe(1) // a is now the most recent
    cache.set("c", 3)
    expect([cache.has("a"), cache.has("b"), cache.has("c"), cache.size]).toEqual([true, false, true, 2])
  })
})

const session: CheckoutSession.CheckoutSession = {
  id: "cs_1" as CheckoutSessionId,
  account_id: "acct_1" as AccountId,
  livemode: false,
  order_id: "ord_1" as OrderId,
  merchant_reference: "order-42",
  status: "open",
  amount: 1050,
  currency: "USD",
  country: "US",
  capture_method: "automatic",
  payment_methods: null,
  straight_through: false,
  max_payment_attempts: 3,
  attempts: 0,
  expires_at: "2026-03-04T10:30:00.000Z",
  transaction_id: null,
  next_action: null,
  customer: null,
  success_url: "https://shop.test/ok",
  cancel_url: "https://shop.test/cancel",
  locale: null,
  line_items: null,
  // the address form lists every country, named in the customer's language
  collect_address: true,
  collect_phone: false,
  processing_profile: null,
  created_at: "2026-03-04T09:30:00.000Z",
  updated_at: "2026-03-04T09:30:00.000Z",
  version: 1
}

const view: CheckoutView = {
  session,
  merchant_name: "Acme Coffee",
  methods: [PaymentMethods.findMethod("paypal")!],
  attempts_left: 3,
  last_decline: null,
  publishable_key: "pk_test_acme",
  three_ds_display_mode: "inline"
}

describe("the hosted page's country names", () => {
  it("10,000 distinct Accept-Language headers keep the cache within its bound, and names stay localised", () => {
    const languages = ["en", "es", "pt", "nl", "de"]
    const regions = ["US", "BR", "MX", "NL", "DE", "AT", "CH", "GB"]
    // the documented bound (CheckoutPage.regionNames)
    const BOUND = 64
    for (let i = 0; i < 10_000; i++) {
      // every header distinct: private-use and extension subtags on 40 language-region pairs
      const header = `${languages[i % 5]}-${regions[Math.floor(i / 5) % regions.length]}-u-nu-latn-x-c${i}, fr;q=0.5`
      countriesFor(resolveLocale(null, header))
    }
    expect(regionNames.size).toBeGreaterThan(0)
    expect(regionNames.size).toBeLessThanOrEqual(BOUND)
    const german = renderCheckoutPage(view, { locale: resolveLocale(null, "de-DE-x-anything") }).html.value
    expect(german).toContain("Vereinigte Staaten")
  })
})

describe("the in-process rate limiter", () => {
  it("keeps at most its capacity of buckets: the least recently used is dropped (and starts full again)", async () => {
    const limiter = RateLimiterMemory.layerWith(1_000)
    // One layer, built once: the buckets live as long as it does.
    const run = await Effect.runPromise(Effect.map(Effect.context<RateLimiter>().pipe(Effect.provide(limiter)), (context) =>
      (key: string) =>
        Effect.runPromise(Effect.gen(function*() {
          return (yield* (yield* RateLimiter).consume(key, { perSecond: 0.001, burst: 1 })).allowed
        }).pipe(Effect.provideContext(context)))
    ))
    expect(await run("ip:203.0.113.1")).toBe(true)
    expect(await run("ip:203.0.113.1")).toBe(false)
    for (let i = 0; i < 1_000; i++) await run(`ip:10.0.${Math.floor(i / 256)}.${i % 256}`)
    // 1,000 other keys later the first bucket is gone: memory holds 1,000 buckets, not 1,001
    expect(await run("ip:203.0.113.1")).toBe(true)
  })
})
