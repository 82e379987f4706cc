/**
 * Transaction.latestAttempt: an order's latest payment attempt among its transactions as listed
 * (created_at, id). A smart retry's second try may be created in the first try's millisecond and
 * sort before it by id (review of issue 27, #8): the higher routing attempt is then the later.
 */
import { describe, expect, it } from "vitest"
import { latestAttempt } from "../src/payments/Transaction.ts"
import type { Routing } from "../src/channels/RoutingModel.ts"
import type { TransactionId } from "../src/kernel/Ids.ts"
import { T0, T1, txn } from "./Fixtures.ts"

const routing = (attempt: number): Routing => ({ rule: null, version: 0, candidates: ["ch_a", "ch_b"], channel: "ch_a", reason: attempt === 1 ? "default" : "retry", attempt })

describe("latestAttempt", () => {
  it("a retry created in the same millisecond as the first try is the latest, even listed before it", () => {
    const first = txn({ id: "txn_b" as TransactionId, created_at: T0, routing: routing(1) })
    const retry = txn({ id: "txn_a" as TransactionId, created_at: T0, routing: routing(2) })
    expect(latestAttempt([retry, first])?.id).toBe("txn_a")
    expect(latestAttempt([first, retry])?.id).toBe("txn_a")
  })

  it("otherwise the newest, then the later listed; follow-ups (captures, refunds) are not attempts", () => {
    const older = txn({ id: "txn_1" as TransactionId, created_at: T0 })
    const newer = txn({ id: "txn_2" as TransactionId, created_at: T1 })
    const capture = txn({ id: "txn_3" as TransactionId, created_at: T1, kind: "capture" })
    expect(latestAttempt([older, newer, capture])?.id).toBe("txn_2")
    expect(latestAttempt([older, txn({ id: "txn_0" as TransactionId, created_at: T0 })])?.id).toBe("txn_0")
    expect(latestAttempt([capture])).toBeUndefined()
  })
})
