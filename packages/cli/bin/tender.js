#!/usr/bin/env node
// The CLI is TypeScript run as is: Node 22.18+ strips the types on load, so there is no build step.
// The import is dynamic so that an older Node reaches this check instead of failing to load a .ts file.
const [major, minor] = process.versions.node.split(".").map(Number)
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(`tender needs Node 22.18 or later, this is ${process.version}: run it as \`npx tender\` in the repository.`)
  process.exit(1)
}
await import("../src/main.ts")
