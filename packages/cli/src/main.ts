/**
 * `tender`: the operator CLI. Assembles the command tree and runs it on Node; each command composes
 * its own layers (see Services.ts), so a command that needs no storage starts none. The tree holds
 * only declarations: a command's handler is imported when it runs (Cli.ts). What the declarations
 * load imports effect's and the platform's modules one by one: their barrels load every module
 * (effect's some 80 more than effect/cli needs, ~70 ms; the platform's HTTP, sockets, workers).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Command } from "effect/cli"
import { tender } from "./Cli.ts"
import { accounts } from "./commands/Accounts.ts"
import { events } from "./commands/Events.ts"
import { listen } from "./commands/Listen.ts"
import { migrate } from "./commands/Migrate.ts"
import { audit, operators } from "./commands/Operators.ts"
import { payments } from "./commands/Payments.ts"
import { payouts, refunds } from "./commands/Refunds.ts"
import { sessions } from "./commands/Sessions.ts"
import { serve } from "./commands/Serve.ts"
import { transfers } from "./commands/Transfers.ts"
import { trigger } from "./commands/Trigger.ts"
import { vault } from "./commands/Vault.ts"
import { webhooks } from "./commands/Webhooks.ts"
import { worker } from "./commands/Worker.ts"
import * as Output from "./Output.ts"
import packageJson from "../package.json" with { type: "json" }

tender.pipe(
  Command.withSubcommands([serve, worker, migrate, accounts, payments, sessions, webhooks, events, listen, refunds, payouts, transfers, vault, trigger, operators, audit]),
  Command.run({ version: packageJson.version }),
  Effect.provide(Output.presenterLayer.pipe(Layer.provideMerge(NodeServices.layer))),
  NodeRuntime.runMain
)
