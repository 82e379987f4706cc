/**
 * The Sessions use case: hosted checkout sessions. A session owns its order (subtype `checkout`) and
 * the customer's attempts under it (Payments.attemptSession) until it completes, fails, expires or is
 * canceled. Expiry is applied whenever a session is touched (API, hosted page) and by the sweeper.
 */
import { isoOf } from "../kernel/Time.ts"
import { Clock, Context, Effect, Layer, Option, Result } from "effect"
import type { Account, ThreeDsDisplayMode } from "../accounts/Account.ts"
import { activeProfile } from "../accounts/Account.ts"
import { CardTokens } from "../cards/CardTokens.ts"
import type { CardInput } from "../cards/CardRequest.ts"
import * as Session from "./CheckoutSession.ts"
import { isCountry } from "../kernel/Countries.ts"
import {
  CardPaymentInProgress,
  CheckoutSessionNotFound,
  CountryNotAvailable,
  type DomainError,
  type FieldError,
  invalidField,
  InvalidSessionState,
  MerchantReferenceRequired,
  UnknownPaymentMethod,
  ValidationFailed
} from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import * as Money from "../kernel/Money.ts"
import * as OrderAggregate from "../payments/Order.ts"
import type { Order, Transaction } from "../payments/Payment.ts"
import { OrderRepo, TransactionRepo } from "../payments/PaymentPorts.ts"
import { PaymentProvider } from "../payments/ProviderPorts.ts"
import { findMethod, homeCountry, type PaymentMethod, PAYMENT_METHODS, routable } from "../payments/PaymentMethods.ts"
import { MAX_REFERENCE } from "../kernel/Limits.ts"
import { checkMoney, EMAIL, urlProblem } from "../payments/RequestChecks.ts"
import { MAX_NAME } from "../kernel/Limits.ts"
import { Payments, type SessionAttemptInput } from "../payments/Payments.ts"
import { refuseUnroutable } from "../payments/operations/Route.ts"
import { refuseReferenceOfOrders } from "../payments/operations/Target.ts"
import { ChannelRepo } from "../channels/ChannelPorts.ts"
import * as Search from "../kernel/Search.ts"
import type { SearchInput, SearchResult } from "../kernel/Search.ts"
import { AccountRepo } from "../accounts/AccountPorts.ts"
import { Locks, UnitOfWork } from "../kernel/Ports.ts"
import { CheckoutSessionRepo, PublicUrl } from "./SessionPorts.ts"
import * as Txn from "../payments/Transaction.ts"
import { isInFlight } from "../payments/Transaction.ts"
import { callInFlight, latestAttempt } from "../payments/Transaction.ts"
import { guarded, lockOrder } from "../payments/operations/Load.ts"
import { decided, saveOrder, saveSession, saveTxn, unitOfWork } from "../payments/operations/Persist.ts"
import { revise } from "../kernel/StateMachine.ts"
import { Outbox } from "../webhooks/Webhooks.ts"
import type { AccountId } from "../kernel/Ids.ts"

export interface CreateSessionInput {
  readonly amount?: string | undefined
  readonly currency?: string | undefined
  readonly country?: string | undefined
  readonly merchant_reference?: string | undefined
  readonly success_url?: string | undefined
  readonly cancel_url?: string | undefined
  readonly capture_method?: string | undefined
  readonly customer?: { readonly email?: string | undefined; readonly name?: string | undefined } | undefined
  readonly payment_methods?: ReadonlyArray<string> | undefined
  readonly straight_through?: boolean | undefined
  readonly max_payment_attempts?: number | undefined
  readonly expires_at?: string | undefined
  readonly locale?: string | undefined
  readonly line_items?: ReadonlyArray<{ readonly name: string; readonly quantity: number; readonly unit_amount: string }> | undefined
  readonly collect_address?: boolean | undefined
  readonly collect_phone?: boolean | undefined
  readonly processing_profile?: string | undefined
}

/** What the hosted page needs to render a session. */
export interface HostedView {
  readonly session: Session.CheckoutSession
  readonly merchant_name: string
  readonly methods: ReadonlyArray<PaymentMethod>
  readonly attempts_left: number
  readonly last_decline: string | null
  /** The card element on the page is the account's: its publishable key and 3-D Secure display mode. */
  readonly publishable_key: string
  readonly three_ds_display_mode: ThreeDsDisplayMode
}

export interface SubmitInput {
  readonly payment_method: {
    readonly code: string
    readonly details?: {
      readonly card?: CardInput | undefined
      readonly card_token?: string | undefined
      readonly document_id?: string | undefined
      /** No card yet: the attempt waits for the hosted page's card element (SessionAttemptInput). */
      readonly collect_card?: boolean | undefined
    } | undefined
  }
  readonly customer?: SessionAttemptInput["customer"]
}

export class Sessions extends Context.Service<Sessions, {
  create(account: Account, input: CreateSessionInput): Effect.Effect<Session.SessionView, DomainError>
  get(account: Account, id: string): Effect.Effect<Session.SessionView, CheckoutSessionNotFound>
  byReference(account: Account, reference: string): Effect.Effect<Session.SessionView, CheckoutSessionNotFound>
  search(account: Account, input: SearchInput): Effect.Effect<SearchResult<Session.SessionView>, ValidationFailed>
  cancel(account: Account, id: string): Effect.Effect<Session.SessionView, CheckoutSessionNotFound | InvalidSessionState | CardPaymentInProgress>
  /** The test helper: acts as the customer submitting the hosted form. */
  attempt(account: Account, id: string, input: SubmitInput): Effect.Effect<Session.SessionView, DomainError>
  /** The sweeper: expires overdue sessions (and emits their events); returns how many. */
  expireOverdue(): Effect.Effect<number>
  /** Operator access (CLI), any account. */
  operator: {
    get(id: string): Effect.Effect<Session.SessionView, CheckoutSessionNotFound>
    cancel(id: string): Effect.Effect<Session.SessionView, CheckoutSessionNotFound | InvalidSessionState | CardPaymentInProgress>
  }
  hostedView(id: string): Effect.Effect<Option.Option<HostedView>>
  submit(id: string, input: SubmitInput): Effect.Effect<HostedView, DomainError>
  cancelByCustomer(id: string): Effect.Effect<HostedView, DomainError>
}>()("@tender/domain/sessions/Sessions") {
  static readonly layer = Layer.effect(
    Sessions,
    Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const accounts = yield* AccountRepo
      const uow = yield* UnitOfWork
      const payments = yield* Payments
      const cardTokens = yield* CardTokens
      const ids = yield* Ids
      // Whether any provider may carry an account's sessions (operations/Route.ts).
      const routing = yield* Effect.context<ChannelRepo | PaymentProvider>()
      const refuseUnroutableOf = (owner: { readonly id: string; readonly mode: "test" | "live" }) =>
        Effect.provideContext(refuseUnroutable(owner), routing)
      // Read once: hosted pages live under the server's public URL for the life of the layer.
      const publicUrl = yield* PublicUrl

      const view = (session: Session.CheckoutSession) => Effect.succeed(Session.sessionView(session, publicUrl))

      const context = yield* Effect.context<OrderRepo | TransactionRepo | CheckoutSessionRepo | Outbox | UnitOfWork | Locks>()

      /**
       * Ends a live session (expired or canceled) under the lock order (the order, then the session),
       * and its order with it. A provider call still in flight (`pending_call`) blocks the end: 409
       * `card_payment_in_progress`. Otherwise a cancel ends every attempt with the session, so no
       * later outcome can settle the order of a canceled session; an expiry leaves an attempt the
       * customer already started at a provider to report (spec: "can still report its outcome after
       * expiry"), inside a bounded window after which the window-expiry worker closes it.
       */
      const close = (session: Session.CheckoutSession, trigger: "expired" | "canceled") =>
        guarded(session.order_id, unitOfWork(Effect.gen(function*() {
          const order = yield* lockOrder(session.order_id)
          const current = Option.getOrThrow(yield* sessions.lock(session.id))
          const attempts = yield* transactions.listByOrder(order.id)
          if (attempts.some(callInFlight)) {
            return yield* new CardPaymentInProgress({ message: `An attempt on checkout session ${session.id} is at the provider; try again once it is recorded` })
          }
          const at = isoOf(yield* Clock.currentTimeMillis)
          const moved = Session.transition(current, trigger, at, { next_action: null })
          if (Result.isFailure(moved)) return yield* Effect.fail(moved.failure)
          yield* saveSession(moved.success)
          const open = attempts.filter((t) => isInFlight(t.status))
          const started = trigger === "expired" ? open.filter((t) => t.provider_transaction_id !== null) : []
          if (started.length > 0) {
            // Bounded: an abandoned provider page must not keep the order open for ever.
            const bound = isoOf(Date.parse(at) + Session.LATE_OUTCOME_WINDOW_MS)
            for (const t of started) {
              if (t.expires_at === null || t.expires_at > bound) yield* saveTxn(revise(t, { expires_at: bound }, at))
            }
            return moved.success.next
          }
          const orderMoved = OrderAggregate.transition(order, "session_closed", at)
          if (Result.isSuccess(orderMoved)) yield* saveOrder(orderMoved.success.next)
          for (const t of open) {
            yield* saveTxn((yield* decided(Txn.transition(t, "canceled", at, { decline_code: `session_${trigger}`, next_action: null }))).next)
          }
          return moved.success.next
        }))).pipe(
          // The order's lock stayed held past the wait: a provider step is still running on it.
          Effect.catchTag("Conflict", () =>
            Effect.fail(new CardPaymentInProgress({ message: `An attempt on checkout session ${session.id} is at the provider; try again shortly` }))),
          Effect.provideContext(context)
        )

      /** Applies expiry when a session is touched: a GET shortly after expires_at may still say open (spec). */
      const touch = (session: Session.CheckoutSession) =>
        Effect.gen(function*() {
          if (!Session.isLive(session.status) || Date.parse(session.expires_at) > (yield* Clock.currentTimeMillis)) return session
          return yield* close(session, "expired").pipe(
            // Someone else ended it meanwhile, or an attempt is at the provider: read what is there.
            Effect.catchTags({
              InvalidSessionState: () => Effect.map(sessions.findAny(session.id), Option.getOrThrow),
              CardPaymentInProgress: () => Effect.map(sessions.findAny(session.id), Option.getOrThrow)
            })
          )
        })

      const load = (account: Account | undefined, id: string) =>
        Effect.flatMap(account === undefined ? sessions.findAny(id) : sessions.find(account.id, id), Option.match({
          onNone: () => Effect.fail(new CheckoutSessionNotFound({ message: `No checkout session ${id}` })),
          onSome: touch
        }))

      const validate = (account: Account, input: CreateSessionInput, now: number) => {
        const reference = input.merchant_reference?.trim() ?? ""
        if (reference === "") return new MerchantReferenceRequired({ message: "merchant_reference is required" })
        const errors: Array<FieldError> = []
        const add = (field: string, message: string) => errors.push({ field, message })
        if (reference.length > MAX_REFERENCE) add("merchant_reference", `must be at most ${MAX_REFERENCE} characters`)
        const { amount, currency } = checkMoney(input, add)
        if (input.country !== undefined && !isCountry(input.country)) add("country", "must be an ISO 3166-1 alpha-2 code")
        for (const field of ["success_url", "cancel_url"] as const) {
          const value = input[field]
          const problem = value === undefined ? "is required" : urlProblem(value)
          if (problem !== undefined) add(field, problem)
        }
        const max = input.max_payment_attempts ?? Session.DEFAULT_MAX_ATTEMPTS
        if (!Number.isInteger(max) || max < Session.MAX_ATTEMPTS_BOUNDS.min || max > Session.MAX_ATTEMPTS_BOUNDS.max) {
          add("max_payment_attempts", `must be an integer from ${Session.MAX_ATTEMPTS_BOUNDS.min} to ${Session.MAX_ATTEMPTS_BOUNDS.max}`)
        }
        let expiresAt = now + Session.DEFAULT_LIFETIME_MS
        if (input.expires_at !== undefined) {
          const parsed = Date.parse(input.expires_at)
          if (Number.isNaN(parsed)) add("expires_at", "must be an ISO 8601 timestamp")
          else if (parsed <= now) add("expires_at", "must be in the future")
          else if (parsed > now + Session.MAX_LIFETIME_MS) add("expires_at", "must be at most 24 hours ahead")
          else expiresAt = parsed
        }
        const methods = input.payment_methods
        if (methods !== undefined) {
          if (methods.length === 0) add("payment_methods", "must name at least one method")
          const unknown = methods.find((m) => findMethod(m) === undefined)
          if (unknown !== undefined) return new UnknownPaymentMethod({ message: `Unknown payment method ${unknown}` })
        }
        const manual = input.capture_method === "manual"
        if (input.capture_method !== undefined && input.capture_method !== "manual" && input.capture_method !== "automatic") {
          add("capture_method", "must be manual or automatic")
        }
        if (input.straight_through === true) {
          const single = methods?.length === 1 ? findMethod(methods[0]) : undefined
          if (single === undefined || single.next_action_type !== "redirect") {
            add("straight_through", "needs exactly one payment method, a redirect method")
          }
        }
        if (input.locale !== undefined && !/^[a-z]{2}(-[A-Z]{2})?$/.test(input.locale)) add("locale", "must be a language tag such as en or pt-BR")
        const items = input.line_items ?? []
        const errorsBeforeItems = errors.length
        if (items.length > Session.MAX_LINE_ITEMS) add("line_items", `must have at most ${Session.MAX_LINE_ITEMS} items`)
        const lineItems = items.slice(0, Session.MAX_LINE_ITEMS).map((item, i) => {
          if (item.name.trim() === "") add(`line_items[${i}].name`, "is required")
          else if (item.name.length > MAX_NAME) add(`line_items[${i}].name`, `must be at most ${MAX_NAME} characters`)
          if (!Number.isSafeInteger(item.quantity) || item.quantity < 1 || item.quantity > Session.MAX_QUANTITY) {
            add(`line_items[${i}].quantity`, `must be an integer from 1 to ${Session.MAX_QUANTITY}`)
          }
          const unit = Money.parseAmount(item.unit_amount, Money.isCurrency(currency) ? currency : "USD")
          if ("error" in unit) add(`line_items[${i}].unit_amount`, Money.amountErrorMessage(unit.error, currency))
          return { name: item.name, quantity: item.quantity, unit_amount: "minor" in unit ? unit.minor : 0 }
        })
        // contract.md: the items add up to the amount exactly, so the page never shows a total it does
        // not charge. Judged once every item and the amount are valid; in BigInt, since a quantity
        // times a unit amount may pass 2^53.
        const itemsValid = errors.length === errorsBeforeItems
        const amountValid = !errors.some((e) => e.field === "amount" || e.field === "currency")
        if (input.line_items !== undefined && itemsValid && amountValid) {
          const total = lineItems.reduce((sum, item) => sum + BigInt(item.quantity) * BigInt(item.unit_amount), 0n)
          if (total !== BigInt(amount)) {
            add("line_items", `must add up to amount: quantity × unit_amount totals ${Money.toDecimalString(total, currency)}, amount is ${Money.toDecimalString(amount, currency)}`)
          }
        }
        if (input.processing_profile !== undefined && activeProfile(account, input.processing_profile) === undefined) {
          add("processing_profile", "is not an active processing profile of this account")
        }
        if (input.customer?.email !== undefined && !EMAIL.test(input.customer.email)) add("customer.email", "must be an email address")
        if (errors.length > 0) return new ValidationFailed({ message: `Invalid checkout session: ${errors.map((e) => e.field).join(", ")}`, errors })
        const country = input.country ?? homeCountry(currency)
        const offered = (methods ?? PAYMENT_METHODS.map((m) => m.code)).filter((m) => routable(findMethod(m)!, country, currency))
        if (offered.length === 0) {
          return new CountryNotAvailable({ message: `None of the session's payment methods can be routed for ${country} / ${currency}` })
        }
        if (manual && !offered.includes("card")) {
          return invalidField("capture_method", "manual capture needs card among the session's payment methods")
        }
        return {
          reference,
          amount,
          currency,
          country: input.country ?? null,
          routingCountry: country,
          max,
          expiresAt,
          manual,
          lineItems: input.line_items === undefined ? null : lineItems
        }
      }

      const create = Effect.fn("Sessions.create")(function*(account: Account, input: CreateSessionInput) {
        // contract.md, Idempotency: a reference a direct payment or transfer uses is 409 whatever the body.
        yield* Effect.provideService(refuseReferenceOfOrders(account.id, input.merchant_reference), OrderRepo, orders)
        const nowMs = yield* Clock.currentTimeMillis
        const valid = validate(account, input, nowMs)
        if (valid instanceof Error) return yield* Effect.fail(valid as DomainError)
        // Before anything is stored: a session no provider may carry must not exist (contract.md, Providers).
        yield* refuseUnroutableOf(account)
        const at = isoOf(nowMs)
        const sessionId = yield* ids.make("checkoutSession")
        const hosted = `${publicUrl.replace(/\/+$/, "")}/checkout/${sessionId}`
        const order: Order = OrderAggregate.born({
          id: yield* ids.make("order"),
          account_id: account.id,
          livemode: account.mode === "live",
          merchant_reference: valid.reference,
          subtype: "checkout",
          checkout_session_id: sessionId,
          amount: valid.amount,
          currency: valid.currency,
          country: valid.routingCountry,
          payment_method: input.payment_methods?.length === 1 ? input.payment_methods[0] : "none",
          capture_method: valid.manual ? "manual" : "automatic",
          processing_profile: input.processing_profile ?? null,
          customer: input.customer?.email !== undefined || input.customer?.name !== undefined ? { ...input.customer } as Order["customer"] : null,
          // The provider's pages send the customer back to the hosted page, which knows what comes next.
          success_url: hosted,
          cancel_url: hosted,
          card_token: null,
          payment_instrument: null,
          received_amount: null,
          refunded_amount: 0,
          customer_id: null,
          card_storage_consent: null,
          created_at: at
        })
        const session: Session.CheckoutSession = Session.born({
          id: sessionId,
          account_id: account.id,
          livemode: order.livemode,
          order_id: order.id,
          merchant_reference: valid.reference,
          amount: valid.amount,
          currency: valid.currency,
          country: valid.country,
          capture_method: valid.manual ? "manual" : "automatic",
          payment_methods: input.payment_methods ?? null,
          straight_through: input.straight_through ?? false,
          max_payment_attempts: valid.max,
          attempts: 0,
          expires_at: isoOf(valid.expiresAt),
          transaction_id: null,
          next_action: null,
          customer: order.customer,
          success_url: input.success_url!,
          cancel_url: input.cancel_url!,
          locale: input.locale ?? null,
          line_items: valid.lineItems,
          collect_address: input.collect_address ?? false,
          collect_phone: input.collect_phone ?? false,
          processing_profile: input.processing_profile ?? null,
          created_at: at
        })
        yield* uow.transaction(Effect.gen(function*() {
          yield* orders.insert(order)
          yield* sessions.insert(session)
        }))
        // straight_through: the single redirect method starts at once; the session waits on it.
        if (session.straight_through) yield* payments.attemptSession(session.id, { payment_method: { code: session.payment_methods![0] } })
        return yield* view(Option.getOrThrow(yield* sessions.findAny(session.id)))
      })

      const hostedView = (id: string) =>
        Effect.gen(function*() {
          const found = yield* sessions.findAny(id)
          if (Option.isNone(found)) return Option.none<HostedView>()
          // A read: it never authorizes (a session's 3-D Secure answer completed its attempt already).
          const session = yield* touch(found.value)
          const country = session.country ?? homeCountry(session.currency)
          const offered = (session.payment_methods ?? PAYMENT_METHODS.map((m) => m.code))
            .map((code) => findMethod(code)!)
            .filter((m) => routable(m, country, session.currency))
          const attempts: ReadonlyArray<Transaction> = yield* transactions.listByOrder(session.order_id)
          const last = latestAttempt(attempts)
          const account = Option.getOrThrow(yield* accounts.findById(session.account_id as AccountId))
          return Option.some<HostedView>({
            session,
            merchant_name: account.name,
            publishable_key: account.publishable_key,
            three_ds_display_mode: account.three_ds_display_mode,
            methods: offered,
            attempts_left: Math.max(0, session.max_payment_attempts - session.attempts),
            last_decline: last !== undefined && (last.status === "failed" || last.status === "canceled") ? last.decline_code : null
          })
        })

      const submit = (id: string, input: SubmitInput) =>
        Effect.gen(function*() {
          const found = yield* sessions.findAny(id)
          if (Option.isNone(found)) return yield* new CheckoutSessionNotFound({ message: `No checkout session ${id}` })
          // create refuses such sessions; this stops one stored any other way before any provider call.
          yield* refuseUnroutableOf({ id: found.value.account_id, mode: found.value.livemode ? "live" : "test" })
          const session = yield* touch(found.value)
          const details = input.payment_method.details
          let cardToken = details?.card_token
          if (details?.card !== undefined) {
            const account = Option.getOrThrow(yield* accounts.findById(session.account_id as AccountId))
            // The card's problems named where the attempt carries it (`payment_method.details.card.number`).
            const card = yield* cardTokens.tokenize(account, details.card).pipe(
              Effect.mapError((e) => new ValidationFailed({ message: e.message, errors: e.errors?.map((x) => ({ ...x, field: `payment_method.details.card.${x.field}` })) }))
            )
            cardToken = card.token
          }
          yield* payments.attemptSession(session.id, {
            payment_method: {
              code: input.payment_method.code,
              details: { card_token: cardToken, document_id: details?.document_id, collect_card: details?.collect_card }
            },
            customer: input.customer
          })
          return Option.getOrThrow(yield* hostedView(id))
        })

      const search = Effect.fn("Sessions.search")(function*(account: Account, input: SearchInput) {
        // One statement for the page; `touch` writes only for a session past its expiry the sweeper has not closed yet.
        return yield* Search.search(input, (q) => sessions.search(account.id, q), (page) => Effect.forEach(page, (s) => Effect.flatMap(touch(s), view)))
      })

      return Sessions.of({
        create,
        get: (account, id) => Effect.flatMap(load(account, id), view),
        byReference: (account, reference) =>
          Effect.flatMap(sessions.findNewestByReference(account.id, reference), Option.match({
            onNone: () => Effect.fail(new CheckoutSessionNotFound({ message: `No checkout session with merchant_reference ${reference}` })),
            onSome: (s) => Effect.flatMap(touch(s), view)
          })),
        search,
        cancel: (account, id) => Effect.flatMap(load(account, id), (s) => Effect.flatMap(close(s, "canceled"), view)),
        attempt: (account, id, input) =>
          Effect.gen(function*() {
            yield* load(account, id)
            yield* submit(id, input)
            return yield* view(Option.getOrThrow(yield* sessions.findAny(id)))
          }),
        expireOverdue: Effect.fn("Sessions.expireOverdue")(function*() {
          const due = yield* sessions.listOverdue(isoOf(yield* Clock.currentTimeMillis), 100)
          let expired = 0
          for (const s of due) {
            const done = yield* close(s, "expired").pipe(
              Effect.as(true),
              Effect.catchTags({ InvalidSessionState: () => Effect.succeed(false), CardPaymentInProgress: () => Effect.succeed(false) })
            )
            if (done) expired++
          }
          return expired
        }),
        operator: {
          get: (id) => Effect.flatMap(load(undefined, id), view),
          cancel: (id) => Effect.flatMap(load(undefined, id), (s) => Effect.flatMap(close(s, "canceled"), view))
        },
        hostedView,
        submit,
        cancelByCustomer: (id) =>
          Effect.gen(function*() {
            const found = yield* sessions.findAny(id)
            if (Option.isNone(found)) return yield* new CheckoutSessionNotFound({ message: `No checkout session ${id}` })
            yield* close(found.value, "canceled")
            return Option.getOrThrow(yield* hostedView(id))
          })
      })
    })
  )
}
