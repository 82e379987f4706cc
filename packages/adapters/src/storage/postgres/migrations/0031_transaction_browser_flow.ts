/**
 * Whether an attempt is the customer's in one of Tender's browser flows (the SDK's `pay`, a checkout
 * session): its 3-D Secure answer then completes it at once (Payment.Transaction.browser_flow).
 * Attempts stored before this were such when their order is a checkout session's, or has a payment's
 * client secret (minted only for the SDK's collect_card / collect_cvv), so one still awaiting its
 * challenge's answer completes on it as a new one would.
 */
export const statements = [
  `ALTER TABLE transactions ADD COLUMN browser_flow boolean NOT NULL DEFAULT false`,
  `UPDATE transactions t SET browser_flow = true
    WHERE t.kind IN ('payment', 'authorization')
      AND (EXISTS (SELECT 1 FROM orders o WHERE o.id = t.order_id AND o.checkout_session_id IS NOT NULL)
        OR EXISTS (SELECT 1 FROM client_secrets s WHERE s.order_id = t.order_id AND s.kind = 'payment'))`
]
