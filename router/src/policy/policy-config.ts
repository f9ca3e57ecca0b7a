import type { Rng } from '../common/seeded-rng';
import { POLICY_NAMES, type PolicyName } from './routing-policy';

/** SageMaker's allowed ranges (PrefixAwareRoutingConfig in the SageMaker API reference). */
export const PREFIX_LENGTH_RANGE = { min: 1024, max: 65536 } as const;
export const CONCURRENCY_THRESHOLD_RANGE = { min: 1, max: 1024 } as const;

/**
 * Our defaults, the same as the construct's `RoutingStrategy.prefixAware()` (docs/construct.md explains them).
 * SageMaker has none: both fields are required with PREFIX_AWARE. 8192 characters (~2,048 tokens) cover a shared
 * system prompt plus the start of each conversation; 32 in-flight requests keep a hot instance's prefill queue
 * short before spilling.
 */
export const DEFAULT_PREFIX_LENGTH = 8192;
export const DEFAULT_CONCURRENCY_THRESHOLD = 32;

export interface SageMakerPrefixAwareConfig {
  readonly name: 'sagemaker-prefix-aware';
  /** Characters (OpenAI path) or bytes (InvokeEndpoint path) of the request that form the key. @default 8192 */
  readonly prefixLength?: number;
  /** In-flight requests on the affinity instance at which a request spills elsewhere. @default 32 */
  readonly concurrencyThreshold?: number;
}

export interface LeastOutstandingRequestsConfig {
  readonly name: 'least-outstanding-requests';
}

export interface RandomConfig {
  readonly name: 'random';
}

export interface RoundRobinConfig {
  readonly name: 'round-robin';
}

/** A policy and its options, discriminated by `name`. */
export type PolicyConfig = SageMakerPrefixAwareConfig | LeastOutstandingRequestsConfig | RandomConfig | RoundRobinConfig;

/** What a policy may depend on: only injected, deterministic things. */
export interface PolicyDeps {
  readonly rng: Rng;
}

/** One invalid option: `option` names it the way the caller spelled it (a property path). */
export interface OptionProblem {
  readonly option: string;
  /** The rule, e.g. 'must be an integer between 1024 and 65536'. */
  readonly rule: string;
  readonly got: unknown;
}

export function formatProblem(problem: OptionProblem, optionLabel: string = problem.option): string {
  return `${optionLabel} ${problem.rule} (got ${describeValue(problem.got)})`;
}

export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === undefined) return 'nothing';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  try {
    const json = JSON.stringify(value);
    return json.length > 80 ? `${json.slice(0, 77)}...` : json;
  } catch {
    return typeof value;
  }
}

/** Thrown by createPolicy: every problem at once, one per line. */
export class PolicyConfigError extends Error {
  constructor(readonly problems: readonly OptionProblem[]) {
    super(`invalid routing policy configuration:\n  ${problems.map((p) => formatProblem(p)).join('\n  ')}`);
    this.name = 'PolicyConfigError';
  }
}

export function integerInRangeProblem(
  option: string,
  value: unknown,
  range: { readonly min: number; readonly max: number },
): OptionProblem | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= range.min && value <= range.max) {
    return undefined;
  }
  return { option, rule: `must be an integer between ${range.min} and ${range.max}`, got: value };
}

export function isPolicyName(value: unknown): value is PolicyName {
  return typeof value === 'string' && (POLICY_NAMES as readonly string[]).includes(value);
}

/** Every problem in a policy configuration; `prefix` is prepended to option names (e.g. 'policy.'). */
export function policyConfigProblems(config: unknown, prefix = ''): OptionProblem[] {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    return [{ option: prefix ? prefix.replace(/\.$/, '') : 'policy', rule: 'must be an object with a name', got: config }];
  }
  const record = config as Record<string, unknown>;
  if (!isPolicyName(record.name)) {
    return [{ option: `${prefix}name`, rule: `must be one of ${POLICY_NAMES.join(', ')}`, got: record.name }];
  }
  const problems: OptionProblem[] = [];
  const allowed = record.name === 'sagemaker-prefix-aware' ? ['name', 'prefixLength', 'concurrencyThreshold'] : ['name'];
  for (const key of Object.keys(record)) {
    if (!allowed.includes(key) && record[key] !== undefined) {
      problems.push({ option: `${prefix}${key}`, rule: `is not an option of policy ${record.name}`, got: record[key] });
    }
  }
  if (record.name === 'sagemaker-prefix-aware') {
    if (record.prefixLength !== undefined) {
      const p = integerInRangeProblem(`${prefix}prefixLength`, record.prefixLength, PREFIX_LENGTH_RANGE);
      if (p) problems.push(p);
    }
    if (record.concurrencyThreshold !== undefined) {
      const p = integerInRangeProblem(`${prefix}concurrencyThreshold`, record.concurrencyThreshold, CONCURRENCY_THRESHOLD_RANGE);
      if (p) problems.push(p);
    }
  }
  return problems;
}
