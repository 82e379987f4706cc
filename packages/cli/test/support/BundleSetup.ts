/**
 * Vitest global setup: bundles `tender` once per run (packages/cli/scripts/bundle.ts), so the
 * process tests spawn the bundle an operator runs, at a quarter of the start-up cost of the sources.
 */
import { bundle } from "../../scripts/bundle.ts"

export default async function setup() {
  await bundle()
}
