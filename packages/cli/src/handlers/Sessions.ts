/**
 * The handlers of `tender sessions …` (commands/Sessions.ts declares them). The Sessions use case
 * decides as for the API.
 */
import { Accounts, type CheckoutSession, Sessions } from "@tender/domain"
import { Effect, type Option } from "effect"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const handler = Services.useCase(Sessions)

interface SessionId {
  readonly sessionId: string
}

const one: Output.Presentation<CheckoutSession.SessionView> = {
  json: (s) => s,
  text: (s) =>
    Table.fields([
      ["session", s.id],
      ["status", s.status],
      ["reference", s.merchant_reference],
      ["amount", `${s.amount} ${s.currency}`],
      ["order", s.order_id],
      ["attempts", `${s.attempts} of ${s.max_payment_attempts}`],
      ["transaction", s.transaction_id ?? "—"],
      ["expires", s.expires_at],
      ["url", s.url]
    ])
}

export const get = handler((sessions, { sessionId }: SessionId) => sessions.operator.get(sessionId), () => one)

interface ListInput {
  readonly account: string
  readonly status: Option.Option<CheckoutSession.SessionView["status"]>
  readonly limit: number
}

export const list = handler(
  (sessions, input: ListInput) =>
    Effect.flatMap(Accounts.use((accounts) => accounts.get(input.account)), (account) =>
      sessions.search(account, {
        limit: input.limit,
        ...(input.status._tag === "Some" ? { status: [input.status.value] } : {})
      })),
  () => ({
    json: (page) => page,
    text: (page) =>
      Table.table(
        ["session", "status", "reference", "amount", "attempts", "created"],
        page.data.map((s) => [s.id, s.status, s.merchant_reference, `${s.amount} ${s.currency}`, `${s.attempts}/${s.max_payment_attempts}`, s.created_at])
      )
  })
)

export const cancel = handler((sessions, { sessionId }: SessionId) => sessions.operator.cancel(sessionId), () => one)
