/**
 * The plan of a routing A/B on a live endpoint: which routing configurations run, how each switch deploys
 * (rolling where SageMaker allows it, so a switch does not need a second fleet), what it costs, and how long it
 * should take. Built from DescribeEndpoint/DescribeEndpointConfig alone; printed before anything changes.
 */
import { ConfigError } from '../common/config-error';
import { SAGEMAKER_NAME_MAX_LENGTH } from './sagemaker-names';
import { parseDecimalInteger } from '../common/decimal-text';
import type {
  CapacitySize,
  DeploymentConfig,
  DescribeEndpointCommandOutput,
  DescribeEndpointConfigCommandOutput,
  ProductionVariantRoutingConfig,
} from '@aws-sdk/client-sagemaker';
import { finishCommands } from './ab-finish';
import { routingLabel, type EndpointFacts } from './endpoint-facts';
import { LIST_PRICE_SOURCE, LIST_PRICE_USD_PER_HOUR } from '../common/instance-prices';

/** An A/B plan that cannot run as given (a bad --strategies list, a fleet it cannot switch): a ConfigError. */
export class AbPlanError extends ConfigError {
  constructor(message: string) {
    super([message]);
    this.name = 'AbPlanError';
  }
}

export interface AbStrategy {
  readonly label: string;
  readonly routing: ProductionVariantRoutingConfig;
}

export const PREFIX_AWARE_LIMITS = {
  prefixLength: { min: 1024, max: 65536 },
  concurrencyThreshold: { min: 1, max: 1024 },
} as const;
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
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const parsed: { name: string; options: Record<string, string> }[] = [];
  for (const item of items) {
    if (item.includes('=') && !item.includes(':')) {
      const last = parsed[parsed.length - 1];
      if (last === undefined || last.name !== 'PREFIX_AWARE') {
        problems.push(
          `--strategies: option '${item}' must follow PREFIX_AWARE: (got it after ${last?.name ?? 'nothing'})`,
        );
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
    if (!(STRATEGIES as readonly string[]).includes(name))
      problems.push(`--strategies: '${name}' is not one of ${STRATEGIES.join(', ')}`);
    parsed.push({ name, options });
  }
  const strategies: AbStrategy[] = [];
  for (const { name, options } of parsed) {
    if (name !== 'PREFIX_AWARE') {
      if (Object.keys(options).length > 0)
        problems.push(`--strategies: ${name} takes no options (got ${Object.keys(options).join(', ')})`);
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
      const value = parseDecimalInteger(raw);
      if (value === undefined || value < limit.min || value > limit.max) {
        problems.push(
          `--strategies: PREFIX_AWARE ${key} must be an integer between ${limit.min} and ${limit.max} (got ${JSON.stringify(raw)})`,
        );
        continue;
      }
      values[key] = value;
    }
    const routing: ProductionVariantRoutingConfig = {
      RoutingStrategy: 'PREFIX_AWARE',
      PrefixAwareRoutingConfig: {
        PrefixLength: values.prefixLength,
        ConcurrencyThreshold: values.concurrencyThreshold,
      },
    };
    strategies.push({ label: routingLabel(routing), routing });
  }
  if (strategies.length === 0 && problems.length === 0)
    problems.push('--strategies must name at least one of RANDOM, LEAST_OUTSTANDING_REQUESTS, PREFIX_AWARE');
  const labels = strategies.map((s) => s.label);
  const dup = labels.find((l, i) => labels.indexOf(l) !== i);
  if (dup !== undefined) problems.push(`--strategies names ${dup} twice`);
  if (problems.length > 0) throw new AbPlanError(problems.join('\n'));
  return strategies;
}

/** The project's price table (common/instance-prices.ts), kept exported here for existing importers. */
export { LIST_PRICE_USD_PER_HOUR };

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
 * Used for the plan's time estimate only; deployment time limits come from the configuration's own timeouts.
 */
export const MINUTES_PER_STEP = 20;

/**
 * Documented limits of a rolling deployment (API reference, RollingUpdatePolicy,
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_RollingUpdatePolicy.html): MaximumBatchSize "must
 * be between 5% to 50% of the variant's total instance count"; WaitIntervalInSeconds 0–3600;
 * MaximumExecutionTimeoutInSeconds 600–28,800. CapacitySize (API_CapacitySize.html) is INSTANCE_COUNT or
 * CAPACITY_PERCENT with Value ≥ 1. Rolling is for single-variant endpoints (deployment guardrails guide).
 */
export const ROLLING_LIMITS = {
  batchFraction: { min: 0.05, max: 0.5 },
  waitIntervalSeconds: { min: 0, max: 3600 },
  executionTimeoutSeconds: { min: 600, max: 28_800 },
} as const;

/**
 * Seconds to provision one batch before the model download starts (capacity, image pull). Not a documented
 * figure: a margin on top of the configuration's own download and health-check timeouts.
 */
export const PROVISIONING_SECONDS = 600;

/**
 * Rolling batch for `instances`: the smallest instance count that is ≥ 5 % of the fleet, or undefined when no
 * whole count lies within 5–50 % (one instance cannot roll).
 */
export function rollingBatchSize(instances: number): number | undefined {
  const batch = Math.max(1, Math.ceil(instances * ROLLING_LIMITS.batchFraction.min));
  return batch <= instances * ROLLING_LIMITS.batchFraction.max ? batch : undefined;
}

/** Whether a CapacitySize is within 5–50 % of `instances` (as UpdateEndpoint checks it against the current count). */
export function batchWithinLimits(size: CapacitySize | undefined, instances: number): boolean {
  if (size?.Value === undefined || size.Value < 1 || instances < 1) return false;
  const fraction = size.Type === 'CAPACITY_PERCENT' ? size.Value / 100 : size.Value / instances;
  return fraction >= ROLLING_LIMITS.batchFraction.min && fraction <= ROLLING_LIMITS.batchFraction.max;
}

/**
 * Most seconds one deployment step can take, from the configuration's own timeouts: the model download
 * (ModelDataDownloadTimeoutInSeconds) and the container's start-up health check
 * (ContainerStartupHealthCheckTimeoutInSeconds), both 60–3600 s per API_ProductionVariant, plus provisioning.
 * A variant without them gets MINUTES_PER_STEP for both.
 */
export function stepSeconds(config: DescribeEndpointConfigCommandOutput): number {
  let worst = 0;
  for (const v of config.ProductionVariants ?? []) {
    const download = v.ModelDataDownloadTimeoutInSeconds;
    const startup = v.ContainerStartupHealthCheckTimeoutInSeconds;
    const own =
      download === undefined && startup === undefined ? MINUTES_PER_STEP * 60 : (download ?? 0) + (startup ?? 0);
    worst = Math.max(worst, own);
  }
  return (worst || MINUTES_PER_STEP * 60) + PROVISIONING_SECONDS;
}

const clampTimeout = (seconds: number): number =>
  Math.min(
    ROLLING_LIMITS.executionTimeoutSeconds.max,
    Math.max(ROLLING_LIMITS.executionTimeoutSeconds.min, Math.ceil(seconds)),
  );

/** Instances of a single-variant endpoint now (DescribeEndpoint's CurrentInstanceCount, else desired). */
export function currentInstances(endpoint: DescribeEndpointCommandOutput, fallback: number): number {
  const variants = endpoint.ProductionVariants ?? [];
  if (variants.length === 0) return fallback;
  return variants.reduce((n, v) => n + (v.CurrentInstanceCount ?? v.DesiredInstanceCount ?? 0), 0) || fallback;
}

export interface SwitchDeployment {
  readonly style: 'rolling' | 'blue-green';
  /** DeploymentConfig for UpdateEndpoint (undefined: SageMaker's default, blue/green all at once). */
  readonly deploymentConfig: DeploymentConfig | undefined;
  readonly source: 'endpoint' | 'tool' | 'sagemaker-default';
  readonly batch: number;
  readonly steps: number;
  readonly instances: number;
  /** Longest a caller should wait for this deployment: its time limit (or the step estimate) + 30 min. */
  readonly waitMs: number;
  readonly why: string;
}

/**
 * The DeploymentConfig of one UpdateEndpoint, computed from the fleet as it is now (autoscaling, which the A/B's
 * own load can drive, moves the count between switches and UpdateEndpoint checks the batch against the current
 * count). The endpoint's own rolling config is kept when its batch fits the current count; an INSTANCE_COUNT
 * batch that no longer fits is resized (its alarms and bake time kept); where no batch fits, the switch is
 * blue/green. Time limits are sized from the configuration's own timeouts.
 */
export function deploymentFor(
  endpoint: DescribeEndpointCommandOutput,
  config: DescribeEndpointConfigCommandOutput,
  fallbackInstances: number,
  variantCount = Math.max((config.ProductionVariants ?? []).length, (endpoint.ProductionVariants ?? []).length),
): SwitchDeployment {
  const own = endpoint.LastDeploymentConfig;
  const instances = currentInstances(endpoint, fallbackInstances);
  const step = stepSeconds(config);
  if (variantCount > 1) {
    return blueGreenSwitch(
      own,
      instances,
      step,
      'SageMaker does not roll endpoints with more than one production variant, so each switch is blue/green: a full second fleet while it runs (use --variants to compare variants without any switch)',
    );
  }
  const fit = rollingBatchSize(instances);
  const ownRolling = own?.RollingUpdatePolicy === undefined ? undefined : ownRollingSwitch(own, instances, step, fit);
  if (ownRolling !== undefined) return ownRolling;
  if (fit === undefined)
    return blueGreenSwitch(
      own,
      instances,
      step,
      `${instances} instance(s) cannot roll (a batch must be 5–50 % of the fleet), so the switch is blue/green: a second fleet while it runs`,
    );
  const steps = Math.ceil(instances / fit);
  const timeout = clampTimeout(steps * step);
  return {
    style: 'rolling',
    deploymentConfig: {
      RollingUpdatePolicy: {
        MaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: fit },
        RollbackMaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: fit },
        // Routing changes nothing the alarms of a model update watch for; the bake only adds time.
        WaitIntervalInSeconds: 0,
        MaximumExecutionTimeoutInSeconds: timeout,
      },
    },
    source: 'tool',
    batch: fit,
    steps,
    instances,
    waitMs: (timeout + 1800) * 1000,
    why: `a rolling update, ${fit} instance(s) per batch (≥ 5 % of ${instances}), because the endpoint has no DeploymentConfig of its own and SageMaker's default (blue/green) would need a second fleet`,
  };
}

/** A blue/green switch: the endpoint's own blue/green policy when it has one, else SageMaker's default. */
function blueGreenSwitch(
  own: DeploymentConfig | undefined,
  instances: number,
  step: number,
  why: string,
): SwitchDeployment {
  const bg = own?.BlueGreenUpdatePolicy !== undefined ? own : undefined;
  const limit = bg?.BlueGreenUpdatePolicy?.MaximumExecutionTimeoutInSeconds;
  return {
    style: 'blue-green',
    deploymentConfig: bg,
    source: bg ? 'endpoint' : 'sagemaker-default',
    batch: instances,
    steps: 1,
    instances,
    waitMs: ((limit ?? step + (bg?.BlueGreenUpdatePolicy?.TerminationWaitInSeconds ?? 0)) + 1800) * 1000,
    why,
  };
}

/**
 * The endpoint's own rolling policy: as it is when its batch is 5–50 % of the current count, else with the batch
 * resized to `fit` (undefined when no batch fits, or the endpoint has no rolling policy).
 */
function ownRollingSwitch(
  own: DeploymentConfig,
  instances: number,
  step: number,
  fit: number | undefined,
): SwitchDeployment | undefined {
  const rolling = own.RollingUpdatePolicy;
  if (rolling === undefined) return undefined;
  const wait = rolling.WaitIntervalInSeconds ?? 0;
  const sizeOf = (size: CapacitySize | undefined): number =>
    size?.Type === 'CAPACITY_PERCENT'
      ? Math.max(1, Math.floor((instances * (size.Value ?? 0)) / 100))
      : Math.max(1, size?.Value ?? 1);
  if (batchWithinLimits(rolling.MaximumBatchSize, instances)) {
    const batch = sizeOf(rolling.MaximumBatchSize);
    const steps = Math.ceil(instances / batch);
    const limit = rolling.MaximumExecutionTimeoutInSeconds;
    return {
      style: 'rolling',
      deploymentConfig: own,
      source: 'endpoint',
      batch,
      steps,
      instances,
      waitMs: ((limit ?? steps * (step + wait)) + 1800) * 1000,
      why: "the endpoint's own rolling DeploymentConfig (LastDeploymentConfig)",
    };
  }
  if (fit === undefined) return undefined;
  const steps = Math.ceil(instances / fit);
  const resized: DeploymentConfig = {
    ...own,
    RollingUpdatePolicy: {
      ...rolling,
      MaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: fit },
      ...(rolling.RollbackMaximumBatchSize !== undefined &&
      !batchWithinLimits(rolling.RollbackMaximumBatchSize, instances)
        ? { RollbackMaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: fit } }
        : {}),
      MaximumExecutionTimeoutInSeconds: Math.max(
        rolling.MaximumExecutionTimeoutInSeconds ?? 0,
        clampTimeout(steps * (step + wait)),
      ),
    },
  };
  const limit = resized.RollingUpdatePolicy!.MaximumExecutionTimeoutInSeconds!;
  return {
    style: 'rolling',
    deploymentConfig: resized,
    source: 'endpoint',
    batch: fit,
    steps,
    instances,
    waitMs: (limit + 1800) * 1000,
    why: `the endpoint's own rolling DeploymentConfig with its batch resized to ${fit} of ${instances} instance(s) (its own batch is outside 5–50 % of the current count)`,
  };
}

export function planSwitch(facts: EndpointFacts): SwitchPlan {
  const instances = facts.variants.reduce((n, v) => n + v.instanceCount, 0);
  const d = deploymentFor(facts.endpoint, facts.config, instances, facts.variants.length);
  const bake = (d.deploymentConfig?.RollingUpdatePolicy?.WaitIntervalInSeconds ?? 0) / 60;
  return {
    style: d.style,
    deploymentConfig: d.deploymentConfig,
    source: d.source,
    extraInstances: d.batch,
    steps: d.steps,
    expectedMinutes: d.style === 'rolling' ? Math.round(d.steps * (MINUTES_PER_STEP + bake)) : MINUTES_PER_STEP + 5,
    why: d.why,
  };
}

export interface AbPlan {
  readonly facts: EndpointFacts;
  /** switch: one strategy after another on the endpoint; variants: its variants side by side; shadow: shadow endpoints side by side (shadow-ab.ts). */
  readonly mode: 'switch' | 'variants' | 'shadow';
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
  mode: 'switch' | 'variants' | 'shadow';
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
          ? LIST_PRICE_SOURCE
          : 'unknown: pass --price-per-instance-hour',
    runSeconds: input.runSeconds,
    instances: facts.variants.reduce((n, v) => n + v.instanceCount, 0),
  };
}

/** Name of the N-th configuration copy: the original's name (shortened) + `-ab<runId>-<N>`, at most 63 characters. */
export function copyConfigName(original: string, runId: string, index: number): string {
  const suffix = `-ab${runId}-${index + 1}`;
  return `${original.slice(0, SAGEMAKER_NAME_MAX_LENGTH - suffix.length).replace(/-+$/, '')}${suffix}`;
}

/** Dollars as the A/B plans print them: cents below $100, whole dollars with separators above. */
export const usd = (x: number): string => `$${x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(2)}`;

/** Expected minutes of the whole plan: every switch (the restore included) and every run. */
export function planMinutes(plan: AbPlan): number {
  if (plan.mode === 'variants') return plan.runSeconds / 60;
  return (
    (plan.strategies.length + 1) * plan.switchPlan.expectedMinutes + (plan.strategies.length * plan.runSeconds) / 60
  );
}

/** The plan as the text the command prints before asking for --yes. */
export function renderAbPlan(plan: AbPlan, runId: string): string {
  const { facts, switchPlan: sw } = plan;
  const lines: string[] = [];
  lines.push(`Endpoint ${facts.endpointName} (${facts.status}), configuration ${facts.configName}`);
  for (const v of facts.variants)
    lines.push(
      `  variant ${v.name}: ${v.instanceCount} × ${v.instanceType ?? 'unknown'}, routing ${routingLabel(v.routing)}`,
    );
  const hourly = plan.pricePerInstanceHour === undefined ? undefined : plan.pricePerInstanceHour * plan.instances;
  lines.push(
    `Fleet cost: ${hourly === undefined ? 'unknown' : `${usd(hourly)}/h`} (${plan.instances} instance(s)${plan.pricePerInstanceHour !== undefined ? ` × ${usd(plan.pricePerInstanceHour)}/h` : ''}; ${plan.priceSource}). The fleet bills whether or not the A/B runs; the A/B adds only the switch capacity below.`,
  );
  const runMinutes = plan.runSeconds / 60;
  if (plan.mode === 'variants') {
    lines.push(
      `Mode: --variants: no deployment; one workload is split between ${facts.variants.map((v) => v.name).join(' and ')} by conversation / prefix group (TargetVariant).`,
    );
    lines.push(`Run: about ${runMinutes.toFixed(1)} min of traffic, then CloudWatch is read for the run window.`);
    return lines.join('\n');
  }
  lines.push(
    `Strategies, in order: ${plan.strategies.map((s) => s.label).join(' → ')}; then the original configuration ${facts.configName} is restored.`,
  );
  lines.push(
    `First every copy is created (CreateEndpointConfig, differing only in RoutingConfig), so a refused one costs no deployment. Each switch: UpdateEndpoint with RetainAllVariantProperties=true (an autoscaled instance count survives) and ${sw.style === 'rolling' ? 'a rolling' : 'a blue/green'} DeploymentConfig, recomputed from the instance count before each switch: ${sw.why}.`,
  );
  const extraCost =
    plan.pricePerInstanceHour === undefined
      ? ''
      : ` (≈ ${usd(sw.extraInstances * plan.pricePerInstanceHour)}/h while it runs)`;
  lines.push(
    `  capacity: ${sw.extraInstances} extra instance(s) of quota during each switch${extraCost}; ${sw.steps} step(s); expected ≈ ${sw.expectedMinutes} min per switch (≈ ${MINUTES_PER_STEP} min per step to provision and load the model).`,
  );
  const switches = plan.strategies.length + 1;
  const totalMinutes = planMinutes(plan);
  lines.push(
    `Total: ${switches} switches (the restore included) + ${plan.strategies.length} × ${runMinutes.toFixed(1)} min of traffic ≈ ${Math.round(totalMinutes)} min${hourly === undefined ? '' : ` ≈ ${usd((hourly * totalMinutes) / 60)} of fleet time`}.`,
  );
  lines.push(
    `Configurations created: ${plan.strategies.map((_, i) => copyConfigName(facts.configName, runId, i)).join(', ')}; deleted at the end.`,
  );
  lines.push(
    `If this process is killed (SIGKILL, or a CI runner's kill after its grace period) before it restores, finish by hand:\n${finishCommands(
      {
        endpointName: facts.endpointName,
        originalConfig: facts.configName,
        copies: plan.strategies.map((_, i) => copyConfigName(facts.configName, runId, i)),
        status: 'unknown',
        deploymentConfig: sw.deploymentConfig,
      },
    )
      .map((c) => `  ${c}`)
      .join('\n')}`,
  );
  return lines.join('\n');
}
