/** The API's view of a customer record. */
import type * as Views from "@tender/api/Views"
import type { CustomerRecord } from "./Customer.ts"

/** The record as the API shows it (@tender/api/Views): fields with no value are null. */
export type CustomerView = typeof Views.CustomerView.Type

/** A stored customer as the API shows it. */
export const customerView = (c: CustomerRecord): CustomerView => ({
  id: c.id,
  email: c.email,
  name: c.name,
  phone: c.phone,
  livemode: c.livemode,
  created_at: c.created_at
})
