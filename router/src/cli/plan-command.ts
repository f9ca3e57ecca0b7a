import type { Command } from 'commander';
import { LIST_PRICE_SOURCE, LIST_PRICE_USD_PER_HOUR } from '../common/instance-prices';
import type { DerivedProfile } from '../emulator/derived-profile';
import { instanceGpus } from '../emulator/gpu-catalog';
import { allowedTensorParallelSizes, catalogedArchitecture } from '../emulator/model-architecture';
import { BUILTIN_PROFILE_NAMES, DEFAULT_PROFILE_NAME, type EngineProfile } from '../emulator/engine-profile';
import { POLICY_NAMES } from '../policy';
import {
  DEFAULT_PLAN_POLICIES,
  DEFAULT_PLAN_SWEEPS,
  planStrategies,
  runPlan,
  type PlanStrategy,
} from '../plan/planner';
import {
  buildPlanReport,
  renderPlanMarkdown,
  writePlanReport,
  type InstancePrice,
  type PlanDeployment,
  type PlanReport,
  type PlanReportFiles,
} from '../plan/plan-report';
import { parseSlos, SLO_GRAMMAR, type Slo } from '../plan/slo';
import { defaultJobs, JOBS_RANGE } from '../sim/parallel-runs';
import { contextRefusalLine, countContextRefusals } from '../sim/context-refusals';
import { INSTANCES_RANGE } from '../sim/simulator';
import { parseWorkloadSpec, type Workload } from '../workload';
import {
  collect,
  defaultReportDir,
  integerFlag,
  numberFlag,
  optionalIntegerFlag,
  policyFlagSpecs,
} from './flag-values';
import { engineArgOption, engineArgsFlag } from './engine-arg-flag';
import { applyEngineArgs } from '../emulator/engine-args';
import { baseGridPoint, ENGINE_GRID_FLAGS, engineGrid, type EngineGridPoint } from '../plan/engine-grid';
import { ConfigError } from '../common/config-error';
import { recognizingCaptureFiles } from './workload-flag';
import { addModelProfileFlags, modelProfileFromFlags } from './model-profile-flags';

/** Where the built-in instance prices come from (common/instance-prices.ts), and how to use another price. */
export const BUILT_IN_PRICE_SOURCE = `${LIST_PRICE_SOURCE}: pass --price-per-instance-hour`;

export const PLAN_INSTANCES_DEFAULT = '1..16';
export const MAX_RUNS_DEFAULT = 400;
export const WINDOW_SECONDS_DEFAULT = 300;

/**
 * `prefix-router plan`: the fewest instances each routing strategy needs to meet latency SLOs on a workload,
 * what that costs a month, and the answer as construct props.
 */
export function register(program: Command): void {
  const command = program
    .command('plan')
    .description(
      'fewest instances per routing strategy that meet latency SLOs on a workload, the monthly bill, and construct props',
    )
    .option(
      '--workload <spec>',
      'long-context, short-chat, shared-system or trace:FILE, with ?options (docs/workloads.md)',
      'long-context',
    )
    .option('--slo <slo>', `a bound to meet, repeatable: ${SLO_GRAMMAR}`, collect)
    .option(
      '--instances <range>',
      `instance counts to search, MIN..MAX within ${INSTANCES_RANGE.min}..${INSTANCES_RANGE.max}`,
      PLAN_INSTANCES_DEFAULT,
    )
    .option(
      '--policy <spec>',
      `a strategy, repeatable: ${POLICY_NAMES.join(', ')} with ?options (default ${DEFAULT_PLAN_POLICIES.join(', ')} and the --sweep below)`,
      collect,
    )
    .option(
      '--sweep <spec>',
      `settings of one policy compared as one strategy (its best setting at each size), repeatable (default ${DEFAULT_PLAN_SWEEPS.join(' ')})`,
      collect,
    )
    .option(
      '--profile <name|file>',
      `engine calibration: ${BUILTIN_PROFILE_NAMES.join(', ')}, or a JSON file (default p5-llama-3.1-70b)`,
    )
    .option(
      '--price-per-instance-hour <usd>',
      `price of one instance-hour in USD (default: the built-in list price of ${Object.keys(LIST_PRICE_USD_PER_HOUR).join(', ')})`,
    )
    .option(
      '--window <seconds>',
      'length of the busiest and quietest windows the autoscaling bounds are sized on; 0 skips them',
      String(WINDOW_SECONDS_DEFAULT),
    )
    .option('--seed <n>', 'seed of the policies\u2019 random choices', '1')
    .option('--warmup <seconds>', 'exclude requests sent in the first seconds from the measured window', '0')
    .option('--duration <seconds>', 'stop sending after this many simulated seconds (default: when the workload ends)')
    .option('--max-requests <n>', 'stop each simulation after this many requests')
    .option(
      '--exhaustive',
      'simulate every size in --instances instead of searching: certain on any curve, one run per size and setting',
    )
    .option('--max-runs <n>', 'most simulations the plan may run', String(MAX_RUNS_DEFAULT))
    .option(
      '--engine-search <on|off>',
      `search vLLM's ${ENGINE_GRID_FLAGS.join(' and ')} on a small grid around the profile's values below each answer (docs/plan.md#engine-settings); an --engine-arg holds its argument`,
      'on',
    )
    .option(
      '--jobs <n>',
      `simulations at once on worker threads, ${JOBS_RANGE.min}..${JOBS_RANGE.max} (default: the number of cores, ${defaultJobs()} here)`,
    )
    .option('--out <dir>', 'report directory (default ./prefix-router-reports/plan-<time>)')
    .option('--quiet', 'print only the report paths')
    .addOption(engineArgOption())
    .action(async (flags: Record<string, unknown>) => {
      await runPlanCommand(flags);
    });
  addModelProfileFlags(command);
}

export interface PlanFlags {
  readonly workload: Workload;
  readonly slos: readonly Slo[];
  readonly strategies: readonly PlanStrategy[];
  readonly instances: { readonly min: number; readonly max: number };
  /** The profile with --engine-arg applied: what the size search simulates. */
  readonly profile: EngineProfile;
  /** The profile before --engine-arg: vLLM's defaults on that hardware, which the app file leaves unset. */
  readonly defaultProfile: EngineProfile;
  /** The engine settings searched, base point (`profile`) first; only the base with --engine-search off. */
  readonly engineGrid: readonly EngineGridPoint[];
  /** The derivation when --model/--model-config chose the profile. */
  readonly derived?: DerivedProfile;
  readonly instanceType: string;
  readonly price: InstancePrice;
  readonly windowMs: number;
  readonly seed: number;
  readonly warmupMs: number;
  readonly sendUntilMs: number | undefined;
  readonly maxRequests: number | undefined;
  readonly maxRuns: number;
  readonly exhaustive: boolean;
  readonly jobs: number;
  readonly out: string;
  readonly quiet: boolean;
}

/** `MIN..MAX` of whole instance counts within the simulator's range. */
export function parseInstanceRange(raw: string): { min: number; max: number } {
  const parts = raw.split('..');
  const bad = () =>
    new ConfigError([
      `--instances must be MIN..MAX, whole numbers between ${INSTANCES_RANGE.min} and ${INSTANCES_RANGE.max} with MIN ≤ MAX (got ${JSON.stringify(raw)})`,
    ]);
  if (parts.length !== 2) throw bad();
  const [min, max] = parts.map((p) => {
    try {
      return integerFlag('instances', p.trim(), INSTANCES_RANGE.min, INSTANCES_RANGE.max);
    } catch {
      throw bad();
    }
  });
  if (min > max) throw bad();
  return { min, max };
}

export function parsePlanFlags(flags: Record<string, unknown>): PlanFlags {
  const str = (...keys: string[]) => keys.map((k) => flags[k]).find((v) => v !== undefined) as string | undefined;
  const slos = parseSlos((flags.slo as string[] | undefined) ?? []);
  const choice = modelProfileFromFlags(flags, DEFAULT_PROFILE_NAME);
  const heldEngineArgs = engineArgsFlag(flags);
  const profile = applyEngineArgs(choice.profile, heldEngineArgs);
  const engineSearch = str('engineSearch', 'engine-search') ?? 'on';
  if (engineSearch !== 'on' && engineSearch !== 'off')
    throw new ConfigError([`--engine-search must be on or off (got ${JSON.stringify(engineSearch)})`]);
  const instanceType = choice.instanceType ?? 'ml.p5.48xlarge';
  const rawPrice = str('pricePerInstanceHour', 'price-per-instance-hour');
  let price: InstancePrice;
  if (rawPrice !== undefined) {
    price = {
      usdPerInstanceHour: numberFlag('price-per-instance-hour', rawPrice, 0, 10_000, true),
      source: 'given with --price-per-instance-hour',
    };
  } else if (LIST_PRICE_USD_PER_HOUR[instanceType] !== undefined) {
    price = { usdPerInstanceHour: LIST_PRICE_USD_PER_HOUR[instanceType], source: BUILT_IN_PRICE_SOURCE };
  } else {
    throw new ConfigError([
      `--price-per-instance-hour is required for ${instanceType}: the built-in prices cover ${Object.keys(LIST_PRICE_USD_PER_HOUR).join(', ')}`,
    ]);
  }
  let strategies: PlanStrategy[];
  try {
    strategies = planStrategies(policyFlagSpecs(flags.policy) ?? [], (flags.sweep as string[] | undefined) ?? []);
  } catch (err) {
    throw err instanceof RangeError ? new ConfigError([err.message]) : err;
  }
  const duration = str('duration');
  return {
    workload: recognizingCaptureFiles(() => parseWorkloadSpec(str('workload') ?? 'long-context')),
    slos,
    strategies,
    instances: parseInstanceRange(str('instances') ?? PLAN_INSTANCES_DEFAULT),
    profile,
    defaultProfile: choice.profile,
    engineGrid: engineSearch === 'on' ? engineGrid(profile, heldEngineArgs) : [baseGridPoint(profile)],
    ...(choice.derived !== undefined ? { derived: choice.derived } : {}),
    instanceType,
    price,
    windowMs: numberFlag('window', str('window') ?? String(WINDOW_SECONDS_DEFAULT), 0, 86_400) * 1000,
    seed: integerFlag('seed', str('seed') ?? '1', 0, 4294967295),
    warmupMs: numberFlag('warmup', str('warmup') ?? '0', 0, 604800) * 1000,
    sendUntilMs: duration === undefined ? undefined : numberFlag('duration', duration, 0, 604800, true) * 1000,
    maxRequests: optionalIntegerFlag('max-requests', str('maxRequests', 'max-requests'), 1, 100_000_000),
    maxRuns: integerFlag('max-runs', str('maxRuns', 'max-runs') ?? String(MAX_RUNS_DEFAULT), 1, 100_000),
    exhaustive: flags.exhaustive === true,
    jobs: integerFlag(
      'jobs',
      str('jobs') ?? String(Math.min(defaultJobs(), JOBS_RANGE.max)),
      JOBS_RANGE.min,
      JOBS_RANGE.max,
    ),
    out: str('out') ?? defaultReportDir('plan'),
    quiet: flags.quiet === true,
  };
}

/** Simulations a plan is expected to need: a bisection and its neighbours per setting (or every size), capped by the budget. */
export function expectedPlanRuns(
  flags: Pick<PlanFlags, 'strategies' | 'instances' | 'maxRuns' | 'windowMs' | 'exhaustive' | 'engineGrid'>,
): number {
  const sizes = flags.instances.max - flags.instances.min + 1;
  const probes = flags.exhaustive ? sizes : Math.ceil(Math.log2(sizes)) + 3;
  const search = flags.strategies.reduce((n, s) => n + s.configs.length * probes, 0);
  // The engine grid: its other points one size below each answer, and again at the answer.
  const engine = flags.strategies.length * 2 * (flags.engineGrid.length - 1);
  return Math.min(flags.maxRuns, search + engine + (flags.windowMs > 0 ? 2 * probes : 0));
}

export async function runPlanCommand(
  rawFlags: Record<string, unknown>,
  print: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  progress: { write(text: string): unknown; isTTY?: boolean } = process.stderr,
): Promise<{ report: PlanReport; files: PlanReportFiles }> {
  const flags = parsePlanFlags(rawFlags);
  if (!flags.quiet)
    progress.write(`${contextRefusalLine(countContextRefusals(flags.workload, [flags.profile], flags))}\n`);
  const expected = expectedPlanRuns(flags);
  const started = Date.now();
  let lastLine = 0;
  const onRun = (done: number) => {
    if (flags.quiet) return;
    const text = `plan: ${done}/≈${expected} simulations, ${Math.round((Date.now() - started) / 1000)} s`;
    if (progress.isTTY) {
      const filled = Math.round(Math.min(1, done / expected) * 24);
      progress.write(`\r[${'#'.repeat(filled)}${'·'.repeat(24 - filled)}] ${text}`);
    } else if (Date.now() - lastLine >= 5000) {
      lastLine = Date.now();
      progress.write(`${text}\n`);
    }
  };
  const result = await runPlan({
    workload: flags.workload,
    strategies: flags.strategies,
    slos: flags.slos,
    instances: flags.instances,
    engineGrid: flags.engineGrid,
    seed: flags.seed,
    warmupMs: flags.warmupMs,
    sendUntilMs: flags.sendUntilMs,
    maxRequests: flags.maxRequests,
    jobs: flags.jobs,
    maxRuns: flags.maxRuns,
    exhaustive: flags.exhaustive,
    windowMs: flags.windowMs,
    onRun,
  });
  if (!flags.quiet && progress.isTTY) progress.write('\n');
  const report = buildPlanReport({
    result,
    slos: flags.slos,
    workload: { spec: flags.workload.spec, description: flags.workload.description },
    profile: flags.profile.name,
    instanceType: flags.instanceType,
    instances: flags.instances,
    price: flags.price,
    deployment: planDeployment(flags),
    engineGrid: flags.engineGrid.map((g) => g.key),
  });
  const files = await writePlanReport(report, flags.slos, flags.out);
  if (!flags.quiet) print(renderPlanMarkdown(report).split('\n## Measured sizes')[0].trimEnd());
  print(`report: ${files.html}\n        ${files.markdown}\n        ${files.json}`);
  return { report, files };
}

/** The model and engine settings the plan's app file states: the derivation's, or the construct's rule for a shipped profile. */
export function planDeployment(
  flags: Pick<PlanFlags, 'profile' | 'defaultProfile' | 'derived' | 'instanceType'>,
): PlanDeployment {
  const vllmDefaults = {
    maxNumBatchedTokens: flags.defaultProfile.maxNumBatchedTokens,
    longPrefillTokenThreshold: flags.defaultProfile.longPrefillTokenThreshold ?? 0,
  };
  if (flags.derived !== undefined) {
    const { profile, tensorParallelSize, gpuCount } = flags.derived;
    const architecture = catalogedArchitecture(profile.modelName);
    const capped = architecture !== undefined && profile.maxModelLen < architecture.maxPositionEmbeddings;
    return {
      modelId: profile.modelName,
      tensorParallelSize,
      gpuCount,
      ...(capped ? { maxModelLen: profile.maxModelLen } : {}),
      vllmDefaults,
    };
  }
  const hardware = instanceGpus(flags.instanceType);
  const architecture = catalogedArchitecture(flags.profile.modelName);
  if (hardware === undefined) return { modelId: flags.profile.modelName, vllmDefaults };
  const tensorParallelSize =
    architecture === undefined ? undefined : allowedTensorParallelSizes(architecture, hardware.gpuCount).pop();
  return {
    modelId: flags.profile.modelName,
    gpuCount: hardware.gpuCount,
    ...(tensorParallelSize !== undefined ? { tensorParallelSize } : {}),
    vllmDefaults,
  };
}
