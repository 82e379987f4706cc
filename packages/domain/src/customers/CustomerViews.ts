/** The API's view of a customer record. */
import type { CustomerRecord } from "./Customer.ts"

/** The record as the API shows it: fields with no value are null. */
export interface CustomerView {
  readonly id: string
  readonly email: string | null
  readonly name: string | null
  readonly phone: string | null
  readonly livemode: boolean
  readonly created_at: string
}

export const customerView = (c: CustomerRecord): CustomerView => ({
  id: c.id,
  email: c.email,
  name: c.name,
  phone: c.phone,
  livemode: c.livemode,
  created_at: c.created_at
})
