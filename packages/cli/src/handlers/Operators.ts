/**
 * The handlers of `tender operators …` and `tender audit list` (commands/Operators.ts declares them),
 * over the Operators use case the console uses too.
 *
 * The enrolment link must open the console of the server that shares this database: its origin is
 * TENDER_PUBLIC_URL when set (what the server calls its own), else the port a server on this database
 * recorded as listening (ServerListeners), else `serve`'s default address.
 */
import { DEFAULT_PUBLIC_URL } from "@tender/adapters/Infrastructure"
import { type Invitation, LISTENER_STALE_MS, type Operator, Operators, type OperatorView, ServerListeners } from "@tender/domain"
import { Effect, Option } from "effect"
import type { Invocation } from "../Cli.ts"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const handler = Services.useCase(Operators)

/** `all`, or a comma-separated list of account ids. */
const grantOf = (text: string): Operator.AccountGrant =>
  text.trim() === "all" ? "all" : text.split(",").map((id) => id.trim()).filter((id) => id.length > 0)

const grantText = (grant: Operator.AccountGrant) => (grant === "all" ? "all" : grant.join(","))

const consoleOrigin = (invocation: Invocation) =>
  Effect.gen(function*() {
    if (invocation.config.publicUrl !== undefined) return invocation.config.publicUrl.replace(/\/+$/, "")
    const serving = yield* (yield* ServerListeners).listening(LISTENER_STALE_MS)
    const port = serving[0]?.port
    return port === undefined ? DEFAULT_PUBLIC_URL : `http://127.0.0.1:${port}`
  })

const withLink = (invocation: Invocation) => (invitation: Invitation) =>
  Effect.map(consoleOrigin(invocation), (origin) => ({ invitation, url: `${origin}/console/enrol/${invitation.enrolment_token}` }))

const invited: Output.Presentation<{ readonly invitation: Invitation; readonly url: string }> = {
  json: ({ invitation, url }) => ({ operator: invitation.operator, enrolment_url: url, expires_at: invitation.expires_at }),
  text: ({ invitation, url }) =>
    [
      Table.fields([
        ["operator", invitation.operator.name],
        ["role", invitation.operator.role],
        ["accounts", grantText(invitation.operator.accounts)],
        ["enrolment link", url],
        ["expires", invitation.expires_at]
      ]),
      "",
      `Send the link to ${invitation.operator.name}: it works once, until it expires.`
    ].join("\n")
}

const operatorRows = (all: ReadonlyArray<OperatorView>) =>
  Table.table(
    ["NAME", "ROLE", "STATUS", "ACCOUNTS", "LOCKED UNTIL", "CREATED"],
    all.map((o) => [o.name, o.role, o.status, grantText(o.accounts), o.locked_until ?? "—", o.created_at])
  )

const one: Output.Presentation<OperatorView> = { json: (o) => o, text: (o) => operatorRows([o]) }

interface Named {
  readonly name: string
}

export const add = (
  input: Named & { readonly role: Operator.OperatorRole; readonly accounts: Option.Option<string> },
  invocation: Invocation
) =>
  handler(
    (operators, { accounts, name, role }: typeof input) =>
      Effect.gen(function*() {
        // A viewer or operator sees only what they are given; an admin, by default, everything.
        // contract.md's form (`operators add NAME --role R`) grants every account; --accounts narrows it.
        const grant = Option.isSome(accounts) ? grantOf(accounts.value) : "all"
        return yield* Effect.flatMap(operators.add({ name, role, accounts: grant }), withLink(invocation))
      }),
    () => invited
  )(input, invocation)

export const reinvite = (input: Named, invocation: Invocation) =>
  handler((operators, { name }: Named) => Effect.flatMap(operators.reinvite(name), withLink(invocation)), () => invited)(input, invocation)

export const list = handler((operators, _: {}) => operators.list(), () => ({
  json: (all) => ({ data: all }),
  text: (all) => (all.length === 0 ? "No operators." : operatorRows(all))
}))

export const grant = handler(
  (operators, { accounts, name }: Named & { readonly accounts: string }) => operators.grant(name, grantOf(accounts)),
  () => one
)

export const setRole = handler((operators, { name, role }: Named & { readonly role: Operator.OperatorRole }) => operators.setRole(name, role), () => one)

export const disable = handler((operators, { name }: Named) => operators.disable(name), () => one)

interface AuditInput {
  readonly operator: Option.Option<string>
  readonly account: Option.Option<string>
  readonly limit: Option.Option<number>
  readonly cursor: Option.Option<string>
}

export const auditList = handler(
  (operators, input: AuditInput) =>
    operators.audit({
      operator: Option.getOrUndefined(input.operator),
      accounts: Option.match(input.account, { onNone: () => undefined, onSome: (id) => [id] }),
      limit: Option.getOrUndefined(input.limit),
      cursor: Option.getOrUndefined(input.cursor)
    }),
  () => ({
    json: (page) => page,
    text: (page) =>
      [
        page.data.length === 0
          ? "No audit entries."
          : Table.table(
            ["TIME", "OPERATOR", "ACTION", "TARGET", "ACCOUNT", "OUTCOME", "DETAIL"],
            page.data.map((e) => [e.at, e.operator_name, e.action, e.target, e.account_id ?? "—", e.outcome, e.detail])
          ),
        ...(page.next_cursor === null ? [] : ["", `More: --cursor ${page.next_cursor}`])
      ].join("\n")
  })
)
