/** The one wording of each storage-level refusal, shared by every repository and both adapters. */
import { Errors } from "@tender/domain"

export const staleWrite = (what: string, id: string, expectedVersion: number) =>
  new Errors.Conflict({
    message: `${what} ${id} was changed by another request (expected version ${expectedVersion}); reload and retry`
  })

/** The spec: a 409 here means the first create was accepted; the merchant recovers it by reference. */
export const duplicateReference = (reference: string) =>
  new Errors.DuplicateMerchantReferenceId({
    message: `merchant_reference ${reference} already exists; fetch it with GET /v1/orders/by-reference/${
      encodeURIComponent(reference)
    }`
  })

/**
 * contract.md: a session's reference is refused while the newest session with it is open,
 * pending_action or completed; the merchant recovers that session by reference.
 */
export const duplicateSessionReference = (reference: string) =>
  new Errors.DuplicateMerchantReferenceId({
    message: `a session with this merchant_reference is still open, pending or completed; fetch it with GET /v1/checkout/sessions/by-reference/${
      encodeURIComponent(reference)
    }`
  })

/** A defect, not a refusal: outside a transaction a row lock would end with its statement, silently. */
export const lockOutsideUnitOfWork = (what: string) =>
  new Error(`${what}.lock must run inside UnitOfWork.transaction`)

/** A defect: an attempt recorded on a delivery not stored (a leased one is never pruned), or one of another account. */
export const deliveryNotStored = (id: string) => new Error(`WebhookDeliveryRepo: no delivery ${id} to write`)

/** A defect: an attempt belongs to the delivery whose state it is recorded with. */
export const attemptOfAnotherDelivery = (attemptOf: string, delivery: string) =>
  new Error(`WebhookDeliveryRepo: an attempt of ${attemptOf} recorded on ${delivery}`)

/** Console operators' names are unique (`tender operators add`). */
export const operatorNameTaken = (name: string) => new Errors.Conflict({ message: `An operator named ${name} already exists` })
