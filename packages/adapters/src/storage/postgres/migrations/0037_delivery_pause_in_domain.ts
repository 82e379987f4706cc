/**
 * Issue 22: the pause rule leaves the database for the domain. 0022's triggers set a delivery's
 * `paused` from its endpoint's status; the domain now decides it (Webhook.pauseOf, pauseOnDelete) and
 * stores it in the unit of work of the endpoint's change (WebhookDeliveryRepo.pause). The column and
 * the dispatcher's index stay; the triggers and their functions go (each drop tolerates a database
 * where it is gone already). The flags they set are what the rule sets, but for one case the
 * triggers never covered: a disabled endpoint deleted left its deliveries paused for ever. The rule
 * resumes them, so that each open one ends `exhausted` ("endpoint deleted"); so does this migration
 * for endpoints deleted before it.
 */
export const statements = [
  `DROP TRIGGER IF EXISTS webhook_endpoint_pause ON webhook_endpoints`,
  `DROP FUNCTION IF EXISTS webhook_endpoint_pause()`,
  `DROP TRIGGER IF EXISTS webhook_delivery_pause ON webhook_deliveries`,
  `DROP FUNCTION IF EXISTS webhook_delivery_pause()`,
  `UPDATE webhook_deliveries d SET paused = false
    WHERE d.paused AND NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id)`
]
