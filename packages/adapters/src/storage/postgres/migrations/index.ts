/**
 * Every migration, in the order they apply. A migration is never edited once released: a change
 * is a new, higher-numbered file. Names are recorded in `tender_migrations`.
 */
import type { Effect } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import type { VaultCipher } from "../../../crypto/VaultCipher.ts"
import * as m0001 from "./0001_accounts.ts"
import * as m0002 from "./0002_card_vault.ts"
import * as m0003 from "./0003_payments.ts"
import * as m0004 from "./0004_webhooks.ts"
import * as m0005 from "./0005_checkout_sessions.ts"
import * as m0006 from "./0006_event_sequence.ts"
import * as m0007 from "./0007_order_session.ts"
import * as m0008 from "./0008_pending_calls.ts"
import * as m0009 from "./0009_sandbox_ledger.ts"
import * as m0010 from "./0010_money_out.ts"
import * as m0011 from "./0011_sandbox_ledger_money_out.ts"
import * as m0012 from "./0012_client_secrets.ts"
import * as m0013 from "./0013_customer_return_url.ts"
import * as m0014 from "./0014_channels.ts"
import * as m0015 from "./0015_client_secret_token.ts"
import * as m0016 from "./0016_transfer_token_index.ts"
import * as m0017 from "./0017_transaction_channel.ts"
import * as m0018 from "./0018_provider_journal.ts"
import * as m0019 from "./0019_replay_signatures.ts"
import * as m0020 from "./0020_delivery_lease.ts"
import * as m0021 from "./0021_card_vault_last_used.ts"
import * as m0022 from "./0022_delivery_pause.ts"
import * as m0025 from "./0025_growth_indexes.ts"
import * as m0026 from "./0026_account_changes.ts"
import * as m0027 from "./0027_order_references.ts"
import * as m0028 from "./0028_refunds_within_arrived.ts"
import * as m0029 from "./0029_payouts.ts"
import * as m0030 from "./0030_sealed_client_secrets.ts"
import * as m0031 from "./0031_transaction_browser_flow.ts"
import * as m0032 from "./0032_server_listeners.ts"
import * as m0033 from "./0033_settlement_backoff.ts"
import * as m0034 from "./0034_listener_addresses.ts"
import * as m0035 from "./0035_drop_original_indexes.ts"
import * as m0036 from "./0036_refund_trigger_settling_index.ts"
import * as m0037 from "./0037_delivery_pause_in_domain.ts"
import * as m0038 from "./0038_list_changes.ts"
import * as m0039 from "./0039_delivery_wakeups.ts"
import * as m0042 from "./0042_write_behind_checks.ts"
import * as m0043 from "./0043_listener_changes.ts"
import * as m0044 from "./0044_event_feed.ts"
import * as m0045 from "./0045_temporary_keys.ts"
import * as m0046 from "./0046_operators.ts"
import * as m0047 from "./0047_console_reads.ts"
import * as m0048 from "./0048_operator_lockouts.ts"
import * as m0049 from "./0049_routing_rules.ts"
import * as m0050 from "./0050_channel_health.ts"
import * as m0051 from "./0051_transaction_routing.ts"

export interface Migration {
  readonly name: string
  /** Run one by one (the wire protocol takes one statement per query), inside one transaction. */
  readonly statements: ReadonlyArray<string>
  /**
   * A step SQL cannot take (it needs the vault key, or tells the operator something: the client
   * drops PostgreSQL's notices), run after the statements in the same transaction.
   */
  readonly run?: Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient | VaultCipher>
}

export const migrations: ReadonlyArray<Migration> = [
  { name: "0001_accounts", statements: m0001.statements },
  { name: "0002_card_vault", statements: m0002.statements },
  { name: "0003_payments", statements: m0003.statements },
  { name: "0004_webhooks", statements: m0004.statements },
  { name: "0005_checkout_sessions", statements: m0005.statements },
  { name: "0006_event_sequence", statements: m0006.statements },
  { name: "0007_order_session", statements: m0007.statements },
  { name: "0008_pending_calls", statements: m0008.statements },
  { name: "0009_sandbox_ledger", statements: m0009.statements },
  { name: "0010_money_out", statements: m0010.statements },
  { name: "0011_sandbox_ledger_money_out", statements: m0011.statements },
  { name: "0012_client_secrets", statements: m0012.statements },
  { name: "0013_customer_return_url", statements: m0013.statements },
  { name: "0014_channels", statements: m0014.statements },
  { name: "0015_client_secret_token", statements: m0015.statements },
  { name: "0016_transfer_token_index", statements: m0016.statements },
  { name: "0017_transaction_channel", statements: m0017.statements },
  { name: "0018_provider_journal", statements: m0018.statements },
  { name: "0019_replay_signatures", statements: m0019.statements },
  { name: "0020_delivery_lease", statements: m0020.statements },
  { name: "0021_card_vault_last_used", statements: m0021.statements },
  { name: "0022_delivery_pause", statements: m0022.statements },
  { name: "0025_growth_indexes", statements: m0025.statements },
  { name: "0026_account_changes", statements: m0026.statements },
  { name: "0027_order_references", statements: m0027.statements },
  { name: "0028_refunds_within_arrived", statements: m0028.statements, run: m0028.run },
  { name: "0029_payouts", statements: m0029.statements },
  { name: "0030_sealed_client_secrets", statements: m0030.statements, run: m0030.run },
  { name: "0031_transaction_browser_flow", statements: m0031.statements },
  { name: "0032_server_listeners", statements: m0032.statements },
  { name: "0033_settlement_backoff", statements: m0033.statements },
  { name: "0034_listener_addresses", statements: m0034.statements },
  { name: "0035_drop_original_indexes", statements: m0035.statements },
  { name: "0036_refund_trigger_settling_index", statements: m0036.statements },
  { name: "0037_delivery_pause_in_domain", statements: m0037.statements },
  { name: "0038_list_changes", statements: m0038.statements },
  { name: "0039_delivery_wakeups", statements: m0039.statements },
  { name: "0042_write_behind_checks", statements: m0042.statements },
  { name: "0043_listener_changes", statements: m0043.statements },
  { name: "0044_event_feed", statements: m0044.statements },
  { name: "0045_temporary_keys", statements: m0045.statements },
  { name: "0046_operators", statements: m0046.statements },
  { name: "0047_console_reads", statements: m0047.statements },
  { name: "0048_operator_lockouts", statements: m0048.statements },
  { name: "0049_routing_rules", statements: m0049.statements },
  { name: "0050_channel_health", statements: m0050.statements },
  { name: "0051_transaction_routing", statements: m0051.statements }
]
