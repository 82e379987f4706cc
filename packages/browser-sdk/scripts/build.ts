import { build, OUT_DIR } from "../src/build.ts"

const out = await build()
for (const [name, text] of Object.entries(out)) console.log(`${OUT_DIR}/${name}: ${Buffer.byteLength(text)} bytes`)
