/**
 * Stripe's request encoding (application/x-www-form-urlencoded with bracket keys: `a[b][c]=v`,
 * `a[0]=v`, `a[]=v`), decoded into nested plain objects. The fake needs it; the adapter never does
 * (the official SDK encodes).
 */

export type FormValue = string | FormObject | ReadonlyArray<FormValue>
export interface FormObject { [key: string]: FormValue }

/** `a[b][0]` → ["a", "b", "0"]; `a[]` → ["a", ""]. */
const pathOf = (key: string): ReadonlyArray<string> => {
  const open = key.indexOf("[")
  if (open < 0) return [key]
  const parts = [key.slice(0, open)]
  for (const match of key.slice(open).matchAll(/\[([^\]]*)\]/g)) parts.push(match[1]!)
  return parts
}

const isIndex = (part: string) => part === "" || /^\d+$/.test(part)

/** Decodes a form body; repeated scalar keys keep the last value, as Stripe does. */
export const decode = (body: string): FormObject => {
  const root: Record<string, unknown> = {}
  for (const [key, value] of new URLSearchParams(body)) {
    const path = pathOf(key)
    let node: any = root
    path.forEach((part, i) => {
      const last = i === path.length - 1
      const container = Array.isArray(node)
      const slot = container && part === "" ? node.length : part
      if (last) {
        node[slot] = value
        return
      }
      if (node[slot] === undefined) node[slot] = isIndex(path[i + 1]!) ? [] : {}
      node = node[slot]
    })
  }
  return root as FormObject
}

/** Order-independent, so that the idempotency layer compares parameters, not their encoding. */
export const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(",")}]`
    : typeof value === "object" && value !== null
    ? `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as any)[k])}`).join(",")}}`
    : JSON.stringify(value)
