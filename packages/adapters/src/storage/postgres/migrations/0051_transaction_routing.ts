/**
 * Issue 27, smart routing: a new payment's attempt records how it was routed (Payment.Transaction
 * `routing`: rule, version, candidates, channel, reason, attempt). Nullable jsonb: follow-ups, the
 * sandbox and every row stored before carry none; adding it rewrites nothing.
 */
export const statements = [
  `ALTER TABLE transactions ADD COLUMN routing jsonb`
]
