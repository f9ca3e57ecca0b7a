import { PolicyConfigError, isPolicyName, policyConfigProblems, type OptionProblem, type PolicyConfig } from './policy-config';
import { POLICY_NAMES } from './routing-policy';

/**
 * A policy written on one line, for command lines: `random`, `sagemaker-prefix-aware`, or with options in the
 * workload-spec style, `sagemaker-prefix-aware?prefixLength=2048&concurrencyThreshold=8`. Options are integers.
 * Throws PolicyConfigError naming every invalid part.
 */
export function parsePolicySpec(spec: string, label = '--policy'): PolicyConfig {
  const [name, query = ''] = spec.trim().split('?', 2);
  if (!isPolicyName(name)) {
    throw new PolicyConfigError([{ option: label, rule: `must name a policy: one of ${POLICY_NAMES.join(', ')}`, got: spec }]);
  }
  const config: Record<string, unknown> = { name };
  const problems: OptionProblem[] = [];
  for (const pair of query.split('&').filter((p) => p !== '')) {
    const [key, raw = ''] = pair.split('=', 2);
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value)) {
      problems.push({ option: `${label} ${name} option ${key}`, rule: 'must be a number', got: raw });
      continue;
    }
    config[key] = value;
  }
  for (const p of policyConfigProblems(config)) problems.push({ ...p, option: `${label} ${name} option ${p.option}` });
  if (problems.length > 0) throw new PolicyConfigError(problems);
  return config as unknown as PolicyConfig;
}

/** The canonical one-line form of a config (inverse of parsePolicySpec). */
export function formatPolicySpec(config: PolicyConfig): string {
  const { name, ...options } = config;
  const pairs = Object.entries(options)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${String(v)}`);
  return pairs.length === 0 ? name : `${name}?${pairs.join('&')}`;
}
