/**
 * The aggregates' pure transition functions: the one place a status changes, the events taken from
 * the table's `emits` column, and no status assigned anywhere else in the domain.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { Option, Result } from "effect"
import { describe, expect, it } from "vitest"
import * as Authorization from "../src/payments/Authorization.ts"
import * as Session from "../src/sessions/CheckoutSession.ts"
import * as OrderAggregate from "../src/payments/Order.ts"
import { decide } from "../src/payments/operations/RecordAttempt.ts"
import { MACHINES } from "../src/StateMachines.ts"
import { order, session, T0, T1, txn } from "./Fixtures.ts"

describe("transition", () => {
  it("moves through the table, bumps the version, and returns exactly the events of the rows taken", () => {
    const moved = Result.getOrThrow(OrderAggregate.transition(order(), ["attempt_sent", "payment_settled"], T1))
    expect(moved.next).toMatchObject({ status: "succeeded", version: 2, updated_at: T1 })
    expect(moved.events).toEqual(["payment.succeeded"])
  })

  it("a move the table lacks is an error value naming the move, and changes nothing", () => {
    const done = order({ status: "succeeded" })
    const refused = OrderAggregate.transition(done, "payment_settled", T1)
    expect(Result.isFailure(refused)).toBe(true)
    if (Result.isFailure(refused)) expect(refused.failure.code).toBe("invalid_order_status_transition")
    expect(done.status).toBe("succeeded")
  })

  it("spec, Events: payment.failed is \"final, no retry on the same payment\": a retryable decline emits none", () => {
    expect(Result.getOrThrow(OrderAggregate.transition(order(), "attempt_declined_retry", T1)).events).toEqual([])
    expect(Result.getOrThrow(OrderAggregate.transition(order(), "attempt_declined_final", T1)).events).toEqual(["payment.failed"])
  })

  it("spec, Events: payment.requires_action \"never for merchant-initiated card charges\"", () => {
    expect(Result.getOrThrow(OrderAggregate.transition(order(), "merchant_action_required", T1)).events).toEqual([])
    expect(Result.getOrThrow(OrderAggregate.transition(order(), "action_required", T1)).events).toEqual(["payment.requires_action"])
  })

  it("the authorization's rows emit its events", () => {
    expect(Result.getOrThrow(Authorization.transition("authorized", "void_nothing_captured"))).toEqual({ status: "canceled", events: ["payment.canceled"] })
    expect(Result.isFailure(Authorization.transition("canceled", "void_nothing_captured"))).toBe(true)
  })

  it("a session's final status never changes", () => {
    const done = session({ status: "completed" })
    expect(Result.isFailure(Session.transition(done, "canceled", T1))).toBe(true)
    expect(Session.follow(done, { _tag: "Declined" }, T1)).toBeUndefined()
  })
})

describe("decide (the record step of an attempt, pure)", () => {
  it("a declined session attempt with attempts left: transaction failed, order pending, no payment.failed, session open", () => {
    const d = Result.getOrThrow(decide(order({ subtype: "checkout", status: "processing" }), txn({ status: "processing" }), Option.some(session({ attempts: 1 })), {
      _tag: "Declined",
      decline_code: "card_declined",
      provider_transaction_id: null
    }, T1))
    expect(d.txn?.status).toBe("failed")
    expect(d.order?.next.status).toBe("pending")
    expect(d.order?.events).toEqual([])
    expect(d.session).toBeUndefined()
  })

  it("the last permitted attempt declined: payment.failed once, the session failed", () => {
    const d = Result.getOrThrow(decide(order({ subtype: "checkout", status: "processing" }), txn({ status: "processing" }), Option.some(session({ attempts: 3 })), {
      _tag: "Declined",
      decline_code: "card_declined",
      provider_transaction_id: null
    }, T1))
    expect(d.order?.events).toEqual(["payment.failed"])
    expect(d.session?.next.status).toBe("failed")
    expect(d.session?.events).toEqual(["checkout.session.failed"])
  })

  it("an approval clears the pending call and keeps the provider's reference", () => {
    const pending = txn({ status: "processing", pending_call: { key: "txn_1:authorize", operation: "authorize", at: T0 } })
    const d = Result.getOrThrow(decide(order({ status: "processing" }), pending, Option.none(), {
      _tag: "Approved",
      provider_transaction_id: "pay_1",
      multicapture: false
    }, T1))
    expect(d.txn).toMatchObject({ status: "completed", pending_call: null, provider_transaction_id: "pay_1" })
    expect(d.order?.events).toEqual(["payment.succeeded"])
  })

  it("an expired window on a direct payment: transaction canceled (never sent through processing), order canceled, payment.failed", () => {
    const d = Result.getOrThrow(decide(order({ status: "requires_action" }), txn({ status: "initial", expires_at: T0 }), Option.none(), { _tag: "Closed", how: "expired" }, T1))
    expect(d.txn).toMatchObject({ status: "canceled", decline_code: "expired", version: 2 })
    expect(d.order?.next.status).toBe("canceled")
    expect(d.order?.events).toEqual(["payment.failed"])
  })

  it("a final transaction refuses another outcome (an error value, not a throw)", () => {
    const r = decide(order({ status: "succeeded" }), txn({ status: "completed" }), Option.none(), { _tag: "Closed", how: "expired" }, T1)
    expect(Result.isFailure(r)).toBe(true)
  })
})

const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : []
  })

const root = new URL("../src", import.meta.url).pathname
const relative = (path: string) => path.slice(root.length + 1)

/** The modules that define a machine (`define(` a table): the only ones that may name a status in a record literal. */
const MACHINE_MODULES = sources(root).filter((path) => /=\s*define[<(]/.test(readFileSync(path, "utf8")))
const TRANSITION_MODULES = new Set(["kernel/StateMachine.ts", ...MACHINE_MODULES.map(relative)])

/** `status: "<a status word of any machine>"` in an object literal: every machine's words, from the registry. */
const STATUS_LITERAL = new RegExp(`(?<!readonly )status:\\s*["'](${[...new Set(MACHINES.flatMap((m) => m.states))].join("|")})["']`)

it("every machine the domain defines is in the registry (src/StateMachines.ts), so its words are checked and documented", async () => {
  const defined = (await Promise.all(MACHINE_MODULES.map((path) => import(path)))).flatMap((module: Record<string, unknown>) =>
    Object.entries(module).filter(([, value]) =>
      typeof value === "object" && value !== null && "states" in value && "transitions" in value && "finals" in value))
  expect(defined.length).toBeGreaterThanOrEqual(12)
  expect(defined.filter(([, machine]) => !(MACHINES as ReadonlyArray<unknown>).includes(machine)).map(([name]) => name)).toEqual([])
})

it("nothing in the domain assigns a status outside the aggregates' transition modules", () => {
  const offenders = sources(root)
    .filter((path) => !TRANSITION_MODULES.has(relative(path)))
    .flatMap((path) =>
      readFileSync(path, "utf8").split("\n").flatMap((line, i) =>
        // an assignment (`x.status = …`) or a record literal given one of the aggregates' statuses
        (/\.status\s*=[^=]/.test(line) || STATUS_LITERAL.test(line)) && !/^\s*(\/\/|\*)/.test(line)
          ? [`${relative(path)}:${i + 1}: ${line.trim()}`]
          : []))
  expect(offenders).toEqual([])
})
