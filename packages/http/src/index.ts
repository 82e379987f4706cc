export { Api } from "./Api.ts"
export * as ApiError from "./ApiError.ts"
export * as Server from "./Server.ts"
