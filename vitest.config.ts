import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts"],
    // One PostgreSQL for the run, migrated once into a template; a database per test file (PgTestDatabase.ts).
    globalSetup: ["packages/adapters/test/PgTestServer.ts"],
    // Generous: the CLI tests spawn processes that join PostgreSQL, slow on a loaded 2-core runner.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores.
    maxWorkers: 2
  }
})
