/**
 * `tender accounts routing set|show|test` (contract.md, Routing rules): an account's (or one of its
 * processing profiles') routing rules, versioned; handlers/Routing.ts runs them. `test` is a dry
 * run: the decision a payment would get now, with no provider called and no state changed.
 */
import { Argument, Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"

const accountId = Argument.String("id").pipe(Argument.withDescription("Account id (acct_…)"))
const routingCommand = commandsOf(() => import("../handlers/Routing.ts"))

/** Absent: the account's own rules (every payment whose profile has none of its own). */
const profile = Flag.String("profile").pipe(
  Flag.withDescription("Processing profile code: that profile's rules rather than the account's"),
  Flag.optional
)

const set = routingCommand(
  "set",
  {
    id: accountId,
    file: Flag.String("file").pipe(
      Flag.withDescription(
        "JSON rules file: {rules: [{id, when: {method, currency, country, amount: {min, max}, card_brand, card_funding, issuer_country, bin}, " +
          "then: {channels: [...]} | {split: [{channel, percent}]}}], default?: {channels: [...]}, strategy?: ordered|success_rate}"
      )
    ),
    profile
  },
  (h) => h.set
).pipe(Command.withDescription("Set the routing rules (the next version; a file that cannot be applied is refused whole, naming the rule)"))

const show = routingCommand("show", { id: accountId, profile }, (h) => h.show)
  .pipe(Command.withDescription("Show the current routing rules and their version (0: none set, channels by priority)"))

const test = routingCommand(
  "test",
  {
    id: accountId,
    payment: Flag.String("payment").pipe(
      Flag.withDescription("JSON file: a POST /v1/payments body, plus an optional card: {bin, brand, funding, issuer_country} for the card's facts")
    ),
    profile
  },
  (h) => h.test
).pipe(Command.withDescription("Dry run: the routing decision the payment would get now (no provider is called, nothing changes)"))

export const routing = Command.make("routing").pipe(
  Command.withDescription("Manage an account's routing rules: which channels take which payments"),
  Command.withSubcommands([set, show, test])
)
