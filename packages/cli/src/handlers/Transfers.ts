/** The handler of `tender transfers get` (commands/Transfers.ts declares it). */
import { Transfers, type TransferView } from "@tender/domain"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const presentation: Output.Presentation<TransferView> = {
  json: (t) => t,
  text: (t) =>
    Table.fields([
      ["transfer", t.id],
      ["order", t.order_id],
      ["reference", t.merchant_reference],
      ["status", t.status],
      ["amount", `${t.amount} ${t.currency}`],
      ["destination", `${t.payment_method} (${t.payment_instrument.type}, ${t.payment_instrument.country_code ?? "—"})`],
      ...(t.decline_code !== undefined ? [["decline code", t.decline_code] as const] : []),
      ["profile", t.processing_profile ?? "—"],
      ["created", t.created_at]
    ])
}

export const get = Services.useCase(Transfers)(
  (transfers, { transferId }: { readonly transferId: string }) => transfers.operator.get(transferId),
  () => presentation
)
