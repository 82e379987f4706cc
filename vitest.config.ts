import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // The PostgreSQL suites share one embedded server per worker; two cores.
    maxWorkers: 2
  }
})
