/**
 * Acme passes Tender's provider contract: the suite @tender/adapters/testing exports, run by vitest
 * (`npm test`) over acme's layer with the cards it approves and declines.
 */
import { providerContract } from "@tender/adapters/testing"
import * as Acme from "./acme.mjs"

providerContract("acme", Acme.layer, Acme.CARDS)
