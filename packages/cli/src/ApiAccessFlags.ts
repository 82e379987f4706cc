/**
 * The flags of the commands that go through the public API (ApiAccess.ts): apart from it because a
 * command's declaration loads them at every start, and ApiAccess.ts loads effect's barrel and the
 * client's signing (some 0.3 s from source), which `--help` and the other commands need not pay.
 */
import { Flag } from "effect/cli"

/** The flags every command through the API takes. */
export const flags = {
  account: Flag.String("account").pipe(
    Flag.withDescription("The account to act as (acct_…); default: TENDER_SECRET_KEY's, or the only test-mode account"),
    Flag.optional
  ),
  apiUrl: Flag.String("api-url").pipe(
    Flag.withDescription("The server (default: TENDER_API_URL, else a running `tender serve` of this database, else http://127.0.0.1:8080)"),
    Flag.optional
  )
}
