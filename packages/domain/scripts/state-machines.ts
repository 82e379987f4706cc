/** Writes docs/state-machines.md from the domain's transition tables. */
import { writeFileSync } from "node:fs"
import { render } from "../src/StateMachines.ts"

const target = new URL("../../../docs/state-machines.md", import.meta.url)
writeFileSync(target, render())
console.log(`wrote ${target.pathname}`)
