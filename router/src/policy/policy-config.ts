import { ConfigError } from '../common/config-error';
import { describeValue } from '../common/describe-value';
import { optionRule, optionValueValid, type PolicyDeps, type PolicyOptionValue } from './policy-definition';
import { POLICY_NAMES, policyDefinition, type PolicyName } from './policy-registry';

export type { PolicyDeps } from './policy-definition';
export {
  PREFIX_LENGTH_RANGE,
  CONCURRENCY_THRESHOLD_RANGE,
  DEFAULT_PREFIX_LENGTH,
  DEFAULT_CONCURRENCY_THRESHOLD,
} from './sagemaker-prefix-aware-policy';

/**
 * A policy and its options: `{ name, ...options }`, e.g. `{ name: 'sagemaker-prefix-aware', prefixLength: 2048 }`.
 * Which options a policy takes, their types, ranges and defaults come from its definition in the registry;
 * omitted options take their defaults.
 */
export interface PolicyConfig {
  readonly name: PolicyName;
  readonly [option: string]: PolicyOptionValue | undefined;
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

// One home for how a bad value is shown in error messages (common/), used by the policy, config and container checks.
export { describeValue };

/** Thrown by createPolicy: every problem at once, one per line. */
export class PolicyConfigError extends ConfigError {
  constructor(readonly optionProblems: readonly OptionProblem[]) {
    super(
      optionProblems.map((p) => formatProblem(p)),
      'invalid routing policy configuration',
    );
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

/** Every problem in a policy configuration, checked against the policy's schema; `prefix` is prepended to option names (e.g. 'policy.'). */
export function policyConfigProblems(config: unknown, prefix = ''): OptionProblem[] {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    return [
      { option: prefix ? prefix.replace(/\.$/, '') : 'policy', rule: 'must be an object with a name', got: config },
    ];
  }
  const record = config as Record<string, unknown>;
  const definition = typeof record.name === 'string' ? policyDefinition(record.name) : undefined;
  if (definition === undefined) {
    return [{ option: `${prefix}name`, rule: `must be one of ${POLICY_NAMES.join(', ')}`, got: record.name }];
  }
  const problems: OptionProblem[] = [];
  for (const key of Object.keys(record)) {
    if (key === 'name' || record[key] === undefined) continue;
    const option = definition.options.find((o) => o.name === key);
    if (option === undefined) {
      const known = definition.options.map((o) => o.name);
      const hint = known.length === 0 ? '' : ` (its options: ${known.join(', ')})`;
      problems.push({
        option: `${prefix}${key}`,
        rule: `is not an option of policy ${definition.name}${hint}`,
        got: record[key],
      });
    } else if (!optionValueValid(option, record[key])) {
      problems.push({ option: `${prefix}${key}`, rule: optionRule(option), got: record[key] });
    }
  }
  return problems;
}

/** The config with every option of the policy's schema present (defaults filled in). Assumes a valid config. */
export function resolvedPolicyOptions(config: PolicyConfig): Record<string, PolicyOptionValue> {
  const definition = policyDefinition(config.name)!;
  const options: Record<string, PolicyOptionValue> = {};
  for (const o of definition.options) options[o.name] = config[o.name] ?? o.default;
  return options;
}

/** Builds a policy. Throws PolicyConfigError naming every invalid option. The live router and the simulator both build policies here. */
export function createPolicyFromConfig(config: PolicyConfig, deps: PolicyDeps) {
  const problems = policyConfigProblems(config);
  if (problems.length > 0) throw new PolicyConfigError(problems);
  return policyDefinition(config.name)!.create(resolvedPolicyOptions(config), deps);
}

/** The options a config sets (name and unset options left out), as a report's StrategyId records them. */
export function policyOptionsOf(config: PolicyConfig): Record<string, PolicyOptionValue> {
  const options: Record<string, PolicyOptionValue> = {};
  for (const [key, value] of Object.entries(config)) if (key !== 'name' && value !== undefined) options[key] = value;
  return options;
}
