/**
 * The one rule for numbers a user types (flags, PREFIX_ROUTER_* and container variables, config and spec text):
 * plain decimal only. `Number()` alone would also take `0x10`, `0o7`, `0b1`, `Infinity` and `''` (as 0), so a
 * typo would silently become a different value; every parser of user text goes through these two functions.
 */
/** An optional sign and decimal digits: `8080`, `-1`, `+3`. No exponent, no fraction, no radix prefix. */
export const DECIMAL_INTEGER_TEXT = /^[+-]?\d+$/;
/** An optional sign, decimal digits with an optional fraction and a decimal exponent: `0.5`, `.5`, `1e3`. */
export const DECIMAL_NUMBER_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** The integer `text` spells (surrounding spaces allowed), or undefined when it is not a decimal integer. */
export function parseDecimalInteger(text: string): number | undefined {
  const t = text.trim();
  if (!DECIMAL_INTEGER_TEXT.test(t)) return undefined;
  const value = Number(t);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** The finite number `text` spells (surrounding spaces allowed), or undefined when it is not a decimal number. */
export function parseDecimalNumber(text: string): number | undefined {
  const t = text.trim();
  if (!DECIMAL_NUMBER_TEXT.test(t)) return undefined;
  const value = Number(t);
  return Number.isFinite(value) ? value : undefined;
}
