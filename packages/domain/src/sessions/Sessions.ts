/**
 * The Sessions use case: hosted checkout sessions. A session owns its order (subtype `checkout`) and
 * the customer's attempts under it (operations/Attempt.ts, run by Payments.attemptSession) until it
 * completes, fails, expires or is canceled. A facade over the operations (operations/*), each one
 * file; this layer only captures the services they need.
 */
import { Context, Effect, Layer, type Option } from "effect"
import type { Account } from "../accounts/Account.ts"
import { CardTokens } from "../cards/CardTokens.ts"
import { ChannelRepo } from "../channels/ChannelPorts.ts"
import type { CardPaymentInProgress, CheckoutSessionNotFound, InvalidSessionState, ValidationFailed } from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import { type ErrorOf, seam } from "../kernel/Seam.ts"
import { AccountRepo } from "../accounts/AccountPorts.ts"
import { Locks, UnitOfWork } from "../kernel/Ports.ts"
import type { SearchInput, SearchResult } from "../kernel/Search.ts"
import { OrderRepo, TransactionRepo } from "../payments/PaymentPorts.ts"
import { PaymentProvider } from "../payments/ProviderPorts.ts"
import { Payments } from "../payments/Payments.ts"
import { Outbox } from "../webhooks/Webhooks.ts"
import type { SessionView } from "./CheckoutSession.ts"
import type { CreateSessionInput, SubmitInput } from "./SessionRequest.ts"
import { CheckoutSessionRepo } from "./SessionPorts.ts"
import type { HostedView } from "./SessionViews.ts"
import { cancel, cancelByCustomer } from "./operations/Cancel.ts"
import { create } from "./operations/Create.ts"
import { expireSessions } from "./operations/ExpireSessions.ts"
import { hostedView } from "./operations/HostedView.ts"
import { byReference, get, search } from "./operations/Read.ts"
import { attemptAsCustomer, submit } from "./operations/Submit.ts"

export type { CreateSessionInput, SubmitInput } from "./SessionRequest.ts"
export type { HostedView } from "./SessionViews.ts"

/** The services the operations need, captured when the layer is built (kernel/Seam.ts). */
type Needs =
  | CheckoutSessionRepo | OrderRepo | TransactionRepo | AccountRepo | UnitOfWork | Locks | Outbox | Ids
  // an attempt runs through the Payments use case; a typed card is vaulted first
  | Payments | CardTokens
  // whether any provider may carry an account's sessions (payments/operations/Route.ts)
  | ChannelRepo | PaymentProvider

type Ended = CheckoutSessionNotFound | InvalidSessionState | CardPaymentInProgress

/** The Sessions use case: create, read, cancel and expire checkout sessions, and take their customers' attempts. */
export class Sessions extends Context.Service<Sessions, {
  /** Validates and creates a checkout session (and its order), open for the customer. */
  create(account: Account, input: CreateSessionInput): Effect.Effect<SessionView, ErrorOf<typeof create>>
  /** The account's session with this id. */
  get(account: Account, id: string): Effect.Effect<SessionView, CheckoutSessionNotFound>
  /** The account's newest session with this merchant reference. */
  byReference(account: Account, reference: string): Effect.Effect<SessionView, CheckoutSessionNotFound>
  /** A page of the account's sessions matching the filters. */
  search(account: Account, input: SearchInput): Effect.Effect<SearchResult<SessionView>, ValidationFailed>
  /** The merchant cancels a live session. */
  cancel(account: Account, id: string): Effect.Effect<SessionView, Ended>
  /** The test helper: acts as the customer submitting the hosted form. */
  attempt(account: Account, id: string, input: SubmitInput): Effect.Effect<SessionView, ErrorOf<typeof attemptAsCustomer>>
  /** The sweeper: expires overdue sessions (and emits their events); returns how many. */
  expireOverdue(): Effect.Effect<number>
  /** Operator access (CLI), any account. */
  operator: {
    /** Any account's session with this id. */
    get(id: string): Effect.Effect<SessionView, CheckoutSessionNotFound>
    /** Cancels any account's live session (the operator's cancel). */
    cancel(id: string): Effect.Effect<SessionView, Ended>
  }
  /** The hosted page: its read (never authorizes), its form, its cancel. */
  hostedView(id: string): Effect.Effect<Option.Option<HostedView>>
  /** The customer submits the hosted form: one payment attempt. */
  submit(id: string, input: SubmitInput): Effect.Effect<HostedView, ErrorOf<typeof submit>>
  /** The customer cancels on the hosted page. */
  cancelByCustomer(id: string): Effect.Effect<HostedView, ErrorOf<typeof cancelByCustomer>>
}>()("@tender/domain/sessions/Sessions") {
  static readonly layer = Layer.effect(
    Sessions,
    Effect.gen(function*() {
      const run = yield* seam<Needs>()
      return Sessions.of({
        create: (account, input) => run(create(account, input)),
        get: (account, id) => run(get(account.id, id)),
        byReference: (account, reference) => run(byReference(account.id, reference)),
        search: (account, input) => run(search(account.id, input)),
        cancel: (account, id) => run(cancel(account.id, id)),
        attempt: (account, id, input) => run(attemptAsCustomer(account, id, input)),
        expireOverdue: () => run(expireSessions),
        operator: {
          get: (id) => run(get(undefined, id)),
          cancel: (id) => run(cancel(undefined, id))
        },
        hostedView: (id) => run(hostedView(id)),
        submit: (id, input) => run(submit(id, input)),
        cancelByCustomer: (id) => run(cancelByCustomer(id))
      })
    })
  )
}
