/**
 * The registry of every state machine of the domain: the docs page (docs/state-machines.md) is
 * rendered from it, and the fitness test (test/Transitions.test.ts) takes every status word from it
 * and fails on a machine defined anywhere but not listed here.
 */
import { AccountMachine } from "./accounts/Account.ts"
import { ProfileMachine } from "./accounts/ProcessingProfile.ts"
import { AuthorizationMachine } from "./payments/Authorization.ts"
import { ChannelMachine } from "./channels/Channel.ts"
import { SessionMachine } from "./sessions/CheckoutSession.ts"
import { PayoutMachine, RefundMachine, TransferMachine } from "./money-out/MoneyOut.ts"
import { OrderMachine } from "./payments/Order.ts"
import { OperatorMachine } from "./operators/Operator.ts"
import { toMarkdown } from "./kernel/StateMachine.ts"
import { TransactionMachine } from "./payments/Transaction.ts"
import { DeliveryMachine, EndpointMachine } from "./webhooks/Webhook.ts"

export const MACHINES = [
  SessionMachine,
  OrderMachine,
  TransactionMachine,
  AuthorizationMachine,
  RefundMachine,
  PayoutMachine,
  TransferMachine,
  DeliveryMachine,
  ChannelMachine,
  EndpointMachine,
  AccountMachine,
  ProfileMachine,
  OperatorMachine
] as const

export const render = (): string =>
  [
    "# State machines",
    "",
    "Generated from the transition tables in `packages/domain/src` by `npm run docs:state-machines`;",
    "do not edit by hand (a test fails when this page and the tables disagree).",
    "",
    ...MACHINES.map(toMarkdown)
  ].join("\n")
