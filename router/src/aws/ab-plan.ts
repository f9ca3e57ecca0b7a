import type { DeploymentConfig, ProductionVariantRoutingConfig } from '@aws-sdk/client-sagemaker';
import { routingLabel, type EndpointFacts } from './endpoint-facts';

/**
 * The plan of a routing A/B on a live endpoint: which routing configurations run, how each switch deploys
 * (rolling where SageMaker allows it, so a switch does not need a second fleet), what it costs, and how long it
 * should take. Built from DescribeEndpoint/DescribeEndpointConfig alone; printed before anything changes.
 */
export class AbPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AbPlanError';
  }
}

export interface AbStrategy {
  readonly label: string;
  readonly routing: ProductionVariantRoutingConfig;
}

export const PREFIX_AWARE_LIMITS = { prefixLength: { min: 1024, max: 65536 }, concurrencyThreshold: { min: 1, max: 1024 } } as const;
/** The construct's defaults (RoutingStrategy.prefixAware()), used when --strategies names PREFIX_AWARE without options and the endpoint has none. */
export const DEFAULT_PREFIX_AWARE = { prefixLength: 8192, concurrencyThreshold: 32 } as const;

const STRATEGIES = ['RANDOM', 'LEAST_OUTSTANDING_REQUESTS', 'PREFIX_AWARE'] as const;

/**
 * Parses `RANDOM,PREFIX_AWARE:prefixLength=N,concurrencyThreshold=N,LEAST_OUTSTANDING_REQUESTS`: commas separate
 * strategies, and a `name=value` item after a `PREFIX_AWARE:` belongs to it. PREFIX_AWARE without options takes
 * the endpoint's current ones, else the construct's defaults.
 */
export function parseAbStrategies(text: string, current?: ProductionVariantRoutingConfig): AbStrategy[] {
  const problems: string[] = [];
  const items = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const parsed: { name: string; options: Record<string, string> }[] = [];
  for (const item of items) {
    if (item.includes('=') && !item.includes(':')) {
      const last = parsed[parsed.length - 1];
      if (last === undefined || last.name !== 'PREFIX_AWARE') {
        problems.push(`--strategies: option '${item}' must follow PREFIX_AWARE: (got it after ${last?.name ?? 'nothing'})`);
        continue;
      }
      const [k, v] = item.split('=');
      last.options[k.trim()] = v.trim();
      continue;
    }
    const colon = item.indexOf(':');
    const name = (colon < 0 ? item : item.slice(0, colon)).trim().toUpperCase();
    const options: Record<string, string> = {};
    if (colon >= 0) {
      const [k, v] = item.slice(colon + 1).split('=');
      if (v === undefined) problems.push(`--strategies: '${item}' must be NAME:option=value`);
      else options[k.trim()] = v.trim();
    }
    if (!(STRATEGIES as readonly string[]).includes(name)) problems.push(`--strategies: '${name}' is not one of ${STRATEGIES.join(', ')}`);
    parsed.push({ name, options });
  }
  const strategies: AbStrategy[] = [];
  for (const { name, options } of parsed) {
    if (name !== 'PREFIX_AWARE') {
      if (Object.keys(options).length > 0) problems.push(`--strategies: ${name} takes no options (got ${Object.keys(options).join(', ')})`);
      strategies.push({ label: name, routing: { RoutingStrategy: name as 'RANDOM' | 'LEAST_OUTSTANDING_REQUESTS' } });
      continue;
    }
    const base = current?.RoutingStrategy === 'PREFIX_AWARE' ? current.PrefixAwareRoutingConfig : undefined;
    const values: Record<string, number> = {
      prefixLength: base?.PrefixLength ?? DEFAULT_PREFIX_AWARE.prefixLength,
      concurrencyThreshold: base?.ConcurrencyThreshold ?? DEFAULT_PREFIX_AWARE.concurrencyThreshold,
    };
    for (const [key, raw] of Object.entries(options)) {
      if (!(key in PREFIX_AWARE_LIMITS)) {
        problems.push(`--strategies: PREFIX_AWARE option '${key}' is not one of prefixLength, concurrencyThreshold`);
        continue;
      }
      const limit = PREFIX_AWARE_LIMITS[key as keyof typeof PREFIX_AWARE_LIMITS];
      const value = Number(raw);
      if (!/^\d+$/.test(raw) || value < limit.min || value > limit.max) {
        problems.push(`--strategies: PREFIX_AWARE ${key} must be an integer between ${limit.min} and ${limit.max} (got ${JSON.stringify(raw)})`);
        continue;
      }
      values[key] = value;
    }
    const routing: ProductionVariantRoutingConfig = {
      RoutingStrategy: 'PREFIX_AWARE',
      PrefixAwareRoutingConfig: { PrefixLength: values.prefixLength, ConcurrencyThreshold: values.concurrencyThreshold },
    };
    strategies.push({ label: routingLabel(routing), routing });
  }
  if (strategies.length === 0 && problems.length === 0) problems.push('--strategies must name at least one of RANDOM, LEAST_OUTSTANDING_REQUESTS, PREFIX_AWARE');
  const labels = strategies.map((s) => s.label);
  const dup = labels.find((l, i) => labels.indexOf(l) !== i);
  if (dup !== undefined) problems.push(`--strategies names ${dup} twice`);
  if (problems.length > 0) throw new AbPlanError(problems.join('\n'));
  return strategies;
}

/**
 * Approximate on-demand list prices (USD per instance-hour, us-east-1) of the instance types the examples use,
 * for the plan's cost line only; other regions, types and savings plans differ. `--price-per-instance-hour`
 * overrides them.
 */
export const LIST_PRICE_USD_PER_HOUR: Readonly<Record<string, number>> = {
  'ml.p5.48xlarge': 63,
  'ml.g6e.2xlarge': 2.6,
};

export interface SwitchPlan {
  /** How each switch deploys. */
  readonly style: 'rolling' | 'blue-green';
  /** DeploymentConfig passed to UpdateEndpoint (undefined: SageMaker's default, blue/green all at once). */
  readonly deploymentConfig: DeploymentConfig | undefined;
  /** Whether the config is the endpoint's own (LastDeploymentConfig) or one the tool chose. */
  readonly source: 'endpoint' | 'tool' | 'sagemaker-default';
  /** Instances running beyond the fleet while a switch is under way. */
  readonly extraInstances: number;
  /** Steps of the switch (rolling batches; 1 for blue/green). */
  readonly steps: number;
  /** Rough minutes per switch (provisioning + model load per step + bake). */
  readonly expectedMinutes: number;
  readonly why: string;
}

/**
 * Minutes to bring up one batch of GPU instances with a large model: capacity, image pull, weights, CUDA graph
 * capture. The construct documents ~20–30 min for a 70B model on ml.p5.48xlarge; smaller models are faster.
 */
export const MINUTES_PER_STEP = 20;

/** Rolling batch: the smallest instance count that is ≥ 5 % of the fleet (SageMaker's lower bound); must be ≤ 50 %. */
export function rollingBatchSize(instances: number): number {
  return Math.max(1, Math.ceil(instances * 0.05));
}

export function planSwitch(facts: EndpointFacts): SwitchPlan {
  const own = facts.endpoint.LastDeploymentConfig;
  const instances = facts.variants.reduce((n, v) => n + v.instanceCount, 0);
  const multiVariant = facts.variants.length > 1;
  const rolling = own?.RollingUpdatePolicy;
  if (rolling !== undefined && !multiVariant) {
    const size = rolling.MaximumBatchSize;
    const batch = size?.Type === 'CAPACITY_PERCENT' ? Math.max(1, Math.floor((instances * (size.Value ?? 0)) / 100)) : Math.max(1, size?.Value ?? 1);
    const steps = Math.ceil(instances / batch);
    const bake = (rolling.WaitIntervalInSeconds ?? 0) / 60;
    return {
      style: 'rolling',
      deploymentConfig: own,
      source: 'endpoint',
      extraInstances: batch,
      steps,
      expectedMinutes: Math.round(steps * (MINUTES_PER_STEP + bake)),
      why: "the endpoint's own rolling DeploymentConfig (LastDeploymentConfig)",
    };
  }
  if (!multiVariant && instances >= 2) {
    const batch = rollingBatchSize(instances);
    const steps = Math.ceil(instances / batch);
    const timeout = Math.min(28_800, Math.max(600, steps * (MINUTES_PER_STEP + 10) * 60));
    return {
      style: 'rolling',
      deploymentConfig: {
        RollingUpdatePolicy: {
          MaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: batch },
          RollbackMaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: batch },
          // Routing changes nothing the alarms of a model update watch for; the bake only adds time.
          WaitIntervalInSeconds: 0,
          MaximumExecutionTimeoutInSeconds: timeout,
        },
      },
      source: 'tool',
      extraInstances: batch,
      steps,
      expectedMinutes: steps * MINUTES_PER_STEP,
      why: `a rolling update, ${batch} instance(s) per batch (≥ 5 % of ${instances}), because the endpoint has no DeploymentConfig of its own and SageMaker's default (blue/green) would need a second fleet`,
    };
  }
  const blueGreen = own?.BlueGreenUpdatePolicy !== undefined ? own : undefined;
  return {
    style: 'blue-green',
    deploymentConfig: blueGreen,
    source: blueGreen ? 'endpoint' : 'sagemaker-default',
    extraInstances: instances,
    steps: 1,
    expectedMinutes: MINUTES_PER_STEP + 5,
    why: multiVariant
      ? 'SageMaker does not roll endpoints with more than one production variant, so each switch is blue/green: a full second fleet while it runs (use --variants to compare variants without any switch)'
      : 'one instance cannot roll (a batch must be at most 50 % of the fleet), so each switch is blue/green: a second instance while it runs',
  };
}

export interface AbPlan {
  readonly facts: EndpointFacts;
  readonly mode: 'switch' | 'variants';
  readonly strategies: readonly AbStrategy[];
  readonly switchPlan: SwitchPlan;
  readonly pricePerInstanceHour: number | undefined;
  readonly priceSource: string;
  /** Model-time seconds each run sends for (duration bound). */
  readonly runSeconds: number;
  readonly instances: number;
}

export function buildAbPlan(input: {
  facts: EndpointFacts;
  mode: 'switch' | 'variants';
  strategies: readonly AbStrategy[];
  pricePerInstanceHour?: number;
  runSeconds: number;
}): AbPlan {
  const { facts } = input;
  const types = [...new Set(facts.variants.map((v) => v.instanceType ?? 'unknown'))];
  const listed = types.length === 1 ? LIST_PRICE_USD_PER_HOUR[types[0]] : undefined;
  const price = input.pricePerInstanceHour ?? listed;
  return {
    facts,
    mode: input.mode,
    strategies: input.strategies,
    switchPlan: planSwitch(facts),
    pricePerInstanceHour: price,
    priceSource:
      input.pricePerInstanceHour !== undefined
        ? '--price-per-instance-hour'
        : listed !== undefined
          ? 'approximate us-east-1 on-demand list price; check https://aws.amazon.com/sagemaker/pricing/'
          : 'unknown: pass --price-per-instance-hour',
    runSeconds: input.runSeconds,
    instances: facts.variants.reduce((n, v) => n + v.instanceCount, 0),
  };
}

/** Name of the N-th configuration copy: the original's name (shortened) + `-ab<runId>-<N>`, at most 63 characters. */
export function copyConfigName(original: string, runId: string, index: number): string {
  const suffix = `-ab${runId}-${index + 1}`;
  return `${original.slice(0, 63 - suffix.length).replace(/-+$/, '')}${suffix}`;
}

const usd = (x: number): string => `$${x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(2)}`;

/** The plan as the text the command prints before asking for --yes. */
export function renderAbPlan(plan: AbPlan, runId: string): string {
  const { facts, switchPlan: sw } = plan;
  const lines: string[] = [];
  lines.push(`Endpoint ${facts.endpointName} (${facts.status}), configuration ${facts.configName}`);
  for (const v of facts.variants) lines.push(`  variant ${v.name}: ${v.instanceCount} × ${v.instanceType ?? 'unknown'}, routing ${routingLabel(v.routing)}`);
  const hourly = plan.pricePerInstanceHour === undefined ? undefined : plan.pricePerInstanceHour * plan.instances;
  lines.push(
    `Fleet cost: ${hourly === undefined ? 'unknown' : `${usd(hourly)}/h`} (${plan.instances} instance(s)${plan.pricePerInstanceHour !== undefined ? ` × ${usd(plan.pricePerInstanceHour)}/h` : ''}; ${plan.priceSource}). The fleet bills whether or not the A/B runs; the A/B adds only the switch capacity below.`,
  );
  const runMinutes = plan.runSeconds / 60;
  if (plan.mode === 'variants') {
    lines.push(`Mode: --variants: no deployment; one workload is split between ${facts.variants.map((v) => v.name).join(' and ')} by conversation / prefix group (TargetVariant).`);
    lines.push(`Run: about ${runMinutes.toFixed(1)} min of traffic, then CloudWatch is read for the run window.`);
    return lines.join('\n');
  }
  lines.push(`Strategies, in order: ${plan.strategies.map((s) => s.label).join(' → ')}; then the original configuration ${facts.configName} is restored.`);
  lines.push(`Each switch: CreateEndpointConfig (a copy differing only in RoutingConfig), UpdateEndpoint with RetainAllVariantProperties=true (an autoscaled instance count survives) and ${sw.style === 'rolling' ? 'a rolling' : 'a blue/green'} DeploymentConfig: ${sw.why}.`);
  const extraCost = plan.pricePerInstanceHour === undefined ? '' : ` (≈ ${usd(sw.extraInstances * plan.pricePerInstanceHour)}/h while it runs)`;
  lines.push(`  capacity: ${sw.extraInstances} extra instance(s) of quota during each switch${extraCost}; ${sw.steps} step(s); expected ≈ ${sw.expectedMinutes} min per switch (≈ ${MINUTES_PER_STEP} min per step to provision and load the model).`);
  const switches = plan.strategies.length + 1;
  const totalMinutes = switches * sw.expectedMinutes + plan.strategies.length * runMinutes;
  lines.push(`Total: ${switches} switches (the restore included) + ${plan.strategies.length} × ${runMinutes.toFixed(1)} min of traffic ≈ ${Math.round(totalMinutes)} min${hourly === undefined ? '' : ` ≈ ${usd((hourly * totalMinutes) / 60)} of fleet time`}.`);
  lines.push(`Configurations created: ${plan.strategies.map((_, i) => copyConfigName(facts.configName, runId, i)).join(', ')}; deleted at the end.`);
  lines.push(
    `If this process is killed (SIGKILL) before it restores, run:\n  aws sagemaker update-endpoint --endpoint-name ${facts.endpointName} --endpoint-config-name ${facts.configName} --retain-all-variant-properties\n  then delete the -ab${runId}- configurations (aws sagemaker list-endpoint-configs --name-contains ab${runId}).`,
  );
  return lines.join('\n');
}
