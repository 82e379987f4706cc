/**
 * Operation: the routing dry run (`tender accounts routing test ID --payment payment.json`): where a
 * payment would go now, and why, planned exactly as the create plans it (PlanRoute) but changing
 * nothing: no provider is called, no probe claimed, nothing stored. The payment is a
 * `POST /v1/payments` body checked as the create checks it (its JSON shape, then validateCreate),
 * plus an optional `card: {bin, brand, funding, issuer_country}` standing for the card's facts.
 */
import { Effect, Result, Schema, SchemaIssue } from "effect"
import { CreatePaymentRequest } from "@tender/api/api/PaymentSchemas"
import { type FieldError, ValidationFailed } from "../../kernel/Errors.ts"
import { validateCreate } from "../../payments/PaymentRequest.ts"
import type { RoutingReason } from "../RoutingModel.ts"
import { cardFacts, factsOf, planRoute } from "./PlanRoute.ts"
import { ownerWithProfile } from "./SetRouting.ts"

/** The dry run's answer (contract.md): the rule and version that decided, the ranked candidates, the channel and why. */
export interface RoutingAnswer {
  readonly rule: string | null
  readonly version: number
  readonly candidates: ReadonlyArray<string>
  /** A channel id, or `sandbox` when the payment would go to the built-in sandbox. */
  readonly channel: string
  readonly reason: RoutingReason
}

const Fact = Schema.optional(Schema.NullOr(Schema.String))
/** The create's body, plus the card's facts a rule may test (the create reads them from the vaulted card). */
const DryRunPayment = Schema.Struct({
  ...CreatePaymentRequest.fields,
  card: Schema.optional(Schema.Struct({ bin: Fact, brand: Fact, funding: Fact, issuer_country: Fact }))
})

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** The body's JSON-shape problems as the API names them (`payment_method.code must be string`). */
const shapeProblems = (issue: SchemaIssue.Issue): ValidationFailed => {
  const errors: Array<FieldError> = formatIssues(issue).issues.map((i) => ({
    field: (i.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join(".") || "payment",
    message: i.message.replace(/^Expected /, "must be ")
  }))
  return new ValidationFailed({ message: `Invalid payment: ${errors.map((e) => `${e.field} ${e.message}`).join("; ")}`, errors })
}

export const testRouting = Effect.fn("Channels.testRouting")(function*(accountId: string, profile: string | null, payment: unknown) {
  const owner = yield* ownerWithProfile(accountId, profile)
  const decoded = Schema.decodeUnknownResult(DryRunPayment)(payment, { errors: "all" })
  if (Result.isFailure(decoded)) return yield* shapeProblems(decoded.failure.issue)
  const { card, ...body } = decoded.success
  const valid = validateCreate(owner, body)
  if (valid instanceof Error) return yield* Effect.fail(valid)
  // The rules of the profile named for the test, else of the payment's own profile (as the create routes it).
  const routedAs = profile ?? valid.processing_profile
  if (profile !== null && valid.processing_profile !== null && valid.processing_profile !== profile) {
    return yield* new ValidationFailed({
      message: `Invalid payment: processing_profile ${valid.processing_profile} is not the profile tested (${profile})`,
      errors: [{ field: "processing_profile", message: `must be ${profile} (the profile tested) or absent` }]
    })
  }
  if (card?.bin != null && !/^\d{6,8}$/.test(card.bin)) {
    return yield* new ValidationFailed({
      message: "Invalid payment: card.bin must be the card's first 6 to 8 digits",
      errors: [{ field: "card.bin", message: "must be the card's first 6 to 8 digits" }]
    })
  }
  const facts = {
    ...factsOf({ method: valid.method.code, currency: valid.currency, country: valid.country, amount: valid.amount }),
    // Card facts only for a card payment: no card condition holds for another method.
    card: card !== undefined && valid.method.code === "card" ? cardFacts(card) : null
  }
  const plan = yield* planRoute(owner, facts, routedAs, { dryRun: true })
  if (plan._tag === "Sandbox") {
    // The built-in sandbox: no channel to choose among, so no rule applies (its transactions record routing null).
    return { rule: null, version: 0, candidates: [], channel: "sandbox", reason: "default" } satisfies RoutingAnswer
  }
  const { rule, version, candidates, channel, reason } = plan.choice.routing
  return { rule, version, candidates, channel, reason } satisfies RoutingAnswer
})
