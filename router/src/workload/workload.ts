import type { LoadShape } from './load-shape';
import { formatOptionValue, type IntRange, type OptionSchema, type OptionValue } from './workload-options';
import type { WorkloadRequest } from './workload-request';

export type WorkloadKind = 'long-context' | 'short-chat' | 'shared-system' | 'trace';

export const WORKLOAD_KINDS: readonly WorkloadKind[] = ['long-context', 'short-chat', 'shared-system', 'trace'];

/**
 * A workload: a deterministic, lazy sequence of requests plus how to send them. `requests()` starts a fresh
 * pass each time and yields the same requests in the same order on every call and every machine; it never
 * holds more than the requests in progress (an hour of 8k-token prompts would be gigabytes of text).
 */
export interface Workload {
  readonly kind: WorkloadKind;
  /** Canonical spec string with every option explicit; `parseWorkloadSpec(spec)` rebuilds this workload. */
  readonly spec: string;
  /** Resolved options, as the report shows them. */
  readonly parameters: Readonly<Record<string, string | number | boolean>>;
  readonly load: LoadShape;
  /** Requests the workload will yield: exact when `expectedRequestsExact`, else an estimate (Poisson). */
  readonly expectedRequests: number;
  readonly expectedRequestsExact: boolean;
  /** One line for humans, e.g. "550 groups × 7000 shared + 900–1100 unique tokens, uniform group popularity". */
  readonly description: string;
  /** Things a reader of the report must know, e.g. trace lines skipped on request. */
  readonly notes: readonly string[];
  requests(): Generator<WorkloadRequest, void, undefined>;
}

/** Options every synthetic workload takes. */
export const COMMON_OPTIONS = {
  seed: {
    type: 'int',
    min: 0,
    max: 4294967295,
    default: 1,
    description: 'seed of every random choice (text, groups, arrivals)',
  },
  rate: {
    type: 'number',
    min: 0,
    minExclusive: true,
    max: 100000,
    default: 6,
    description: 'mean arrival rate, requests per second (Poisson)',
  },
  duration: {
    type: 'number',
    min: 0,
    minExclusive: true,
    max: 604800,
    default: 3600,
    description: 'arrivals stop after this many seconds',
  },
  count: {
    type: 'int',
    min: 1,
    max: 100000000,
    description: 'stop after this many requests (default: no limit but duration)',
  },
  concurrency: {
    type: 'int',
    min: 1,
    max: 100000,
    description:
      'closed loop: keep this many requests in flight (default: open loop at rate); rate × duration then only sizes and orders the workload',
  },
} as const satisfies OptionSchema;

/** The load shape the common options describe. */
export function loadFromOptions(options: Record<string, OptionValue | undefined>): LoadShape {
  const concurrency = options.concurrency as number | undefined;
  if (concurrency !== undefined) return { mode: 'closed', concurrency };
  return { mode: 'open-poisson', ratePerSecond: options.rate as number };
}

/** `kind?name=value&…` with every resolved option, in schema order; unset options are left out. */
export function canonicalSpec(
  head: string,
  schema: OptionSchema,
  options: Record<string, OptionValue | undefined>,
): string {
  const pairs: string[] = [];
  for (const name of Object.keys(schema)) {
    const value = options[name];
    if (value !== undefined) pairs.push(`${name}=${encodeURIComponent(formatOptionValue(value))}`);
  }
  return pairs.length === 0 ? head : `${head}?${pairs.join('&')}`;
}

/** Resolved options as report parameters (ranges as `min..max`, unset options left out). */
export function parametersOf(
  options: Record<string, OptionValue | undefined>,
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue;
    out[name] = typeof value === 'object' ? formatOptionValue(value) : value;
  }
  return out;
}

/** Uniform integer in an inclusive range. */
export function drawInRange(next: () => number, range: IntRange): number {
  return range.min + Math.floor(next() * (range.max - range.min + 1));
}

/** Stop rule shared by open-loop synthetic workloads: the count, or the first arrival at or past the duration. */
export function withinLimits(
  index: number,
  arrivalMs: number,
  options: Record<string, OptionValue | undefined>,
): boolean {
  const count = options.count as number | undefined;
  if (count !== undefined && index >= count) return false;
  return arrivalMs < (options.duration as number) * 1000;
}

/** Requests a Poisson workload is expected to yield. */
export function expectedPoissonCount(options: Record<string, OptionValue | undefined>): {
  count: number;
  exact: boolean;
} {
  const estimate = Math.round((options.rate as number) * (options.duration as number));
  const count = options.count as number | undefined;
  return { count: count === undefined ? estimate : Math.min(count, estimate), exact: false };
}

/** Zero-padded request id, e.g. `lc-000042`. */
export function requestId(prefix: string, index: number): string {
  return `${prefix}-${String(index).padStart(6, '0')}`;
}
