/**
 * The browser SDK's return URL, kept on the attempt it paid: where a 3-D Secure challenge shown in
 * the `redirect` display mode sends the customer back to (null: the order's success/cancel URLs).
 */
export const statements = [
  `ALTER TABLE transactions ADD COLUMN customer_return_url text`
]
