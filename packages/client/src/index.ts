export * as TenderClient from "./TenderClient.ts"
export { createTenderClient, TenderApiError, type TenderPromiseClient } from "./Promise.ts"
export { UnverifiedResponse } from "./TenderClient.ts"
export { type RawClientOptions, type RawReply, type RawRequest, signedFetch, type Verdict } from "./Raw.ts"
