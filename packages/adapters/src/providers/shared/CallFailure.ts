/**
 * What a failed provider call means, in one vocabulary for every provider's client (Stripe's,
 * Adyen's), and how the PaymentProvider port reads it. Which wire errors fall in which case is
 * each client's `classify`; what the port makes of each case is the same for every provider, so
 * it lives here: not sent → ProviderUnavailable (retry freely), maybe applied → Unknown
 * (reconciliation asks by the key), rejected → the provider's own mapping.
 */
import { Errors, type PaymentProvider, type Unknown } from "@tender/domain"
import { Effect } from "effect"

/**
 * - `NotSent`: the request never reached the provider, or it refused it unapplied: nothing happened.
 * - `Unknown`: it may have been applied (timeout after sending, dropped connection, 5xx); `report`
 *   carries the provider's own words when it answered (a 5xx's status and message).
 * - `Rejected`: the provider answered an error body: nothing moved.
 */
export type CallFailure<E> =
  | { readonly _tag: "NotSent"; readonly reason: string }
  | { readonly _tag: "Unknown"; readonly reason: string; readonly report?: string | undefined }
  | { readonly _tag: "Rejected"; readonly error: E }

/** Socket errors raised before a byte of the request left: the call cannot have been applied. */
export const NOT_SENT_CODES: ReadonlyArray<string> = ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]

type Port = PaymentProvider["Service"]

/** The port's answers for one provider; `name` prefixes every reason, so an operator sees whose. */
export const answersFor = (name: string) => {
  const unavailable = (reason: string) => new Errors.ProviderUnavailable({ message: `${name}: ${reason}` })
  const unknown = (reason: string, report?: string): Unknown => ({
    _tag: "Unknown",
    reason: `${name}: ${reason}`,
    ...(report === undefined ? {} : { report: `${name} answered ${report}` })
  })

  /** A mutating call's outcome: `ok` reads an answer, `rejected` an error body; the other failures read alike everywhere. */
  const settle = <A, E, R>(
    attempt: Effect.Effect<A, CallFailure<E>>,
    ok: (answer: A) => Effect.Effect<R | Unknown, Errors.ProviderUnavailable>,
    rejected: (error: E) => Effect.Effect<R | Unknown, Errors.ProviderUnavailable>
  ) =>
    attempt.pipe(
      Effect.matchEffect({
        onSuccess: ok,
        onFailure: (failure): Effect.Effect<R | Unknown, Errors.ProviderUnavailable> => {
          switch (failure._tag) {
            case "NotSent":
              return Effect.fail(unavailable(failure.reason))
            case "Unknown":
              return Effect.succeed(unknown(failure.reason, failure.report))
            case "Rejected":
              return rejected(failure.error)
          }
        }
      })
    )

  /** A read (or a probe): whatever failed, the provider could not be asked now. */
  const unreachable = <E>(failure: CallFailure<E>, describe: (error: E) => string) =>
    unavailable(failure._tag === "Rejected" ? describe(failure.error) : failure.reason)

  /**
   * A card channel's answers for what it does not do: payouts are refused with the spec's code
   * (the money did not move), a local-method payment is not started. `channel` reads "a Stripe
   * card channel".
   */
  const cardOnly = (channel: string): Pick<Port, "payout" | "startPayment"> => ({
    payout: () => Effect.succeed({ _tag: "Refused", decline_code: "transfer_not_supported_by_provider" }),
    startPayment: (request) => Effect.fail(unavailable(`payment_method_not_supported_by_provider: ${channel} does not start ${request.method} payments`))
  })

  return { unavailable, unknown, settle, unreachable, cardOnly }
}
