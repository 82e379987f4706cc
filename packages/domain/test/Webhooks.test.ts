/**
 * The webhook aggregate and the pure decisions of its operations (no storage, no HTTP): the endpoint's
 * transition table and the pause rule, the fan-out, an attempt's outcome, a manual retry, and an
 * endpoint's registration and change.
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type { Account } from "../src/accounts/Account.ts"
import { Conflict, ValidationFailed, WebhookDeliveryNotRetryable } from "../src/kernel/Errors.ts"
import { step } from "../src/kernel/StateMachine.ts"
import type { PaymentEvent } from "../src/payments/Payment.ts"
import * as Webhook from "../src/webhooks/Webhook.ts"
import { decideAttempt, outcomeOf } from "../src/webhooks/operations/Attempt.ts"
import { planEndpoint } from "../src/webhooks/operations/CreateEndpoint.ts"
import { fanOut, subscribers } from "../src/webhooks/operations/Record.ts"
import { decideRetry } from "../src/webhooks/operations/Redeliver.ts"
import { decideEndpointUpdate } from "../src/webhooks/operations/UpdateEndpoint.ts"

const T0 = "2026-11-01T10:00:00.000Z"
const T1 = "2026-11-01T10:00:01.000Z"
const ms = (iso: string) => Date.parse(iso)

const endpoint = (overrides: Partial<Webhook.WebhookEndpoint> = {}): Webhook.WebhookEndpoint => ({
  ...Webhook.bornEndpoint({
    id: "we_1",
    account_id: "acct_1",
    url: "https://shop.example/hooks",
    enabled_events: ["*"],
    description: null,
    created_at: T0
  }),
  ...overrides
})

const delivery = (overrides: Partial<Webhook.WebhookDelivery> = {}): Webhook.WebhookDelivery => ({
  ...Webhook.born({
    id: "whd_1",
    account_id: "acct_1",
    endpoint_id: "we_1",
    event_id: "evt_1",
    event_type: "payment.succeeded",
    attempts: 0,
    next_attempt_at: T0,
    last_attempt_at: null,
    created_at: T0
  }),
  ...overrides
})

const event: PaymentEvent = {
  id: "evt_1",
  account_id: "acct_1",
  type: "payment.succeeded",
  created_at: T0,
  livemode: false,
  processing_profile: null,
  order_id: "ord_1",
  data: {}
}

describe("webhook endpoint: transition table", () => {
  it("contract.md: an endpoint is created with `status` enabled, version 1", () => {
    expect(endpoint()).toMatchObject({ status: "enabled", version: 1, updated_at: T0 })
  })

  it("disables and enables through the table (version bumped, no events); asking for the status it has is no move", () => {
    const disabled = Result.getOrThrow(Webhook.transitionEndpoint(endpoint(), "disable", T1))
    expect(disabled.next).toMatchObject({ status: "disabled", version: 2, updated_at: T1 })
    expect(disabled.events).toEqual([])
    expect(Result.getOrThrow(Webhook.transitionEndpoint(disabled.next, "enable", T1)).next.status).toBe("enabled")
    expect(step(Webhook.EndpointMachine, "enabled", "enable")).toBeUndefined()
    expect(Result.isFailure(Webhook.transitionEndpoint(endpoint(), "enable", T1))).toBe(true)
  })
})

describe("the pause rule", () => {
  it("decisions.md: disabling pauses the endpoint's pending and failed deliveries; enabling resumes every one of them, whatever its status", () => {
    expect(Webhook.pauseOf(endpoint({ status: "disabled" }))).toEqual({ endpoint_id: "we_1", paused: true, statuses: ["pending", "failed"] })
    expect(Webhook.pauseOf(endpoint())).toEqual({ endpoint_id: "we_1", paused: false, statuses: Webhook.DELIVERY_STATUSES })
  })

  it("decisions.md: a deleted endpoint's pending deliveries end exhausted, so they resume on delete, whatever status the endpoint was read with (a disable may commit between the read and the delete)", () => {
    expect(Webhook.pauseOnDelete(endpoint({ status: "disabled" }))).toEqual(Webhook.pauseOf(endpoint()))
    expect(Webhook.pauseOnDelete(endpoint())).toEqual(Webhook.pauseOf(endpoint()))
  })

  it("an endpoint's change decides its deliveries' pause only when its status moves", () => {
    const off = Result.getOrThrow(decideEndpointUpdate(endpoint(), { description: "orders" }, "disabled", T1))
    expect(off.next).toMatchObject({ status: "disabled", description: "orders", version: 2, updated_at: T1 })
    expect(off.pause).toEqual({ endpoint_id: "we_1", paused: true, statuses: ["pending", "failed"] })
    const same = Result.getOrThrow(decideEndpointUpdate(endpoint(), { url: "https://shop.example/v2" }, "enabled", T1))
    expect(same.next).toMatchObject({ status: "enabled", url: "https://shop.example/v2", version: 2 })
    expect(same.pause).toBeUndefined()
    expect(Result.getOrThrow(decideEndpointUpdate(endpoint({ status: "disabled" }), {}, undefined, T1)).pause).toBeUndefined()
    const on = Result.getOrThrow(decideEndpointUpdate(endpoint({ status: "disabled" }), {}, "enabled", T1))
    expect(on.pause).toEqual(Webhook.pauseOf(on.next))
  })
})

describe("record (fan-out)", () => {
  it("decisions.md: one delivery per enabled endpoint subscribed to the event's type (`[\"*\"]`: all), pending and due at once", () => {
    const endpoints = [
      endpoint({ id: "we_all" }),
      endpoint({ id: "we_off", status: "disabled" }),
      endpoint({ id: "we_refunds", enabled_events: ["refund.failed"] }),
      endpoint({ id: "we_payments", enabled_events: ["payment.failed", "payment.succeeded"] })
    ]
    const subscribed = subscribers(event, endpoints)
    expect(subscribed.map((e) => e.id)).toEqual(["we_all", "we_payments"])
    const deliveries = fanOut(event, subscribed, ["whd_a", "whd_b"])
    expect(deliveries.map((d) => [d.id, d.endpoint_id])).toEqual([["whd_a", "we_all"], ["whd_b", "we_payments"]])
    expect(deliveries[0]).toMatchObject({ status: "pending", attempts: 0, next_attempt_at: T0, event_id: "evt_1", lease_token: null })
  })
})

describe("attempt", () => {
  const failed = { status_code: 500, error: "HTTP 500", duration_ms: 12 }
  const facts = { started: ms(T0), at: ms(T1), jitter: 0.5, gone: false }

  it("contract.md: any 2xx is success; another status, a timeout or a network error is a failed attempt", () => {
    expect(outcomeOf({ _tag: "Answered", status: 204, duration_ms: 3, body: "" })).toEqual({ status_code: 204, error: null, duration_ms: 3, response: "" })
    // The receiver's answer is kept as it said it (the start of it: the transport bounds it).
    expect(outcomeOf({ _tag: "Answered", status: 302, duration_ms: 3, body: "moved" })).toEqual({ status_code: 302, error: "HTTP 302", duration_ms: 3, response: "moved" })
    expect(outcomeOf({ _tag: "Answered", status: 200, duration_ms: 3 })).not.toHaveProperty("response")
    expect(outcomeOf({ _tag: "Failed", error: "timed out after 15000 ms", duration_ms: 15_000 }))
      .toEqual({ status_code: null, error: "timed out after 15000 ms", duration_ms: 15_000 })
    // A transport's reasons (one per address tried) are kept within the answer's bound (MAX_MESSAGE).
    const long = outcomeOf({ _tag: "Failed", error: "refused; ".repeat(500), duration_ms: 2 }).error!
    expect(long).toHaveLength(1024)
    expect(long.endsWith("…")).toBe(true)
  })

  it("a success ends the delivery succeeded, with its attempt logged at the start time", () => {
    const d = Result.getOrThrow(decideAttempt(delivery(), { status_code: 200, error: null, duration_ms: 5 }, facts))
    expect(d.delivery).toMatchObject({ status: "succeeded", attempts: 1, next_attempt_at: null, last_attempt_at: T0, updated_at: T1 })
    expect(d.attempt).toEqual({ delivery_id: "whd_1", attempted_at: T0, status_code: 200, duration_ms: 5, error: null })
  })

  it("contract.md: a failure schedules the next try (after 5 s for the first, ±10% jitter); the 8th failure is exhausted", () => {
    const first = Result.getOrThrow(decideAttempt(delivery(), failed, { ...facts, jitter: 0 })).delivery
    expect(first).toMatchObject({ status: "failed", attempts: 1, next_attempt_at: new Date(ms(T1) + 4_500).toISOString() })
    const last = Result.getOrThrow(decideAttempt(delivery({ status: "failed", attempts: Webhook.MAX_ATTEMPTS - 1 }), failed, facts)).delivery
    expect(last).toMatchObject({ status: "exhausted", attempts: Webhook.MAX_ATTEMPTS, next_attempt_at: null })
  })

  it("decisions.md: a delivery whose endpoint was deleted ends exhausted at once", () => {
    const gone = { status_code: null, error: "endpoint deleted", duration_ms: 0 }
    expect(Result.getOrThrow(decideAttempt(delivery(), gone, { ...facts, gone: true })).delivery.status).toBe("exhausted")
  })

  it("a delivery the claim never hands out (succeeded) is refused as an error value", () => {
    expect(Result.isFailure(decideAttempt(delivery({ status: "succeeded" }), failed, facts))).toBe(true)
  })
})

describe("redeliver (manual retry)", () => {
  it("contract.md: allowed on failed and exhausted (an exhausted one gets one more attempt), else webhook_delivery_not_retryable", () => {
    const failed = Result.getOrThrow(decideRetry(delivery({ status: "failed", attempts: 3, next_attempt_at: T0 }), T1))
    expect(failed).toMatchObject({ status: "pending", attempts: 3, next_attempt_at: T1 })
    const exhausted = Result.getOrThrow(decideRetry(delivery({ status: "exhausted", attempts: 8, next_attempt_at: null }), T1))
    expect(exhausted).toMatchObject({ status: "pending", attempts: Webhook.MAX_ATTEMPTS - 1, next_attempt_at: T1 })
    for (const status of ["pending", "succeeded"] as const) {
      const refused = decideRetry(delivery({ status }), T1)
      expect(Result.isFailure(refused) && refused.failure).toBeInstanceOf(WebhookDeliveryNotRetryable)
    }
  })

  it("decisions.md: one whose attempt holds its lease is 409 conflict; the wrong status is checked first", () => {
    const leased = { lease_token: "l", next_attempt_at: "2026-11-01T10:00:30.000Z" }
    const held = decideRetry(delivery({ status: "failed", ...leased }), T1)
    expect(Result.isFailure(held) && held.failure).toBeInstanceOf(Conflict)
    const pending = decideRetry(delivery(leased), T1)
    expect(Result.isFailure(pending) && pending.failure).toBeInstanceOf(WebhookDeliveryNotRetryable)
    // A lease that ran out holds nothing.
    expect(Result.isSuccess(decideRetry(delivery({ status: "failed", lease_token: "l", next_attempt_at: T0 }), T1))).toBe(true)
  })
})

describe("create endpoint (plan)", () => {
  const account = { id: "acct_1" } as Account
  const facts = { id: "we_new", url: "https://shop.example/hooks", at: T1 }

  it("contract.md: enabled_events defaults to [\"*\"]; the new endpoint is enabled", () => {
    expect(planEndpoint(account, { url: facts.url }, facts)).toEqual({
      id: "we_new",
      account_id: "acct_1",
      url: facts.url,
      enabled_events: ["*"],
      description: null,
      status: "enabled",
      created_at: T1,
      updated_at: T1,
      version: 1
    })
  })

  it("unknown event types, an empty list and a description over 500 characters are refused, naming the field", () => {
    const field = (input: Parameters<typeof planEndpoint>[1]) => {
      const planned = planEndpoint(account, input, facts)
      return planned instanceof ValidationFailed ? planned.errors?.[0]?.field : undefined
    }
    expect(field({ url: facts.url, enabled_events: ["payment.nope"] })).toBe("enabled_events")
    expect(field({ url: facts.url, enabled_events: [] })).toBe("enabled_events")
    expect(field({ url: facts.url, description: "x".repeat(501) })).toBe("description")
    expect(planEndpoint(account, { url: facts.url, enabled_events: ["refund.failed", "refund.failed"] }, facts)).toMatchObject({ enabled_events: ["refund.failed"] })
  })
})
