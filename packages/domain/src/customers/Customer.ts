/**
 * A customer record (contract.md: `POST /v1/customers` `{email?, name?, phone?}`): whom an account's
 * payments name by `customer_id`. It has no lifecycle; fields with no value are null.
 */
import { Schema } from "effect"
import { AccountId } from "../kernel/Ids.ts"

/** A customer as stored, owned by one account. */
export const CustomerRecord = Schema.Struct({
  id: Schema.String,
  account_id: AccountId,
  livemode: Schema.Boolean,
  email: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  created_at: Schema.String
})
/** A customer as stored. */
export type CustomerRecord = typeof CustomerRecord.Type
