import { ConfigError } from '../common/config-error';
import { parseDecimalInteger, parseDecimalNumber } from '../common/decimal-text';
import { ProfileError, resolveProfile, type EngineProfile } from '../emulator/engine-profile';

/**
 * Validation of raw command-line flag strings, shared by every sub-command. Numbers follow the one decimal rule
 * (common/decimal-text: `0x10` or `1e3` is not an integer); every message names the flag and the allowed range,
 * so a typo stops the command before it starts anything. Failures are ConfigErrors.
 */

/** An allowed interval: [min, max], or (min, max] when `minExclusive`. */
export interface FlagRange {
  readonly min: number;
  readonly max: number;
  readonly minExclusive?: boolean;
}

function intervalText(range: FlagRange): string {
  return range.minExclusive
    ? `greater than ${range.min} and at most ${range.max}`
    : `between ${range.min} and ${range.max}`;
}

function inRange(value: number, range: FlagRange): boolean {
  return (range.minExclusive ? value > range.min : value >= range.min) && value <= range.max;
}

/** A decimal integer in [min, max]. */
export function integerFlag(flag: string, raw: string | undefined, min: number, max: number): number {
  const value = raw === undefined ? undefined : parseDecimalInteger(raw);
  if (value === undefined || !inRange(value, { min, max })) {
    throw new ConfigError([
      `--${flag} must be an integer ${intervalText({ min, max })} (got ${JSON.stringify(raw ?? '')})`,
    ]);
  }
  return value;
}

/** A decimal number in (min, max] when `minExclusive`, else [min, max]. */
export function numberFlag(
  flag: string,
  raw: string | undefined,
  min: number,
  max: number,
  minExclusive = false,
): number {
  const value = raw === undefined ? undefined : parseDecimalNumber(raw);
  const range = { min, max, minExclusive };
  if (value === undefined || !inRange(value, range)) {
    throw new ConfigError([`--${flag} must be a number ${intervalText(range)} (got ${JSON.stringify(raw ?? '')})`]);
  }
  return value;
}

export function optionalIntegerFlag(
  flag: string,
  raw: string | undefined,
  min: number,
  max: number,
): number | undefined {
  return raw === undefined ? undefined : integerFlag(flag, raw, min, max);
}

export function optionalNumberFlag(
  flag: string,
  raw: string | undefined,
  min: number,
  max: number,
  minExclusive = false,
): number | undefined {
  return raw === undefined ? undefined : numberFlag(flag, raw, min, max, minExclusive);
}

/**
 * Collects every flag problem of a command instead of stopping at the first, so one run of the command lists
 * all of them: `check(() => integerFlag(…))` returns the value, or undefined after recording the problem.
 */
export class FlagProblems {
  private readonly found: string[] = [];

  get problems(): readonly string[] {
    return this.found;
  }

  add(problem: string): void {
    this.found.push(problem);
  }

  check<T>(parse: () => T): T | undefined {
    try {
      return parse();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.found.push(...err.problems);
      return undefined;
    }
  }

  /** Throws one ConfigError listing every problem, when there is any. */
  throwIfAny(): void {
    if (this.found.length > 0) throw new ConfigError(this.found);
  }
}

/** Collects a repeatable flag's values (commander `argParser` for variadic repeats). */
/**
 * A flag's value as the text the user typed, or undefined when absent. The flag parser yields strings, booleans and
 * string arrays (repeatable flags), which String() writes as typed (arrays comma-joined).
 */
export function textFlag(flags: Record<string, unknown>, key: string): string | undefined {
  const value = flags[key] as string | boolean | readonly string[] | undefined;
  return value === undefined ? undefined : String(value);
}

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * The specs of a repeatable policy flag (`--policy`), or undefined when it was not given. Each value is one policy:
 * a comma in a name (`--policy random,cache-aware`) is refused with the form that works, since policy names never
 * hold one and the per-name error ("must name a policy") would not say what to type instead. Commas after `?` are
 * option values, left to the policy parser.
 */
export function policyFlagSpecs(raw: unknown, flag = 'policy'): string[] | undefined {
  if (raw === undefined) return undefined;
  const specs = (Array.isArray(raw) ? raw : [raw]).map(String);
  const problems = specs
    .filter((spec) => spec.split('?', 1)[0].includes(','))
    .map((spec) => {
      const names = spec
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== '');
      return `--${flag} takes one policy per flag (got ${JSON.stringify(spec)}): repeat --${flag} for each policy (${names.map((name) => `--${flag} ${name}`).join(' ')})`;
    });
  if (problems.length > 0) throw new ConfigError(problems);
  return specs;
}

/**
 * Where reports go without `--out`, relative to the current directory. Named for the tool, so that run from a
 * project's root (a CDK app, say) it reads as generated output, not as the project's own `reports/`, and one
 * `.gitignore` line keeps it out of the project's history.
 */
export const REPORTS_DIRECTORY = 'prefix-router-reports';

/** `prefix-router-reports/<command>-<UTC timestamp>`: a fresh directory per run that sorts by time. */
export function defaultReportDir(command: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[:.]/g, '-')
    .replace(/-\d{3}Z$/, 'Z');
  return `${REPORTS_DIRECTORY}/${command}-${stamp}`;
}

/** `N` or `MIN..MAX` (numbers within [min, max], MIN ≤ MAX) as a range; a single number is a range of one value. */
export function numberRangeFlag(flag: string, raw: string, min: number, max: number): { min: number; max: number } {
  const parts = raw.split('..');
  const bad = () =>
    new ConfigError([
      `--${flag} must be a number or a range MIN..MAX, each between ${min} and ${max}, MIN ≤ MAX (got ${JSON.stringify(raw)})`,
    ]);
  if (parts.length > 2) throw bad();
  const values = parts.map((p) => parseDecimalNumber(p));
  if (values.some((v) => v === undefined || v < min || v > max)) throw bad();
  const [lo, hi = lo] = values as [number, number?];
  if (lo > hi) throw bad();
  return { min: lo, max: hi };
}

/**
 * `--instances`: a fleet as `N` (N instances of `defaultProfile`) or as groups `COUNT[:PROFILE]` joined by commas,
 * e.g. `5:p5-llama-3.1-70b,2:p4d-llama-3.1-70b` (a mixed fleet, instances in that order); a group without a profile
 * takes `defaultProfile` (the command's --profile). PROFILE is a built-in name or a .json file (resolveProfile).
 * Returns one profile per instance. Every instance must use one KV block size: prompts are hashed once for the fleet.
 */
export function fleetFlag(
  flag: string,
  raw: string,
  range: { readonly min: number; readonly max: number },
  defaultProfile: () => EngineProfile,
): EngineProfile[] {
  const form = `N or COUNT:PROFILE groups joined by commas (e.g. 5:p5-llama-3.1-70b,2:p4d-llama-3.1-70b), counts integers, ${range.min}–${range.max} instances in all`;
  const groups = raw.split(',').map((group) => {
    const colon = group.indexOf(':');
    const countText = colon < 0 ? group : group.slice(0, colon);
    const profileText = colon < 0 ? undefined : group.slice(colon + 1).trim();
    return { count: parseDecimalInteger(countText.trim()), profileText };
  });
  if (groups.some((g) => g.count === undefined || g.count < 1 || g.profileText === ''))
    throw new ConfigError([`--${flag} must be ${form} (got ${JSON.stringify(raw)})`]);
  const total = groups.reduce((sum, g) => sum + g.count!, 0);
  if (total < range.min || total > range.max)
    throw new ConfigError([`--${flag} must be ${form} (got ${JSON.stringify(raw)}: ${total} instances)`]);
  const fleet: EngineProfile[] = [];
  for (const g of groups) {
    const profile = g.profileText === undefined ? defaultProfile() : profileFlag(flag, g.profileText);
    for (let i = 0; i < g.count!; i++) fleet.push(profile);
  }
  const blockSizes = [...new Set(fleet.map((p) => p.blockTokens))];
  if (blockSizes.length > 1)
    throw new ConfigError([
      `--${flag}: every profile must have the same blockTokens (got ${fleet
        .map((p) => `${p.name} ${p.blockTokens}`)
        .filter((v, i, a) => a.indexOf(v) === i)
        .join(', ')})`,
    ]);
  return fleet;
}

/** `--profile`: a built-in profile name or a .json file; a bad one is a ConfigError naming the flag. */
export function profileFlag(flag: string, raw: string): EngineProfile {
  try {
    return resolveProfile(raw);
  } catch (err) {
    if (!(err instanceof ProfileError)) throw err;
    throw new ConfigError([`--${flag}: ${err.message}`]);
  }
}
