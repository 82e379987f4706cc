/**
 * A merchant's TypeScript against the client's declarations (the CI test type-checks it with
 * `strict` and `nodenext` outside the repository): request and answer types are the API's own.
 */
import { createTenderClient, TenderApiError, type TenderPromiseClient } from "@tender/client"

export const client: TenderPromiseClient = createTenderClient({ baseUrl: "http://127.0.0.1:8080", secretKey: "sk_test_x", signingSecret: "whsec_x" })

export const statusOf = async (tender: TenderPromiseClient, orderId: string): Promise<string> => {
  try {
    const order = await tender.orders.get({ params: { id: orderId } })
    const captured: number | undefined = order.captured_amount
    return `${order.status}${captured === undefined ? "" : ` (captured ${captured})`}`
  } catch (error) {
    if (error instanceof TenderApiError) return `${error.status} ${error.code}`
    throw error
  }
}
