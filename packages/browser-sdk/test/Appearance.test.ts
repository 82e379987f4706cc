import { describe, expect, it } from "vitest"
import { cssProperty, validateAppearance } from "../src/appearance.ts"

const only = (variables: Record<string, unknown>) => validateAppearance({ variables })

describe("appearance variables (spec table)", () => {
  it("accepts each kind of value the table allows", () => {
    // Every variable of the table, each with a value of the form it allows: all kept as given.
    const accepted = {
      fontFamily: `"Helvetica Neue", Arial, sans-serif`,
      fontSize: "16px",
      labelFontSize: "0.875rem",
      labelFontWeight: "bold",
      colorText: "#1a2b3c",
      colorLabel: "rgb(10, 20, 30)",
      colorPlaceholder: "hsl(210 10% 50%)",
      colorBackground: "white",
      colorBorder: "#abc",
      colorPrimary: "rgba(0,0,0,0.5)",
      colorDanger: "RebeccaPurple",
      borderRadius: "4px",
      borderWidth: "0",
      inputPadding: "8px 12px",
      rowGap: "1em 2em 3em 4em"
    }
    expect(only(accepted)).toEqual(accepted)
  })

  it("never accepts url(), var() or calc(), in any variable", () => {
    for (const value of ["url(https://x.example/a.png)", "var(--x)", "calc(1px + 2px)", "URL(x)", "4px calc(2px)"]) {
      expect(only({ colorText: value, fontFamily: value, fontSize: value, borderRadius: value, inputPadding: value })).toEqual({})
    }
  })

  it("ignores values outside each grammar and keeps the valid ones", () => {
    expect(only({
      fontFamily: "Arial; color: red",
      fontSize: "12pt",
      labelFontSize: "12",
      labelFontWeight: "950",
      colorText: "#12345",
      colorLabel: "notacolour",
      borderRadius: "4px 4px",
      inputPadding: "1px 2px 3px 4px 5px",
      rowGap: "10vh",
      colorBackground: "red",
      unknownKey: "red"
    })).toEqual({ colorBackground: "red" })
    expect(only({ labelFontWeight: 600 })).toEqual({ labelFontWeight: "600" })
    expect(only({ labelFontWeight: "50" })).toEqual({})
    expect(only({ colorText: 123 })).toEqual({})
  })

  it("{} and non-objects are the stock look", () => {
    expect(validateAppearance({})).toEqual({})
    expect(validateAppearance(undefined)).toEqual({})
    expect(validateAppearance("red")).toEqual({})
    expect(validateAppearance({ variables: null })).toEqual({})
  })

  it("names the custom property the stylesheet reads", () => {
    expect(cssProperty("colorText")).toBe("--tender-color-text")
    expect(cssProperty("labelFontWeight")).toBe("--tender-label-font-weight")
  })
})
