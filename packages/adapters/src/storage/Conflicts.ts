/** The one wording of a lost optimistic-concurrency race, shared by every repository. */
import { Errors } from "@tender/domain"

export const staleWrite = (what: string, id: string, expectedVersion: number) =>
  new Errors.Conflict({
    message: `${what} ${id} was changed by another request (expected version ${expectedVersion}); reload and retry`
  })
