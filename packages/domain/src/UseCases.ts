/**
 * Every use case, over the ports. The edges (server, CLI, tests, embedding) provide the ports once and
 * get them all, so no edge keeps its own list.
 */
import { Layer } from "effect"
import { Accounts } from "./Accounts.ts"
import { CardTokens } from "./CardTokens.ts"
import { Channels } from "./Channels.ts"
import { ClientSecrets } from "./ClientSecrets.ts"
import { Customers } from "./Customers.ts"
import { Outflows } from "./Outflows.ts"
import { Payments } from "./Payments.ts"
import { Sessions } from "./Sessions.ts"
import { Transfers } from "./Transfers.ts"
import { VaultAccess } from "./VaultAccess.ts"
import { Outbox, Webhooks } from "./Webhooks.ts"

const core = Layer.mergeAll(
  Accounts.layer,
  CardTokens.layer,
  VaultAccess.layer,
  Payments.layer,
  Webhooks.layer,
  Customers.layer,
  Outflows.layer,
  Transfers.layer
).pipe(
  Layer.provideMerge(Outbox.layer)
)

export const layer = Layer.mergeAll(Sessions.layer, ClientSecrets.layer, Channels.layer).pipe(Layer.provideMerge(core))
