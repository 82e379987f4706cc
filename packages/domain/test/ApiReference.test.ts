/**
 * The API reference stays complete (docs/api, `npm run docs:api`): typedoc over the indexes of
 * @tender/domain, @tender/api and @tender/client with typedoc.json's validation, nothing written.
 * An export without a doc comment is a warning there, and typedoc.json makes every warning fail.
 */
import { spawnSync } from "node:child_process"
import { expect, it } from "vitest"

const root = new URL("../../../", import.meta.url).pathname

it("every export of the documented indexes has a doc comment (typedoc --emit none, no warning)", () => {
  const run = spawnSync(process.execPath, [`${root}node_modules/typedoc/bin/typedoc`, "--emit", "none", "--logLevel", "Warn"], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" }
  })
  const output = `${run.stdout}${run.stderr}`
  expect(output.split("\n").filter((line) => /\[(warning|error)\]/.test(line))).toEqual([])
  expect(run.status, output).toBe(0)
}, 120_000)
