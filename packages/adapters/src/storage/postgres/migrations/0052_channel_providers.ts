/**
 * A channel's provider is whatever the adapters' list of providers carries (providers/Providers.ts:
 * Stripe, Adyen, Testpay, and any a deployment adds), checked against that catalog when the channel
 * is added (Channel.make). 0014's CHECK named only Stripe and Adyen, so a Testpay channel could be
 * kept in memory but not in PostgreSQL (`channels_provider_check`, an unexpected error): one list
 * decides, the catalog, and the table no longer keeps a second, stale copy of it.
 */
export const statements = [
  `ALTER TABLE channels DROP CONSTRAINT IF EXISTS channels_provider_check`
]
