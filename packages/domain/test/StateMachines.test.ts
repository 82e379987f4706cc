/**
 * The transition tables held against the spec's own rows (States and transitions), and the docs
 * page held against the tables.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { AuthorizationMachine } from "../src/payments/Authorization.ts"
import { SessionMachine } from "../src/sessions/CheckoutSession.ts"
import { OrderMachine } from "../src/payments/Order.ts"
import { isFinal, type Machine, step } from "../src/kernel/StateMachine.ts"
import { render } from "../src/StateMachines.ts"
import { TransactionMachine } from "../src/payments/Transaction.ts"

const edges = <S extends string, T extends string>(machine: Machine<S, T>) =>
  new Set(machine.transitions.flatMap((t) => t.from.map((f) => `${f}→${t.to}`)))

describe("Checkout session (spec: States and transitions, Checkout session)", () => {
  it("final statuses: completed, failed, expired, canceled; a final status never changes", () => {
    expect([...SessionMachine.finals]).toEqual(["completed", "failed", "expired", "canceled"])
    for (const final of SessionMachine.finals) {
      for (const t of SessionMachine.transitions) expect(t.from).not.toContain(final)
    }
  })

  it.each([
    [["open"], "external_step", "pending_action"],
    [["pending_action"], "attempt_declined_retry", "open"],
    [["open", "pending_action"], "payment_succeeded", "completed"],
    [["open", "pending_action"], "last_attempt_declined", "failed"],
    [["open", "pending_action"], "expired", "expired"],
    [["open", "pending_action"], "canceled", "canceled"]
  ] as const)("spec row: %j on %s → %s", (froms, trigger, to) => {
    for (const from of froms) expect(step(SessionMachine, from, trigger)).toBe(to)
  })

  it("open and pending_action move between each other, and either to any final status — nothing else", () => {
    const allowed = new Set([
      "open→pending_action",
      "pending_action→open",
      ...["open", "pending_action"].flatMap((from) => ["completed", "failed", "expired", "canceled"].map((to) => `${from}→${to}`))
    ])
    expect(edges(SessionMachine)).toEqual(allowed)
  })
})

describe("Order (spec: States and transitions, Order)", () => {
  it("has the spec's statuses and finals", () => {
    expect([...OrderMachine.states].sort()).toEqual(
      ["pending", "processing", "requires_action", "authorized", "succeeded", "failed", "canceled", "returned"].sort()
    )
    expect([...OrderMachine.finals].sort()).toEqual(["canceled", "failed", "returned", "succeeded"])
  })

  it.each([
    // (attempt in progress) — declined attempt with retries remaining → pending
    [["pending", "processing", "requires_action"], "attempt_declined_retry", "pending"],
    // (manual-capture hold) — authorization succeeded → authorized
    [["pending", "processing", "requires_action"], "authorization_succeeded", "authorized"],
    // (under- or overpayment) — payment received with wrong amount → processing
    [["pending", "processing", "requires_action"], "underpaid", "processing"],
    [["pending", "processing", "requires_action"], "overpaid", "processing"],
    // processing (mismatch) — merchant declines and funds are sent back → returned
    [["processing"], "mismatch_returned", "returned"]
  ] as const)("spec row: %j on %s → %s", (froms, trigger, to) => {
    for (const from of froms) expect(step(OrderMachine, from, trigger)).toBe(to)
  })

  it("a final status never changes", () => {
    for (const final of OrderMachine.finals) {
      for (const t of OrderMachine.transitions) expect(t.from).not.toContain(final)
      expect(isFinal(OrderMachine, final)).toBe(true)
    }
  })

  it("authorized leaves only when the authorization closes", () => {
    expect(OrderMachine.transitions.filter((t) => t.from.includes("authorized")).map((t) => t.to).sort()).toEqual(["canceled", "succeeded"])
  })
})

describe("Transaction (spec: initial → pending or processing; then → completed, failed, canceled or returned)", () => {
  const inFlight = ["initial", "pending", "processing"]
  const finals = ["completed", "failed", "canceled", "returned"]
  const allowed = new Set([
    "initial→pending",
    "initial→processing",
    // contract.md: "A refund, payout or transfer transaction waiting at the provider (queued, settling
    // later) reads pending; processing only while a call is in flight" — the one move the spec's
    // list lacks (its "treat all three as in flight" leaves the order among them open).
    "processing→pending",
    ...inFlight.flatMap((from) => finals.map((to) => `${from}→${to}`))
  ])

  it("has the spec's statuses, finals, and no move outside the spec's and the contract's", () => {
    expect([...TransactionMachine.states]).toEqual([...inFlight, ...finals])
    expect([...TransactionMachine.finals]).toEqual(finals)
    for (const edge of edges(TransactionMachine)) expect(allowed).toContain(edge)
  })

  it("every allowed move is reachable, from each in-flight status", () => {
    expect(edges(TransactionMachine)).toEqual(allowed)
  })
})

describe("Manual-capture authorization (spec's table, row for row)", () => {
  it.each([
    ["partial_capture_settled", "authorized", "payment.partially_captured"],
    ["final_capture_settled", "completed", "payment.succeeded"],
    ["capture_reached_total", "completed", "payment.succeeded"],
    ["capture_refused", "authorized", "payment.capture_failed"],
    ["void_nothing_captured", "canceled", "payment.canceled"],
    ["void_behind_captures", "completed", "payment.succeeded"]
  ] as const)("authorized —%s→ %s, emits %s", (trigger, to, event) => {
    expect(step(AuthorizationMachine, "authorized", trigger)).toBe(to)
    expect(AuthorizationMachine.transitions.find((t) => t.trigger === trigger)?.emits).toEqual([event])
  })

  it("contract.md, Payment snapshots: a void (or a final capture that settled) while captures settle leaves it closing; the last capture's end closes it", () => {
    expect(step(AuthorizationMachine, "authorized", "void_while_settling")).toBe("closing")
    expect(step(AuthorizationMachine, "authorized", "final_capture_settled_while_settling")).toBe("closing")
    expect(step(AuthorizationMachine, "closing", "capture_settled")).toBe("closing")
    expect(step(AuthorizationMachine, "closing", "capture_refused")).toBe("closing")
    expect(step(AuthorizationMachine, "closing", "closed_behind_captures")).toBe("completed")
    expect(step(AuthorizationMachine, "closing", "closed_nothing_captured")).toBe("canceled")
    // nothing is emitted until it closes, then payment.succeeded or payment.canceled, once
    const emits = (from: string, trigger: string) => AuthorizationMachine.transitions.find((t) => t.trigger === trigger && t.from.includes(from as never))?.emits ?? []
    expect(emits("authorized", "void_while_settling")).toEqual([])
    expect(emits("closing", "capture_settled")).toEqual([])
    expect(emits("closing", "closed_behind_captures")).toEqual(["payment.succeeded"])
    expect(emits("closing", "closed_nothing_captured")).toEqual(["payment.canceled"])
    // closing takes no capture or void of its own
    expect(step(AuthorizationMachine, "closing", "void_nothing_captured")).toBeUndefined()
    expect(step(AuthorizationMachine, "closing", "partial_capture_settled")).toBeUndefined()
  })

  it("canceled — void (repeated) has no row: the use case answers 409 payment_unexpected_state", () => {
    expect(step(AuthorizationMachine, "canceled", "void_nothing_captured")).toBeUndefined()
    expect(step(AuthorizationMachine, "canceled", "void_behind_captures")).toBeUndefined()
    expect(step(AuthorizationMachine, "completed", "final_capture_settled")).toBeUndefined()
  })
})

it("docs/state-machines.md is rendered from these tables (npm run docs:state-machines)", () => {
  const page = readFileSync(new URL("../../../docs/state-machines.md", import.meta.url), "utf8")
  expect(page).toBe(render())
})
