/**
 * Two Adyen providers over one PostgreSQL journal stand for two Tender processes (or one process
 * before and after a restart): what A sent, fenced, was told by a notification or handed by the
 * shopper's return is what B reads. Each case also runs B's twin over a journal of its own (what a
 * process knew before the journal was shared), which must fall short: the journal is what answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type CardDetails } from "@tender/domain"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as AdyenFake from "../src/providers/adyen/AdyenFake.ts"
import type { AdyenProvider } from "../src/providers/adyen/AdyenProvider.ts"
import { approved, failureOf, run, scenarios } from "../src/providers/fake/ProviderScenarios.ts"
import { ProviderJournal } from "../src/providers/shared/ProviderJournal.ts"
import * as ProviderJournalPg from "../src/providers/shared/ProviderJournalPg.ts"
import * as PgDatabase from "../src/storage/postgres/PgDatabase.ts"
import { answerChallenge, connect, observeNotifications } from "./AdyenTestKit.ts"
import { sharedConfig } from "./PgTestDatabase.ts"

const HMAC_KEY = "5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a0b6f0c2a5d1e4f8a9b3c7d2e1f0a4b"

const database = ManagedRuntime.make(ProviderJournalPg.layer.pipe(Layer.provide(Layer.unwrap(Effect.map(sharedConfig, PgDatabase.layer)))))
let fake: AdyenFake.AdyenFake
let journal: ProviderJournal["Service"]
/** One channel scope per run: the database outlives it. */
const scope = `AcmeECOM/chan_${Date.now().toString(36)}`

/** A process: its own client and provider; the shared journal unless `own` asks for a journal of its own. */
const processOn = (own = false): AdyenProvider => connect(fake, own ? {} : { journal, journalScope: scope })

let a: AdyenProvider

beforeAll(async () => {
  fake = await AdyenFake.start()
  journal = await database.runPromise(Effect.service(ProviderJournal))
  a = processOn()
}, 120_000)
afterAll(async () => {
  await fake.close()
  await database.dispose()
})

const card = (number: string): CardDetails => ({ number, exp_month: 3, exp_year: 2030, cvc: "737" })
const paymentsOf = (reference: string) => fake.payments().filter((payment) => payment.merchantReference === reference)
const { authorize, capture, newReference } = scenarios({
  provider: () => a,
  card,
  held: (reference) => paymentsOf(reference).map((payment) => payment.pspReference)
})

describe("Adyen providers sharing the PostgreSQL journal", () => {
  it("A's answers lost after Adyen applied them: B's lookup finds the authorization (its capture mode) and the capture, never a second charge", async () => {
    const reference = newReference()
    fake.fault("payments", "applyThenDrop")
    expect((await run(authorize("4111111111111111", { reference })))._tag).toBe("Unknown")
    const [payment] = paymentsOf(reference)
    const b = processOn()
    // Only the journal knows A asked for a manual, multicapture authorization; the answer does not say.
    expect(await run(b.lookup(`${reference}:authorize`))).toEqual({ _tag: "Authorize", result: { _tag: "Approved", provider_transaction_id: payment!.pspReference, multicapture: true } })
    expect(await run(processOn(true).lookup(`${reference}:authorize`))).toMatchObject({ result: { multicapture: false } })

    fake.fault("captures", "applyThenDrop")
    const lost = capture(payment!.pspReference, 400, false)
    expect((await run(lost.answer))._tag).toBe("Unknown")
    const [made] = fake.modifications().filter((m) => m.paymentPspReference === payment!.pspReference && m.kind === "capture")
    expect(await run(b.lookup(lost.key))).toEqual({ _tag: "Capture", result: { _tag: "Settling", provider_transaction_id: `${payment!.pspReference}/${made!.pspReference}` } })
    // A process without the journal cannot tell a capture from a refund: ask again later.
    expect((await failureOf(processOn(true).lookup(lost.key)))._tag).toBe("ProviderUnavailable")
    expect(paymentsOf(reference)).toHaveLength(1)
    expect(paymentsOf(reference)[0]?.captured).toBe(400)
  })

  it("a key B's lookup fenced is refused by A before anything is sent, and A's own lookup answers NotReceived without Adyen", async () => {
    const reference = newReference()
    const key = `${reference}:authorize`
    const b = processOn()
    expect(await run(b.lookup(key))).toEqual({ _tag: "NotReceived" })
    // With Adyen unreachable, only the shared journal can answer.
    await fake.refuse()
    try {
      const late = await failureOf(authorize("4111111111111111", { reference }))
      expect(late.message).toContain("a lookup fenced this idempotency key")
      expect(await run(a.lookup(key))).toEqual({ _tag: "NotReceived" })
      // A process with a journal of its own has to ask Adyen, which does not answer.
      expect((await failureOf(processOn(true).lookup(key))).message).toContain("ECONNREFUSED")
    } finally {
      await fake.accept()
    }
    expect(paymentsOf(reference)).toEqual([])
  })

  it("a CAPTURE notification observed by A settles the capture for B's settlement()", async () => {
    const auth = approved(await run(authorize("4111111111111111")))
    const captured = await run(capture(auth.provider_transaction_id, 1000, true).answer)
    if (captured._tag !== "Settling") throw new Error(JSON.stringify(captured))
    const b = processOn()
    expect(await run(b.settlement(captured.provider_transaction_id))).toBe("pending")
    await observeNotifications(fake, a, auth.provider_transaction_id, HMAC_KEY)
    expect(await run(b.settlement(captured.provider_transaction_id))).toBe("settled")
    expect(await run(processOn(true).settlement(captured.provider_transaction_id))).toBe("pending")
  })

  it("the redirectResult the shopper brought back to A lets B complete the 3-D Secure authorization", async () => {
    const reference = newReference()
    const challenge = await run(authorize(AdyenFake.CHALLENGE_CARD, { reference }))
    if (challenge._tag !== "ChallengeRequired") throw new Error(JSON.stringify(challenge))
    await run(a.challengeReturned(await answerChallenge(challenge.challenge_url, fake.caCertificate, "approve")))
    const round = { reference, key: `${reference}:authorize:2`, authenticated: true }
    // A process without the journal never saw the return: it sends nothing.
    expect((await failureOf(authorize(AdyenFake.CHALLENGE_CARD, { ...round, via: processOn(true) })))._tag).toBe("ProviderUnavailable")
    const after = await run(authorize(AdyenFake.CHALLENGE_CARD, { ...round, via: processOn() }))
    expect(after).toEqual({ _tag: "Approved", provider_transaction_id: challenge.provider_transaction_id, multicapture: true })
    expect(paymentsOf(reference)).toHaveLength(1)
  })

  it("channels are apart: another scope on the same journal sees none of this channel's entries", async () => {
    const reference = newReference()
    expect(await run(processOn().lookup(`${reference}:authorize`))).toEqual({ _tag: "NotReceived" })
    const other = connect(fake, { journal, journalScope: `${scope}-other` })
    await fake.refuse()
    try {
      // Not fenced in its scope: it asks Adyen (refused) instead of answering from the journal.
      expect((await failureOf(other.lookup(`${reference}:authorize`))).message).toContain("ECONNREFUSED")
    } finally {
      await fake.accept()
    }
  })
})
