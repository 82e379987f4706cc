/**
 * `tender accounts channels add|list|disable|pin` (contract.md, Providers): an account's provider
 * channels, declared; handlers/Channels.ts runs them. `--provider`'s choices are the providers'
 * names (Vocabulary.ts); the credentials help comes from the providers' list (their descriptors).
 */
import * as Option from "effect/Option"
import { Argument, Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"
import { ACCOUNT_MODES, CHANNEL_PRIORITY, PROVIDER_NAMES } from "../Vocabulary.ts"

const accountId = Argument.String("id").pipe(Argument.withDescription("Account id (acct_…)"))
const channelsCommand = commandsOf(() => import("../handlers/Channels.ts"))

/** A comma-separated list flag: absent means "all". */
const list = (name: string, description: string) =>
  Flag.String(name).pipe(
    Flag.withDescription(description),
    Flag.optional,
    Flag.map(Option.match({ onNone: () => null, onSome: (text) => text.split(",") }))
  )

/**
 * The command lines that may show the credentials help: those naming this command, and those asking
 * for completions or the wizard, which walk the whole tree. The providers' modules load the domain
 * (about 0.1 s), which no other command line shows anything of.
 */
const showsCredentials = process.argv.slice(2).some((arg) => arg === "channels" || arg.startsWith("--completions") || arg === "--wizard")

/** Each provider's credential fields, from its module: `stripe: {secret_key: the secret …; …}`. */
const credentialsHelp = showsCredentials
  ? (await import("@tender/adapters/providers/Providers")).PROVIDERS
    .map(({ descriptor: p }) => `${p.name}: {${p.credentials.map((f) => `${f.name}: ${f.about}`).join("; ")}}`)
    .join(" — ")
  : ""

const add = channelsCommand(
  "add",
  {
    id: accountId,
    provider: Flag.Literals("provider", PROVIDER_NAMES).pipe(Flag.withDescription("The provider of the account")),
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
  Command.withDescription(`Manage the provider channels (${PROVIDER_NAMES.join(", ")} accounts) of an account`),
  Command.withSubcommands([add, listCommand, disable, pin])
)
