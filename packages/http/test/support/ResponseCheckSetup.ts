/**
 * vitest setup file (vitest.config.ts, every test file): a file whose test servers answered anything
 * the served OpenAPI document does not describe fails, listing it (ResponseCheck.ts). The hook is
 * registered first, so it runs after the file's own (the servers are closed, every answer checked).
 */
import { afterAll } from "vitest"
import { report, settled, undescribed } from "../../src/testing/ResponseCheck.ts"

afterAll(async () => {
  await settled()
  if (undescribed.length === 0) return
  const found = report(undescribed)
  undescribed.length = 0
  throw new Error(`Responses the OpenAPI document (/v1/openapi.json) does not describe:\n${found}`)
})
