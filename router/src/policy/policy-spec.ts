import { optionValueFromText } from './policy-definition';
import { PolicyConfigError, policyConfigProblems, type OptionProblem, type PolicyConfig } from './policy-config';
import { POLICY_NAMES, policyDefinition } from './policy-registry';

/**
 * A policy written on one line, for command lines and environment variables: `random`,
 * `sagemaker-prefix-aware`, or with options in the workload-spec style,
 * `sagemaker-prefix-aware?prefixLength=2048&concurrencyThreshold=8`. Values are converted by the option's
 * schema (numbers for numeric options). Throws PolicyConfigError naming every invalid part.
 */
export function parsePolicySpec(spec: string, label = '--policy'): PolicyConfig {
  const { config, problems } = readPolicySpec(spec, label);
  if (problems.length > 0) throw new PolicyConfigError(problems);
  return config;
}

/** parsePolicySpec without throwing: the config as far as it could be read, and what is wrong with it. */
export function readPolicySpec(spec: string, label = '--policy'): { config: PolicyConfig; problems: OptionProblem[] } {
  const [name, query = ''] = spec.trim().split('?', 2);
  const definition = policyDefinition(name);
  if (definition === undefined) {
    return {
      config: { name } as PolicyConfig,
      problems: [{ option: label, rule: `must name a policy: one of ${POLICY_NAMES.join(', ')}`, got: spec }],
    };
  }
  const config: Record<string, unknown> = { name };
  const problems: OptionProblem[] = [];
  for (const pair of query.split('&').filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    const raw = eq < 0 ? '' : decodeURIComponent(pair.slice(eq + 1));
    const option = definition.options.find((o) => o.name === key);
    config[key] = option === undefined ? raw : optionValueFromText(option, raw);
  }
  for (const p of policyConfigProblems(config)) problems.push({ ...p, option: `${label} ${name} option ${p.option}` });
  return { config: config as PolicyConfig, problems };
}

/** The canonical one-line form of a config (inverse of parsePolicySpec). */
export function formatPolicySpec(config: PolicyConfig): string {
  const { name, ...options } = config;
  const pairs = Object.entries(options)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`);
  return pairs.length === 0 ? name : `${name}?${pairs.join('&')}`;
}

/**
 * Expands a sweep spec: every option may list values separated by commas, and the result is their grid, e.g.
 * `sagemaker-prefix-aware?prefixLength=1024,4096&concurrencyThreshold=8,32` → four configs. Each is validated.
 */
export function expandPolicySweep(spec: string, label = '--sweep'): PolicyConfig[] {
  const [name, query = ''] = spec.trim().split('?', 2);
  const axes: Array<{ key: string; values: string[] }> = [];
  for (const pair of query.split('&').filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    const values = (eq < 0 ? '' : pair.slice(eq + 1)).split(',').map((v) => v.trim());
    axes.push({ key, values });
  }
  let specs = [name];
  for (const axis of axes) {
    specs = specs.flatMap((s) => axis.values.map((v) => `${s}${s.includes('?') ? '&' : '?'}${axis.key}=${v}`));
  }
  const problems: OptionProblem[] = [];
  const configs: PolicyConfig[] = [];
  for (const s of specs) {
    const read = readPolicySpec(s, label);
    if (read.problems.length > 0)
      problems.push(...read.problems.filter((p) => !problems.some((q) => q.option === p.option && q.got === p.got)));
    else configs.push(read.config);
  }
  if (problems.length > 0) throw new PolicyConfigError(problems);
  return configs;
}
