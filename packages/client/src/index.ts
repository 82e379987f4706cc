/**
 * @tender/client: a typed client for Tender's merchant API that signs every request and verifies
 * every response: as Effect (`TenderClient`), as Promises (`createTenderClient`), or raw (`signedFetch`).
 *
 * @module @tender/client
 */
/** The typed Effect client: every endpoint of the API, requests signed and responses verified. */
export * as TenderClient from "./TenderClient.ts"
export { createTenderClient, TenderApiError, type TenderPromiseClient } from "./Promise.ts"
export { UnverifiedResponse } from "./TenderClient.ts"
export { type RawClientOptions, type RawReply, type RawRequest, signedFetch, type Verdict } from "./Raw.ts"
