/**
 * Input bounds: their home is the API's wire vocabulary (@tender/api/Limits), since the request
 * schemas show them in the OpenAPI document; the domain's validation applies the same values.
 */
export * from "@tender/api/Limits"
