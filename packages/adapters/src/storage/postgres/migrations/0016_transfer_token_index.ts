/**
 * A card transfer's collected token is payout-scoped: every payment that names a card_token asks
 * whether a transfer's secret recorded it, so that lookup is indexed (transfer secrets only).
 */
export const statements = [
  `CREATE INDEX client_secrets_transfer_token ON client_secrets (card_token) WHERE kind = 'transfer' AND card_token IS NOT NULL`
]
