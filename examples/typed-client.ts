/**
 * A merchant server's card payment with the typed client (`@tender/client`), for a server that does
 * not use Effect: every request is signed and every answer's signature checked for you.
 *
 *   TENDER_SECRET_KEY=sk_test_… TENDER_SIGNING_SECRET=whsec_… npx node examples/typed-client.ts
 *
 * TENDER_URL defaults to http://127.0.0.1:8080. It vaults a test card, pays with it, reads the order
 * back, and shows the safe retry: the same merchant_reference again is 409
 * duplicate_merchant_reference_id, and the payment is recovered by reference.
 */
import { createTenderClient, TenderApiError, type TenderPromiseClient, UnverifiedResponse } from "@tender/client"

export const payWithTestCard = async (tender: TenderPromiseClient, merchantReference: string) => {
  // Test mode only: what the secure card fields do in a browser.
  const card = await tender.testHelpers.createCardToken({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
  const request = {
    amount: "25.00",
    currency: "USD",
    country: "US",
    merchant_reference: merchantReference,
    payment_method: { code: "card", details: { card_token: card.token, stored_credential: { initiator: "merchant" as const, reason: "unscheduled" as const } } }
  }
  const payment = await tender.payments.create(request)
  const order = await tender.orders.get({ params: { id: payment.order_id } })

  // A retry after a lost answer: the reference makes it safe, and the order is read back by it.
  let retried: typeof order
  try {
    await tender.payments.create(request)
    throw new Error("a second create with the same merchant_reference should be refused")
  } catch (error) {
    if (!(error instanceof TenderApiError && error.code === "duplicate_merchant_reference_id")) throw error
    retried = await tender.orders.byReference({ params: { merchant_reference: merchantReference } })
  }
  return { payment, order, retried }
}

if (import.meta.main) {
  const secretKey = process.env.TENDER_SECRET_KEY
  const signingSecret = process.env.TENDER_SIGNING_SECRET
  if (!secretKey || !signingSecret) {
    console.error("Set TENDER_SECRET_KEY and TENDER_SIGNING_SECRET (from `npx tender accounts create --name demo --json`).")
    process.exit(2)
  }
  const tender = createTenderClient({ baseUrl: process.env.TENDER_URL ?? "http://127.0.0.1:8080", secretKey, signingSecret })
  try {
    const { payment, order, retried } = await payWithTestCard(tender, `example-${Date.now()}`)
    console.log(`payment ${payment.order_id}: ${payment.status}; order ${order.status}; retry recovered ${retried.id}`)
  } catch (error) {
    if (error instanceof TenderApiError) console.error(`${error.status} ${error.code}: ${error.message} (${error.request_id})`)
    else if (error instanceof UnverifiedResponse) console.error(`not trusted: ${error.message}`)
    else console.error(error)
    process.exit(1)
  }
}
