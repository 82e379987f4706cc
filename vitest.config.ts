import { tmpdir } from "node:os"
import { join } from "node:path"
import { defineConfig } from "vitest/config"

// V8's compiled code cached on disk for the test workers and every process a test starts (`tender
// serve`, CLI commands): each loads the same few hundred modules, and compiling them is a good part of a start.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), "tender-test-compile-cache")

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts"],
    // One PostgreSQL for the run, migrated once into a template; a database per test file (PgTestDatabase.ts).
    // And `tender` bundled once, for the tests that run it as a process (packages/cli/scripts/bundle.ts).
    globalSetup: ["packages/adapters/test/PgTestServer.ts", "packages/cli/test/support/BundleSetup.ts"],
    // Every test server's /v1/ answers are checked against the served OpenAPI document; a file whose
    // servers answered anything it does not describe fails (packages/http/src/testing/ResponseCheck.ts).
    setupFiles: ["packages/http/test/support/ResponseCheckSetup.ts"],
    // Generous: the CLI tests spawn processes that join PostgreSQL, slow on a loaded 2-core runner.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores.
    maxWorkers: 2,
    // A worker's modules are loaded once and serve every file it runs, rather than once per file
    // (import time was 14 % of the run; docs/decisions.md, "Test files share their worker's modules").
    // What a module keeps is therefore kept per file where a file needs its own: the file's database
    // (PgTestDatabase.ts, by the file's path); counters are read as differences.
    isolate: false
  }
})
