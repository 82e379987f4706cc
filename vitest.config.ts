import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts"],
    // Generous: the CLI tests spawn processes that join PostgreSQL, slow on a loaded 2-core runner.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The PostgreSQL suites share one embedded server per worker; two cores.
    maxWorkers: 2
  }
})
