/**
 * The Transfers use case (contract.md, Transfers): create, execute a card transfer, read one by id,
 * and the operator's read (CLI). A facade over operations/Transfer.ts; this layer only captures the
 * services the operations need.
 */
import { Context, Effect, Layer } from "effect"
import type { Account } from "../accounts/Account.ts"
import type { TransferNotFound } from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import { type ErrorOf, seam } from "../kernel/Seam.ts"
import { OrderRepo, TransactionRepo } from "../payments/PaymentPorts.ts"
import { PaymentProvider } from "../payments/ProviderPorts.ts"
import { ChannelProviders, ChannelRepo } from "../channels/ChannelPorts.ts"
import { CardVault } from "../cards/CardPorts.ts"
import type { AccountRepo } from "../accounts/AccountPorts.ts"
import { type KeyHasher, Locks, UnitOfWork } from "../kernel/Ports.ts"
import type { ClientSecretRepo } from "../payments/ClientSecretPorts.ts"
import { TransferRepo } from "./TransferPorts.ts"
import type { CreateTransferInput } from "./TransferRequest.ts"
import type { TransferView } from "./TransferViews.ts"
import { Outbox } from "../webhooks/Webhooks.ts"
import { getTransfer } from "./operations/Read.ts"
import { createTransfer, executeTransfer } from "./operations/Transfer.ts"

export type { CreateTransferInput } from "./TransferRequest.ts"
export type { TransferView } from "./TransferViews.ts"

/** The services the operations need, captured when the layer is built (kernel/Seam.ts). */
type Needs = OrderRepo | TransactionRepo | TransferRepo | Outbox | UnitOfWork | PaymentProvider | CardVault | Locks | Ids | ChannelRepo | ChannelProviders | AccountRepo | ClientSecretRepo | KeyHasher

/** The Transfers use case: create transfers, send card transfers, and read them. */
export class Transfers extends Context.Service<Transfers, {
  /** Validates, routes and creates a transfer; a card transfer then awaits its card (`execute`). */
  create(account: Account, input: CreateTransferInput): Effect.Effect<TransferView, ErrorOf<typeof createTransfer>>
  /** Sends a card transfer awaiting card collection; `card_token` replaces its card. */
  execute(account: Account, orderId: string, input: { readonly card_token?: string | undefined }): Effect.Effect<TransferView, ErrorOf<typeof executeTransfer>>
  /** The account's transfer with this id. */
  get(account: Account, id: string): Effect.Effect<TransferView, TransferNotFound>
  /** Operator access by transfer id, whatever the account (CLI). */
  operator: {
    /** Any account's transfer with this id. */
    get(id: string): Effect.Effect<TransferView, TransferNotFound>
  }
}>()("@tender/domain/money-out/Transfers") {
  static readonly layer = Layer.effect(
    Transfers,
    Effect.gen(function*() {
      const run = yield* seam<Needs>()

      return Transfers.of({
        create: (account, input) => run(createTransfer(account, input)),
        execute: (account, orderId, input) => run(executeTransfer(account, orderId, input)),
        get: (account, id) => run(getTransfer(account.id, id)),
        operator: {
          get: (id) => run(getTransfer(undefined, id))
        }
      })
    })
  )
}
