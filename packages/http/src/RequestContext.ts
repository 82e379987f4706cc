/**
 * What the gateway learns about a request before routing (its id, the authenticated account) and
 * hands to the API's middleware and handlers.
 */
import { Context, Effect } from "effect"
import type { Account } from "@tender/domain/accounts/Account"
import { Errors } from "@tender/domain"
import type { ApiError as ApiErrorValue } from "@tender/api/ApiError"
import { preferReplica } from "@tender/adapters/storage/postgres/ReadRouting"
import * as ApiError from "./ApiError.ts"

export interface RequestState {
  readonly requestId: string
  /** Set once the API key was verified; the gateway signs the response with its secret. */
  account: Account | undefined
}

export const CurrentRequest = Context.Reference<RequestState>("@tender/http/CurrentRequest", {
  defaultValue: () => ({ requestId: "req_unknown", account: undefined })
})

/** The authenticated account, provided to every endpoint behind the API-key middleware. */
export class CurrentAccount extends Context.Service<CurrentAccount, Account>()("@tender/http/CurrentAccount") {}

/**
 * The authenticated account, for a test helper: they act only for test-mode accounts (contract.md:
 * live mode → 403 forbidden), as a helper drives the sandbox and a live account must never reach it.
 */
export const CurrentTestAccount = Effect.flatMap(CurrentAccount, (account) =>
  account.mode === "test"
    ? Effect.succeed(account)
    : Effect.fail(new Errors.Forbidden({ message: "Test helpers are available to test-mode accounts only" })))

/**
 * A call below the API layer (a use case, a port's adapter): a defect there — a storage failure, a
 * bug in the domain or an adapter — is logged with its cause and answered as the spec's
 * `general_error` (500, "Unexpected error below the API layer"). A defect of the HTTP layer itself
 * stays the gateway's `internal_error`. Interruptions pass untouched.
 */
export const belowApi = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Errors.GeneralError, R> =>
  Effect.catchDefect(effect, (defect) =>
    Effect.andThen(
      Effect.logError("Unexpected error below the API layer", defect),
      Effect.fail(new Errors.GeneralError({ message: "Unexpected error below the API layer; safe to retry idempotently" }))
    ))

/**
 * Runs a use case for a handler: its domain errors become the envelope for their status, with this
 * request's id, and its defects `general_error` (belowApi). The only translation handlers do.
 */
export const run = <A, E extends Errors.DomainError, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, ApiErrorValue, R> =>
  Effect.catch(belowApi(effect), (error) =>
    Effect.gen(function*() {
      const request = yield* CurrentRequest
      return yield* Effect.fail(ApiError.fromDomain(error, request.requestId))
    }))

/**
 * `run` for a read-only endpoint (a GET by id, a search, a list): its statements may read the
 * read replica (`TENDER_READ_DATABASE_URL`), and a 404 there is asked again of the primary, so a
 * merchant reading its own write just after it never gets a 404 for it (ReadRouting.ts). Only
 * for use cases that write nothing outside a transaction.
 */
export const runRead = <A, E extends Errors.DomainError, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, ApiErrorValue, R> =>
  run(preferReplica(effect, (error) => ApiError.statusOf(error.code) === 404))
