/**
 * Appearance variables (spec, Browser SDK "Appearance"): each accepted value becomes a CSS custom
 * property of the fields page; an invalid one is dropped so the stock value stays. Validated inside
 * the iframe, the only place the values are applied, so a merchant page cannot inject CSS.
 * `url()`, `var()` and `calc()` never pass: every pattern below is a closed grammar without them.
 */

export type VariableName =
  | "fontFamily" | "fontSize" | "labelFontSize" | "labelFontWeight"
  | "colorText" | "colorLabel" | "colorPlaceholder" | "colorBackground" | "colorBorder" | "colorPrimary" | "colorDanger"
  | "borderRadius" | "borderWidth" | "inputPadding" | "rowGap"

const LENGTH = String.raw`(?:0|\d{1,4}(?:\.\d{1,3})?(?:px|rem|em|%))`
const oneLength = new RegExp(`^${LENGTH}$`)
const oneToFourLengths = new RegExp(`^${LENGTH}(?: ${LENGTH}){0,3}$`)
const fontSizeLength = /^\d{1,4}(?:\.\d{1,3})?(?:px|rem|em|%)$/
const fontStack = /^[A-Za-z0-9 ,'"-]{1,200}$/

const NUMBER = String.raw`\s*-?\d{1,3}(?:\.\d{1,3})?%?\s*`
const ALPHA = String.raw`(?:\s*[,/]\s*(?:0|1|0?\.\d{1,3}|\d{1,3}%))?`
const hexColour = /^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/
const rgbColour = new RegExp(`^rgba?\\(${NUMBER}(?:,${NUMBER},${NUMBER}|\\s${NUMBER}\\s${NUMBER})${ALPHA}\\)$`)
const hslColour = new RegExp(`^hsla?\\(${NUMBER}(?:deg)?(?:,${NUMBER},${NUMBER}|\\s${NUMBER}\\s${NUMBER})${ALPHA}\\)$`)

/** CSS Color Module named colours (plus transparent). */
const NAMED_COLOURS = new Set(
  ("aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet brown burlywood " +
    "cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue darkcyan darkgoldenrod darkgray " +
    "darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen " +
    "darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue dimgray dimgrey dodgerblue " +
    "firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite gold goldenrod gray green greenyellow grey honeydew " +
    "hotpink indianred indigo ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan " +
    "lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen lightskyblue lightslategray " +
    "lightslategrey lightsteelblue lightyellow lime limegreen linen magenta maroon mediumaquamarine mediumblue " +
    "mediumorchid mediumpurple mediumseagreen mediumslateblue mediumspringgreen mediumturquoise mediumvioletred " +
    "midnightblue mintcream mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid " +
    "palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum powderblue purple " +
    "rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown seagreen seashell sienna silver skyblue slateblue " +
    "slategray slategrey snow springgreen steelblue tan teal thistle tomato turquoise violet wheat white whitesmoke " +
    "yellow yellowgreen transparent").split(" ")
)

const isColour = (value: string) =>
  hexColour.test(value) || rgbColour.test(value) || hslColour.test(value) || NAMED_COLOURS.has(value.toLowerCase())

const isWeight = (value: string) => {
  if (value === "normal" || value === "bold") return true
  if (!/^\d{3}$/.test(value)) return false
  const weight = Number(value)
  return weight >= 100 && weight <= 900
}

const RULES: Record<VariableName, (value: string) => boolean> = {
  fontFamily: (v) => fontStack.test(v),
  fontSize: (v) => fontSizeLength.test(v),
  labelFontSize: (v) => fontSizeLength.test(v),
  labelFontWeight: isWeight,
  colorText: isColour,
  colorLabel: isColour,
  colorPlaceholder: isColour,
  colorBackground: isColour,
  colorBorder: isColour,
  colorPrimary: isColour,
  colorDanger: isColour,
  borderRadius: (v) => oneLength.test(v),
  borderWidth: (v) => oneLength.test(v),
  inputPadding: (v) => oneToFourLengths.test(v),
  rowGap: (v) => oneToFourLengths.test(v)
}

export const VARIABLE_NAMES = Object.keys(RULES) as ReadonlyArray<VariableName>

/** Belt and braces over the closed grammars: these functions never reach a stylesheet. */
const FORBIDDEN = /(url|var|calc|expression|image|attr|env)\s*\(|[;{}\\<>]/i

/**
 * The accepted variables of `appearance` (anything else, unknown keys and non-objects included, is
 * ignored). The result is the whole appearance: omitted variables fall back to the stock look.
 */
export const validateAppearance = (appearance: unknown): Partial<Record<VariableName, string>> => {
  const accepted: Partial<Record<VariableName, string>> = {}
  if (typeof appearance !== "object" || appearance === null) return accepted
  const variables = (appearance as { variables?: unknown }).variables
  if (typeof variables !== "object" || variables === null) return accepted
  for (const name of VARIABLE_NAMES) {
    const raw = (variables as Record<string, unknown>)[name]
    const value = typeof raw === "number" && name === "labelFontWeight" ? String(raw) : raw
    if (typeof value !== "string") continue
    const trimmed = value.trim()
    if (trimmed.length === 0 || trimmed.length > 200 || FORBIDDEN.test(trimmed)) continue
    if (RULES[name](trimmed)) accepted[name] = trimmed
  }
  return accepted
}

/** The CSS custom property a variable sets on the fields page (`colorText` → `--tender-color-text`). */
export const cssProperty = (name: VariableName): string =>
  `--tender-${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
