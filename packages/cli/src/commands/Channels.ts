/**
 * `tender accounts channels add|list|disable|pin` (contract.md, Providers): an account's provider
 * channels, declared; handlers/Channels.ts runs them. `--provider`'s choices and the credentials
 * help come from the providers' list (its descriptors: no provider SDK is loaded for them).
 */
import { PROVIDERS } from "@tender/adapters/providers/Providers"
import { Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"
import { ACCOUNT_MODES, CHANNEL_PRIORITY } from "../Vocabulary.ts"

const accountId = Argument.String("id").pipe(Argument.withDescription("Account id (acct_…)"))
const channelsCommand = commandsOf(() => import("../handlers/Channels.ts"))

/** A comma-separated list flag: absent means "all". */
const list = (name: string, description: string) =>
  Flag.String(name).pipe(
    Flag.withDescription(description),
    Flag.optional,
    Flag.map(Option.match({ onNone: () => null, onSome: (text) => text.split(",") }))
  )

const catalog = PROVIDERS.map((p) => p.descriptor)

/** Each provider's credential fields, from its module: `stripe: {secret_key: the secret …; …}`. */
const credentialsHelp = catalog
  .map((p) => `${p.name}: {${p.credentials.map((f) => `${f.name}: ${f.about}`).join("; ")}}`)
  .join(" — ")

const add = channelsCommand(
  "add",
  {
    id: accountId,
    provider: Flag.Literals("provider", catalog.map((p) => p.name)).pipe(Flag.withDescription("The provider of the account")),
    mode: Flag.Literals("mode", ACCOUNT_MODES).pipe(
      Flag.withDescription("The provider account's mode; must be the Tender account's own")
    ),
    credentialsFile: Flag.String("credentials-file").pipe(
      Flag.withDescription(`JSON file with the provider's credentials. ${credentialsHelp}`)
    ),
    methods: list("methods", "Comma-separated payment methods this channel takes (default: all the provider offers)"),
    currencies: list("currencies", "Comma-separated ISO 4217 currencies this channel takes (default: any)"),
    countries: list("countries", "Comma-separated ISO 3166-1 countries this channel takes (default: any)"),
    priority: Flag.Int("priority").pipe(
      Flag.withDescription(
        `Routing priority, ${CHANNEL_PRIORITY.min}–${CHANNEL_PRIORITY.max}: higher is tried first (default ${CHANNEL_PRIORITY.default})`
      ),
      Flag.optional
    )
  },
  (h) => h.add
).pipe(Command.withDescription("Add a provider channel to an account (its credentials are stored encrypted)"))

const listCommand = channelsCommand("list", { id: accountId }, (h) => h.list)
  .pipe(Command.withDescription("List an account's provider channels (never their credentials)"))

const disable = channelsCommand(
  "disable",
  { id: accountId, channel: Argument.String("channel").pipe(Argument.withDescription("Channel id (ch_…)")) },
  (h) => h.disable
).pipe(Command.withDescription("Disable a provider channel (it stays listed; new payments no longer route to it)"))

const pin = channelsCommand(
  "pin",
  {
    id: accountId,
    profile: Flag.String("profile").pipe(Flag.withDescription("Processing profile code")),
    channels: Argument.String("channel").pipe(
      Argument.withDescription("Channel ids (ch_…) the profile's payments and transfers route among; none unpins it"),
      Argument.atLeast(0)
    )
  },
  (h) => h.pin
).pipe(Command.withDescription("Pin a processing profile to channels (routing picks among them only)"))

export const channels = Command.make("channels").pipe(
  Command.withDescription(`Manage the provider channels (${catalog.map((p) => p.name).join(", ")} accounts) of an account`),
  Command.withSubcommands([add, listCommand, disable, pin])
)
