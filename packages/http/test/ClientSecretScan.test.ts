/**
 * Client secrets at rest (issue 21; contract.md, Secrets at rest: "Client secrets are never stored in
 * clear: hashed where they are only checked, sealed under the vault key where a read must show them
 * again; webhook event payloads carry none"). Every flow that mints one runs over real HTTP on
 * embedded PostgreSQL with webhooks delivered to a local receiver — a card form of a direct payment
 * (collect_card, then paid through the SDK's routes), a saved card's CVC form (collect_cvv), a card
 * transfer, a hosted checkout session's card attempt — then the database's dump (support/ScanRig.ts)
 * is searched for each secret (whole, and its random part alone), as are the webhook bodies. The
 * reads that show a secret again still show it, and the secrets still work.
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { Payments } from "@tender/domain"
import { Option } from "effect"
import { send } from "@tender/client/Testing"
import { sdkCall } from "./support/Browser.ts"
import { scanRig } from "./support/ScanRig.ts"

const rig = scanRig("secret scan")
const { database, webhookBodies } = rig
let seq = 0
const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
const post = (path: string, body: unknown) => send(rig.server(), rig.merchant(), "POST", path, { body: JSON.stringify(body) })
const get = (path: string) => send(rig.server(), rig.merchant(), "GET", path)
const client = (path: string, body: unknown) => sdkCall(rig.server(), rig.merchant().publishable_key, path, body)
const urls = { success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" }
const card = { exp_month: 12, exp_year: 2035, cvc: "123" }

const tokenize = async (number = "4242424242424242") => (await post("/v1/test_helpers/card_tokens", { number, ...card })).json.token as string

/** Where a secret shows in clear: whole, or its random part (`…_secret_<hex>`) alone. */
const findingsOf = (source: string, text: string, secrets: ReadonlyArray<string>) =>
  secrets.flatMap((secret) => {
    const random = secret.slice(secret.lastIndexOf("_") + 1)
    return [secret, random].filter((form) => text.includes(form)).map((form) => `${source}: ${form}`)
  })

describe("contract.md, Secrets at rest: no client secret in clear in any table or webhook", () => {
  it("after every flow that mints one; the reads that must show one again still do, and it still works", async () => {
    const secrets: Array<string> = []
    const keep = (secret: unknown) => {
      expect(secret).toMatch(/^ord_\w+_secret_[0-9a-f]{32}$/)
      secrets.push(secret as string)
      return secret as string
    }

    // A direct payment's card form (collect_card), paid through the SDK's routes with its secret.
    const collect = await post("/v1/payments", { amount: "25.00", currency: "USD", country: "US", merchant_reference: ref("collect"), payment_method: { code: "card" }, ...urls })
    expect(collect.json.next_action.type).toBe("collect_card")
    const collectSecret = keep(collect.json.next_action.client_secret)
    const minted = await client("/v1/client/card_tokens", { client_secret: collectSecret, number: "4242424242424242", ...card })
    expect(minted.status, minted.text).toBe(201)
    expect((await client("/v1/client/pay", { client_secret: collectSecret, token: minted.json.token })).json.status).toBe("succeeded")

    // One left waiting: its attempt, read back from storage (as the snapshot and the hosted pages read it), shows the action again.
    const waiting = await post("/v1/payments", { amount: "26.00", currency: "USD", country: "US", merchant_reference: ref("waiting"), payment_method: { code: "card" }, ...urls })
    const waitingSecret = keep(waiting.json.next_action.client_secret)
    const attemptOf = await rig.server().run(Payments.use((p) => p.hostedAttempt(waiting.json.transaction_id)))
    expect(Option.getOrThrow(attemptOf).transaction.next_action?.client_secret).toBe(waitingSecret)
    expect((await client("/v1/client/session", { client_secret: waitingSecret })).status).toBe(200)

    // A saved card's CVC form (collect_cvv).
    const saved = await post("/v1/payments", { amount: "27.00", currency: "USD", country: "US", merchant_reference: ref("cvv"), payment_method: { code: "card", details: { card_token: await tokenize() } }, ...urls })
    expect(saved.json.next_action.type).toBe("collect_cvv")
    keep(saved.json.next_action.client_secret)

    // A card transfer: its GET shows the secret again while the card awaits collection.
    const transfer = await post("/v1/transfers", { amount: "30.00", currency: "USD", country: "US", merchant_reference: ref("tr"), payment_method: { code: "card", details: { card_token: await tokenize() } } })
    expect(transfer.status, transfer.text).toBe(201)
    const transferSecret = keep(transfer.json.next_action.client_secret)
    expect((await get(`/v1/transfers/${transfer.json.id}`)).json.next_action.client_secret).toBe(transferSecret)

    // A hosted session's card attempt, started by the page's card glue: the session's read shows its step's secret again.
    const session = await post("/v1/checkout/sessions", { amount: "31.00", currency: "USD", country: "US", merchant_reference: ref("cs"), payment_methods: ["card"], ...urls })
    const started = await fetch(`${session.json.url}/card`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(rig.server().baseUrl).origin },
      body: "email=ana%40example.com"
    })
    const sessionSecret = keep((await started.json()).client_secret)
    const pending = (await get(`/v1/checkout/sessions/${session.json.id}`)).json
    expect(pending).toMatchObject({ status: "pending_action", next_action: { type: "collect_card", client_secret: sessionSecret } })

    // Webhooks delivered (payment.requires_action carries the action, without its secret).
    await rig.webhooksSettled()
    const requiresAction = webhookBodies.map((b) => JSON.parse(b)).filter((e) => e.type === "payment.requires_action")
    expect(requiresAction.length).toBeGreaterThanOrEqual(3)
    for (const event of requiresAction) {
      expect(event.data.next_action).toMatchObject({ type: expect.stringMatching(/^collect_(card|cvv)$/), expires_at: expect.any(String) })
      expect(event.data.next_action).not.toHaveProperty("client_secret")
    }

    const dump = (await rig.dumpDatabase()).text
    // The scan looks where the secrets were: the card forms' rows are there, sealed, and the hashes.
    expect(dump).toContain("sealed.v1.")
    for (const secret of secrets) expect(dump).toContain(createHash("sha256").update(secret).digest("hex"))
    expect([
      ...findingsOf("database", dump, secrets),
      ...webhookBodies.flatMap((body, i) => findingsOf(`webhook #${i}`, body, secrets))
    ]).toEqual([])
  }, 300_000)

  it("the same scan finds a secret stored in clear (so a clean scan means something)", async () => {
    const waiting = await post("/v1/payments", { amount: "28.00", currency: "USD", country: "US", merchant_reference: ref("planted"), payment_method: { code: "card" }, ...urls })
    const secret = waiting.json.next_action.client_secret as string
    const db = database()
    try {
      await db.query(`UPDATE transactions SET next_action = jsonb_set(next_action, '{client_secret}', to_jsonb($1::text)) WHERE order_id = $2`, [secret, waiting.json.order_id])
    } finally {
      await db.end()
    }
    expect(findingsOf("database", (await rig.dumpDatabase()).text, [secret]).length).toBeGreaterThan(0)
  }, 120_000)
})
