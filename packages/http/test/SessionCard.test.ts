/**
 * The hosted checkout's card attempt at the use cases, under a test clock: the session's card
 * attempt waits for the card element (collect_card, a client secret naming the session's order),
 * tender.js's routes pay it (ClientSecrets: card token, pay), a 3-D Secure challenge becomes the
 * session's step, and an attempt nobody paid closes with its secret's 15 minutes so the customer may
 * try again. The page and the browser: CheckoutPage.test.ts, CheckoutBrowser.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { Accounts, CheckoutSessionRepo, ClientSecrets, EventRepo, OrderRepo, Payments, Sessions, UseCases } from "@tender/domain"
import { Infrastructure } from "@tender/adapters"

const TestLayer = UseCases.layer.pipe(Layer.provideMerge(Infrastructure.layer({ storage: "memory", dataDir: ".tender-test" })))

const setup = (reference: string) =>
  Effect.gen(function*() {
    // Today: card expiry dates are checked against the clock.
    yield* TestClock.setTime(Date.now())
    const accounts = yield* Accounts
    const created = yield* accounts.create({ name: "card", mode: "test" })
    const account = yield* accounts.get(created.account_id)
    const sessions = yield* Sessions
    const session = yield* sessions.create(account, {
      amount: "10.00",
      currency: "USD",
      merchant_reference: reference,
      success_url: "https://s.example/ok",
      cancel_url: "https://s.example/no",
      payment_methods: ["card", "paypal"],
      max_payment_attempts: 2
    })
    return { account, sessions, session, key: created.publishable_key }
  })

/** What the hosted page's card form sends: the customer fields, no card. */
const startCard = { payment_method: { code: "card", details: { collect_card: true } }, customer: { email: "ana@example.com" } }

/** What tender.js does with the secret: the fields frame's card token, then pay. */
const payWith = (key: string, secret: string, number: string) =>
  Effect.gen(function*() {
    const secrets = yield* ClientSecrets
    const grant = yield* secrets.authorize(key, secret)
    const card = yield* secrets.cardToken(grant, { number, exp_month: 12, exp_year: 2034, cvc: "123" })
    return yield* secrets.pay(grant, card.token)
  })

const secretOf = (view: { readonly session: { readonly next_action: { readonly type: string; readonly client_secret?: string } | null } }) => {
  const action = view.session.next_action
  expect(action?.type).toBe("collect_card")
  return action!.client_secret!
}

describe("the session's card attempt (hosted page, card element)", () => {
  it.effect("waits for the card as pending_action(collect_card), counted; tender.js pays it and the session completes", () =>
    Effect.gen(function*() {
      const { key, session, sessions } = yield* setup("card-1")
      const waiting = yield* sessions.submit(session.id, startCard)
      expect(waiting.session.status).toBe("pending_action")
      expect(waiting.session.attempts).toBe(1)
      expect(waiting.attempts_left).toBe(1)
      const secret = secretOf(waiting)
      // The secret names the session's order, as a direct payment's collect_card names its payment.
      expect(secret.startsWith(`${session.order_id}_secret_`)).toBe(true)
      const order = Option.getOrThrow(yield* (yield* OrderRepo).findAny(session.order_id))
      expect(order).toMatchObject({ status: "requires_action", payment_method: "card", customer: { email: "ana@example.com" } })
      // The page shows the account's key and display mode for the element.
      expect(waiting.publishable_key).toBe(key)
      expect(waiting.three_ds_display_mode).toBe("inline")

      expect(yield* payWith(key, secret, "4242424242424242")).toMatchObject({ status: "succeeded", payment_id: session.order_id })
      const done = Option.getOrThrow(yield* sessions.hostedView(session.id))
      expect(done.session.status).toBe("completed")
      expect(done.session.attempts).toBe(1)
      const events = (yield* (yield* EventRepo).listByOrder(session.order_id)).map((e) => e.type)
      expect(events).toEqual(["payment.requires_action", "payment.succeeded", "checkout.session.completed"])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a decline opens the session again for a retry with a fresh secret; the last one fails it", () =>
    Effect.gen(function*() {
      const { key, session, sessions } = yield* setup("card-2")
      const first = secretOf(yield* sessions.submit(session.id, startCard))
      expect(yield* payWith(key, first, "4000000000000002")).toMatchObject({ status: "failed", decline_code: "card_declined" })
      const declined = Option.getOrThrow(yield* sessions.hostedView(session.id))
      expect(declined).toMatchObject({ session: { status: "open", next_action: null }, attempts_left: 1, last_decline: "card_declined" })
      // The first secret paid once: it cannot pay the retry.
      expect((yield* Effect.flip(payWith(key, first, "4242424242424242"))).code).toBe("card_payment_invalid_order_state")

      // The customer retries a moment later: attempts are ordered by their creation time (ties by
      // id), and the test clock stands still unless moved.
      yield* TestClock.adjust("5 seconds")
      const second = secretOf(yield* sessions.submit(session.id, startCard))
      expect(second).not.toBe(first)
      expect(yield* payWith(key, second, "4000000000000002")).toMatchObject({ status: "failed" })
      expect(Option.getOrThrow(yield* sessions.hostedView(session.id)).session.status).toBe("failed")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a 3-D Secure challenge becomes the session's step; the customer's answer completes it, the page only reads", () =>
    Effect.gen(function*() {
      const { key, session, sessions } = yield* setup("card-3")
      const secret = secretOf(yield* sessions.submit(session.id, startCard))
      const paid = yield* payWith(key, secret, "4000000000003220")
      expect(paid).toMatchObject({ status: "requires_action", display_mode: "inline" })
      const challenged = Option.getOrThrow(yield* sessions.hostedView(session.id))
      expect(challenged.session).toMatchObject({ status: "pending_action", next_action: { type: "redirect", redirect_url: paid.challenge_url } })
      const payments = yield* Payments
      const transactionId = paid.challenge_url!.split("/").pop()!
      // Was: the answer was recorded and the page's next read (a GET) authorized. contract.md, Browser
      // SDK: the answer completes the payment; reading a page never authorizes.
      expect((yield* payments.answerChallenge(transactionId, true)).return_url).toBe(session.url)
      expect(Option.getOrThrow(yield* (yield* CheckoutSessionRepo).findAny(session.id)).status).toBe("completed")
      expect(Option.getOrThrow(yield* sessions.hostedView(session.id)).session.status).toBe("completed")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("an attempt nobody paid closes with its secret's 15 minutes: the session is open again, an attempt spent", () =>
    Effect.gen(function*() {
      const { key, session, sessions } = yield* setup("card-4")
      const secret = secretOf(yield* sessions.submit(session.id, startCard))
      const payments = yield* Payments
      yield* TestClock.adjust("14 minutes")
      expect(yield* payments.expireWindows()).toBe(0)
      yield* TestClock.adjust("2 minutes")
      expect(yield* payments.expireWindows()).toBe(1)
      const reopened = Option.getOrThrow(yield* sessions.hostedView(session.id))
      expect(reopened).toMatchObject({ session: { status: "open", attempts: 1 }, attempts_left: 1 })
      expect(Option.getOrThrow(yield* (yield* OrderRepo).findAny(session.order_id)).status).toBe("pending")
      expect((yield* Effect.flip(payWith(key, secret, "4242424242424242"))).code).toBe("CLIENT_SECRET_EXPIRED")
      // Another method is free to go now.
      const paypal = yield* sessions.submit(session.id, { payment_method: { code: "paypal" } })
      expect(paypal.session).toMatchObject({ status: "pending_action", next_action: { type: "redirect" } })
    }).pipe(Effect.provide(TestLayer)))
})
