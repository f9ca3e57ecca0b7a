/**
 * Validation of raw command-line flag strings. Every message names the flag and the allowed range, so a typo
 * stops the command before it starts anything.
 */
export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

export function integerFlag(flag: string, raw: string | undefined, min: number, max: number): number {
  const value = Number(raw);
  if (raw === undefined || raw.trim() === '' || !Number.isInteger(value) || value < min || value > max) {
    throw new FlagError(`--${flag} must be an integer between ${min} and ${max} (got ${JSON.stringify(raw ?? '')})`);
  }
  return value;
}

/** A number in (min, max] when `minExclusive`, else [min, max]. */
export function numberFlag(flag: string, raw: string | undefined, min: number, max: number, minExclusive = false): number {
  const value = Number(raw);
  const low = minExclusive ? value > min : value >= min;
  if (raw === undefined || raw.trim() === '' || !Number.isFinite(value) || !low || value > max) {
    const range = minExclusive ? `greater than ${min} and at most ${max}` : `between ${min} and ${max}`;
    throw new FlagError(`--${flag} must be a number ${range} (got ${JSON.stringify(raw ?? '')})`);
  }
  return value;
}

export function optionalIntegerFlag(flag: string, raw: string | undefined, min: number, max: number): number | undefined {
  return raw === undefined ? undefined : integerFlag(flag, raw, min, max);
}

export function optionalNumberFlag(flag: string, raw: string | undefined, min: number, max: number, minExclusive = false): number | undefined {
  return raw === undefined ? undefined : numberFlag(flag, raw, min, max, minExclusive);
}

/** Collects a repeatable flag's values (commander `argParser` for variadic repeats). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** `reports/<command>-<UTC timestamp>`: a fresh directory per run that sorts by time. */
export function defaultReportDir(command: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z');
  return `reports/${command}-${stamp}`;
}

/** `N` or `MIN..MAX` (numbers within [min, max], MIN ≤ MAX) as a range; a single number is a range of one value. */
export function numberRangeFlag(flag: string, raw: string, min: number, max: number): { min: number; max: number } {
  const parts = raw.split('..');
  const bad = () => new FlagError(`--${flag} must be a number or a range MIN..MAX, each between ${min} and ${max}, MIN ≤ MAX (got ${JSON.stringify(raw)})`);
  if (parts.length > 2) throw bad();
  const values = parts.map((p) => (p.trim() === '' ? NaN : Number(p)));
  if (values.some((v) => !Number.isFinite(v) || v < min || v > max)) throw bad();
  const [lo, hi = lo] = values as [number, number?];
  if (lo > hi!) throw bad();
  return { min: lo, max: hi! };
}
