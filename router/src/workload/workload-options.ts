import { ConfigError } from '../common/config-error';
import { parseDecimalInteger, parseDecimalNumber } from '../common/decimal-text';
/**
 * Declared options of a workload: their types, allowed ranges and defaults. One schema serves the spec string
 * parser (`long-context?groups=600&rate=6`), programmatic callers and the docs, so every path validates the
 * same way: every problem is collected and reported at once, naming the option, its allowed range and the
 * value received. Nothing is clamped.
 */

/** An inclusive integer range, written `min..max` in a spec (a single number `n` means `n..n`). */
export interface IntRange {
  readonly min: number;
  readonly max: number;
}

interface OptionBase {
  readonly description: string;
}

export interface IntOption extends OptionBase {
  readonly type: 'int';
  readonly min: number;
  readonly max: number;
  /** Absent: the option is unset unless given. */
  readonly default?: number;
}

export interface NumberOption extends OptionBase {
  readonly type: 'number';
  /** Exclusive lower bound when `minExclusive`, else inclusive. */
  readonly min: number;
  readonly minExclusive?: boolean;
  readonly max: number;
  readonly default?: number;
}

export interface RangeOption extends OptionBase {
  readonly type: 'range';
  readonly min: number;
  readonly max: number;
  readonly default: IntRange;
}

export interface EnumOption extends OptionBase {
  readonly type: 'enum';
  readonly values: readonly string[];
  readonly default: string;
}

export interface BoolOption extends OptionBase {
  readonly type: 'bool';
  readonly default: boolean;
}

export type OptionSpec = IntOption | NumberOption | RangeOption | EnumOption | BoolOption;
export type OptionSchema = Readonly<Record<string, OptionSpec>>;
export type OptionValue = number | string | boolean | IntRange;

/**
 * An invalid workload spec or options: a ConfigError (`subject` is the heading, "invalid workload long-context").
 * Its message is one line, because it is quoted after the flag that named the workload (`--workload: …`).
 */
export class WorkloadSpecError extends ConfigError {
  constructor(workload: string, problems: readonly string[]) {
    super(problems, `invalid workload ${workload}`);
    this.message = `invalid workload ${workload}: ${problems.join('; ')}`;
    this.name = 'WorkloadSpecError';
  }
}

/** How an option's allowed values read in an error message and in docs. */
export function describeAllowed(spec: OptionSpec): string {
  switch (spec.type) {
    case 'int':
      return `an integer between ${spec.min} and ${spec.max}`;
    case 'number':
      return spec.minExclusive
        ? `a number greater than ${spec.min} and at most ${spec.max}`
        : `a number between ${spec.min} and ${spec.max}`;
    case 'range':
      return `an integer or range min..max within ${spec.min}..${spec.max}`;
    case 'enum':
      return `one of ${spec.values.join(', ')}`;
    case 'bool':
      return 'true or false';
  }
}

/** A value as a spec string writes it. */
export function formatOptionValue(value: OptionValue): string {
  if (typeof value === 'object') return value.min === value.max ? String(value.min) : `${value.min}..${value.max}`;
  return String(value);
}

/** Parse one option's text; returns the value or the problem. */
function parseText(spec: OptionSpec, text: string): OptionValue | undefined {
  switch (spec.type) {
    case 'int':
      return parseDecimalInteger(text);
    case 'number':
      return parseDecimalNumber(text);
    case 'range': {
      const [lo, hi = lo, ...extra] = text
        .split('..')
        .map((part) => (part === '' ? undefined : parseDecimalInteger(part)));
      return lo === undefined || hi === undefined || extra.length > 0 ? undefined : { min: lo, max: hi };
    }
    case 'enum':
      return text;
    case 'bool':
      return text === 'true' ? true : text === 'false' ? false : undefined;
  }
}

/** True when `value` has the option's type and lies in its allowed range. */
function isAllowed(spec: OptionSpec, value: unknown): boolean {
  switch (spec.type) {
    case 'int':
      return typeof value === 'number' && Number.isInteger(value) && value >= spec.min && value <= spec.max;
    case 'number':
      return (
        typeof value === 'number' &&
        Number.isFinite(value) &&
        (spec.minExclusive ? value > spec.min : value >= spec.min) &&
        value <= spec.max
      );
    case 'range': {
      if (typeof value !== 'object' || value === null) return false;
      const { min, max } = value as IntRange;
      return Number.isInteger(min) && Number.isInteger(max) && min >= spec.min && max <= spec.max && min <= max;
    }
    case 'enum':
      return typeof value === 'string' && spec.values.includes(value);
    case 'bool':
      return typeof value === 'boolean';
  }
}

function show(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'object' && value !== null && 'min' in value && 'max' in value)
    return formatOptionValue(value as IntRange);
  return String(value);
}

/**
 * Validate `given` (values, or option texts when `fromText`) against `schema`, fill defaults, and return the
 * resolved options. Throws one WorkloadSpecError listing every problem.
 */
export function resolveOptions(
  subject: string,
  schema: OptionSchema,
  given: Readonly<Record<string, unknown>>,
  fromText: boolean,
): Record<string, OptionValue | undefined> {
  const problems: string[] = [];
  const resolved: Record<string, OptionValue | undefined> = {};
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(schema, name))
      problems.push(`unknown option '${name}' (allowed: ${Object.keys(schema).join(', ')})`);
  }
  for (const [name, spec] of Object.entries(schema)) {
    const raw = Object.hasOwn(given, name) ? given[name] : undefined;
    if (raw === undefined) {
      resolved[name] = spec.default;
      continue;
    }
    const value = fromText && typeof raw === 'string' ? parseText(spec, raw) : raw;
    if (value === undefined || !isAllowed(spec, value)) {
      problems.push(`${name} must be ${describeAllowed(spec)} (got ${show(raw)})`);
      continue;
    }
    resolved[name] = value as OptionValue;
  }
  if (problems.length > 0) throw new WorkloadSpecError(subject, problems);
  return resolved;
}

/** The `key=value&…` part of a spec into a record of texts; duplicate or malformed pairs are problems. */
export function parseQuery(subject: string, query: string): Record<string, string> {
  const options: Record<string, string> = Object.create(null) as Record<string, string>;
  const problems: string[] = [];
  if (query === '') return options;
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) {
      problems.push(`option '${pair}' must be written name=value`);
      continue;
    }
    const name = pair.slice(0, eq);
    let value: string;
    try {
      value = decodeURIComponent(pair.slice(eq + 1));
    } catch {
      problems.push(`option '${name}' has a malformed %-escape`);
      continue;
    }
    if (Object.hasOwn(options, name)) problems.push(`option '${name}' is given twice`);
    options[name] = value;
  }
  if (problems.length > 0) throw new WorkloadSpecError(subject, problems);
  return options;
}
