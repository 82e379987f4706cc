/**
 * Every use case, over the ports. The edges (server, CLI, tests, embedding) provide the ports once and
 * get them all, so no edge keeps its own list.
 */
import { Layer } from "effect"
import { Accounts } from "./accounts/Accounts.ts"
import { CardTokens } from "./cards/CardTokens.ts"
import { Channels } from "./channels/Channels.ts"
import { ClientSecrets } from "./payments/ClientSecrets.ts"
import { Customers } from "./customers/Customers.ts"
import { Operators } from "./operators/Operators.ts"
import { Outflows } from "./money-out/Outflows.ts"
import { Payments } from "./payments/Payments.ts"
import { Sessions } from "./sessions/Sessions.ts"
import { Transfers } from "./money-out/Transfers.ts"
import { VaultAccess } from "./cards/VaultAccess.ts"
import { Outbox, Webhooks } from "./webhooks/Webhooks.ts"

const core = Layer.mergeAll(
  Accounts.layer,
  CardTokens.layer,
  VaultAccess.layer,
  Payments.layer,
  Webhooks.layer,
  Customers.layer,
  Outflows.layer,
  Transfers.layer,
  Operators.layer
).pipe(
  Layer.provideMerge(Outbox.layer)
)

/** Every use case, needing only the ports: provide adapters for the ports and get them all. */
export const layer = Layer.mergeAll(Sessions.layer, ClientSecrets.layer, Channels.layer).pipe(Layer.provideMerge(core))
