/**
 * The events `tender trigger` makes happen, each with the line `--help` shows for its recipe
 * (trigger/Recipes.ts). Apart from the recipes so that the command's declaration (and `--help`)
 * loads no more than this list; `satisfies` holds it to the domain's EVENT_TYPES, key for key.
 */
import type { EVENT_TYPES } from "@tender/domain/webhooks/Webhook"

/** An event type Tender emits. */
export type EventType = (typeof EVENT_TYPES)[number]

export const TRIGGERS = {
  "payment.succeeded": "a merchant-initiated card payment (4242…), approved",
  "payment.failed": "a card payment declined (4000000000000002)",
  "payment.requires_action": "a server-to-server card payment needing 3-D Secure (4000000000003220)",
  "payment.authorized": "a manual-capture card payment (4242…), authorized",
  "payment.partially_captured": "a manual-capture authorization, captured in part (final: false)",
  "payment.capture_failed": "a manual-capture authorization whose capture is refused (4000000000000259)",
  "payment.canceled": "a manual-capture authorization, voided",
  "payment.underpaid": "a crypto payment, underpaid (test helper simulate underpay)",
  "payment.overpaid": "a crypto payment, overpaid (test helper simulate overpay)",
  "payment.returned": "a crypto payment, underpaid, whose mismatch is declined (funds sent back)",
  "checkout.session.completed": "a checkout session paid by card (test helper attempt, 4242…)",
  "checkout.session.expired": "a checkout session expiring 3 s after its creation (waits for it)",
  "checkout.session.failed": "a one-attempt checkout session whose card is declined",
  "checkout.session.canceled": "a checkout session, canceled",
  "refund.succeeded": "a card payment (4242…), refunded",
  "refund.failed": "a card payment settling later (4000000000000341), its pending refund failed by the test helper",
  "payout.succeeded": "a card payment (4242…), paid out in part",
  "payout.failed": "a card payment settling later (4000000000000341), its pending payout failed by the test helper",
  "transfer.succeeded": "a bank transfer to a registered account",
  "transfer.failed": "a bank transfer to an account ending 0000 (not registered at the sandbox)"
} as const satisfies Record<EventType, string>

/** Every event type, in the domain's order. */
export const EVENTS = Object.keys(TRIGGERS) as ReadonlyArray<EventType>
