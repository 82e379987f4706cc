/**
 * A delivery's lease token (`WebhookDelivery.lease_token`): set by the claim, cleared by the write
 * that records its attempt; writes carrying another token change nothing (lease fencing).
 */
export const statements = [
  `ALTER TABLE webhook_deliveries ADD COLUMN lease_token text`
]
