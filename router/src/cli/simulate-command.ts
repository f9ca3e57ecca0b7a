import type { Command } from 'commander';
import { BUILTIN_PROFILE_NAMES, DEFAULT_PROFILE_NAME, fleetText, type EngineProfile } from '../emulator/engine-profile';
import { CACHE_AWARE_FOR_BLIND_REPLICAS, placesColdPromptsByLoad, POLICY_NAMES, type PolicyConfig } from '../policy';
import { expandPolicySweep, formatPolicySpec, parsePolicySpec } from '../policy/policy-spec';
import { ProgressReporter } from '../report/progress';
import {
  compareStrategies,
  policyLabels,
  type StrategyComparison,
  type StrategyComparisonConfig,
} from '../sim/compare-strategies';
import { compareStrategiesInParallel, defaultJobs, JOBS_RANGE } from '../sim/parallel-runs';
import { promptWorkerPays } from '../sim/prompt-worker';
import { SimulationProgressBoard } from '../sim/simulation-progress';
import { contextRefusalLine, countContextRefusals } from '../sim/context-refusals';
import { baselineProblem, terminalSummary, writeReport, type ReportFiles } from '../report';
import { INSTANCES_RANGE, OBSERVE_INTERVAL_RANGE, ROUTERS_RANGE } from '../sim/simulator';
import { parseWorkloadSpec, type Workload } from '../workload';
import { MEASURED_STEP_JITTER_CV, STEP_JITTER_CV_RANGE } from '../emulator/step-jitter';
import { AWS_ROUTER_OVERHEAD_MS, CLIENT_LATENCY_RANGE_MS, type ClientLatency } from '../sim/client-latency';
import {
  collect,
  defaultReportDir,
  fleetFlag,
  integerFlag,
  optionalIntegerFlag,
  numberFlag,
  numberRangeFlag,
  policyFlagSpecs,
  textFlag,
} from './flag-values';
import { engineArgOption, engineArgsFlag } from './engine-arg-flag';
import { flowControlBoundOption, flowControlFlag, flowControlOption } from './flow-control-flag';
import type { FlowControlSettings } from '../core/flow-control';
import { fleetWithEngineArgs } from '../emulator/engine-args';
import { ConfigError } from '../common/config-error';
import { recognizingCaptureFiles } from './workload-flag';
import { addModelProfileFlags, modelProfileFromFlags } from './model-profile-flags';
import { bypassSimFlag, kvEventsSimFlag, restartSimFlag, simScenarioOptions } from './sim-scenario-flags';
import type { SimulatedKvEventSettings } from '../sim/simulated-kv-events';
import type { EngineRestart } from '../sim/simulator';

export const DEFAULT_SIMULATED_POLICIES = ['random', 'least-outstanding-requests', 'sagemaker-prefix-aware'];

/**
 * `prefix-router simulate`: the live router's policies in front of emulated vLLM instances, in virtual time.
 * Every strategy runs on a fresh fleet; one report (markdown, JSON, HTML) shows them side by side.
 */
export function register(program: Command): void {
  const command = program
    .command('simulate')
    .description('compare routing strategies on a workload in virtual time (seconds for an hour of traffic)')
    .option(
      '--workload <spec>',
      'long-context, short-chat, shared-system or trace:FILE, with ?options (docs/workloads.md)',
      'long-context',
    )
    .option(
      '--policy <spec>',
      `a policy to compare, repeatable: ${POLICY_NAMES.join(', ')} (default ${DEFAULT_SIMULATED_POLICIES.join(', ')}); options as name?option=value&option=value`,
      collect,
    )
    .option(
      '--sweep <spec>',
      'a grid of one policy\u2019s settings, repeatable: name?option=v1,v2&option=v3,v4 runs every combination (added to --policy)',
      collect,
    )
    .option(
      '--routers <n>',
      `router replicas sharing the traffic round-robin with no shared state, ${ROUTERS_RANGE.min}..${ROUTERS_RANGE.max}`,
      '1',
    )
    .option(
      '--observe-ms <ms>',
      `with --routers: every this many ms each replica receives every instance's published load and routing blocks (serve --observe-instances in front of serve --publish-state-ms), ${OBSERVE_INTERVAL_RANGE.min}..${OBSERVE_INTERVAL_RANGE.max}; 0 = replicas see only what they sent`,
      '0',
    )
    .option(
      '--instances <fleet>',
      `instances, ${INSTANCES_RANGE.min}..${INSTANCES_RANGE.max}: N of --profile, or a mixed fleet as COUNT:PROFILE groups, e.g. 5:p5-llama-3.1-70b,2:p4d-llama-3.1-70b`,
      '7',
    )
    .option(
      '--profile <name|file>',
      `engine calibration: ${BUILTIN_PROFILE_NAMES.join(', ')}, or a JSON file (default p5-llama-3.1-70b)`,
    )
    .option('--seed <n>', 'seed of the policies\u2019 random choices', '1')
    .option(
      '--step-jitter <cv>',
      `step-time jitter: coefficient of variation of every engine step, 0..1 (measured on vLLM: ${MEASURED_STEP_JITTER_CV}; default 0)`,
    )
    .option(
      '--router-overhead <ms>',
      `managed-router overhead added to each request, ms or MIN..MAX (AWS: ${AWS_ROUTER_OVERHEAD_MS.min}..${AWS_ROUTER_OVERHEAD_MS.max}; default none)`,
    )
    .option(
      '--network-rtt <ms>',
      'client-endpoint network round trip added to each request, ms or MIN..MAX (default none)',
    )
    .option('--duration <seconds>', 'stop sending after this many simulated seconds (default: when the workload ends)')
    .option('--warmup <seconds>', 'exclude requests sent in the first seconds from the measured window', '0')
    .option('--max-requests <n>', 'stop after this many requests')
    .option('--baseline <label>', 'strategy the others are compared against (default random)')
    .option('--out <dir>', 'report directory (default ./prefix-router-reports/simulate-<time>)')
    .option(
      '--jobs <n>',
      `strategies simulated at once on worker threads, ${JOBS_RANGE.min}..${JOBS_RANGE.max} (default: the number of cores, ${defaultJobs()} here); a core left over generates and hashes the prompts ahead of the runs`,
    )
    .option('--quiet', 'print only the report paths')
    .addOption(engineArgOption())
    .addOption(flowControlOption())
    .addOption(flowControlBoundOption());
  for (const option of simScenarioOptions()) command.addOption(option);
  command.action(async (flags: Record<string, unknown>) => {
    await runSimulateCommand(flags);
  });
  addModelProfileFlags(command);
}

export interface SimulateFlags {
  readonly workload: Workload;
  readonly policies: readonly PolicyConfig[];
  readonly instances: number;
  /** One profile per instance (`--instances` groups; every instance `profile` when none names one). */
  readonly fleet: readonly EngineProfile[];
  readonly routers: number;
  readonly observeIntervalMs: number;
  readonly profile: EngineProfile;
  readonly seed: number;
  readonly stepJitterCv: number;
  readonly clientLatency: ClientLatency | undefined;
  readonly warmupMs: number;
  readonly sendUntilMs: number | undefined;
  readonly maxRequests: number | undefined;
  readonly baseline: string | undefined;
  readonly out: string;
  readonly quiet: boolean;
  readonly jobs: number;
  readonly flowControl: FlowControlSettings;
  /** `--kv-events on`: the routers follow the engines' KV events (undefined: off). */
  readonly kvEvents: SimulatedKvEventSettings | undefined;
  /** `--restart-at`: an engine restarts mid-run (undefined: none). */
  readonly engineRestart: EngineRestart | undefined;
  /** `--bypass`: the share of requests sent around the routers (0–1). */
  readonly bypassShare: number;
}

/** Validates every flag; throws ConfigError (or the workload/policy/profile error) naming the flag. */
export function parseSimulateFlags(flags: Record<string, unknown>): SimulateFlags {
  const str = (k: string) => textFlag(flags, k);
  const sweeps = ((flags.sweep as string[] | undefined) ?? []).flatMap((s) => expandPolicySweep(s));
  const policySpecs = policyFlagSpecs(flags.policy) ?? (sweeps.length > 0 ? [] : DEFAULT_SIMULATED_POLICIES);
  const policies = [...policySpecs.map((s) => parsePolicySpec(s)), ...sweeps];
  const specs = policies.map(formatPolicySpec);
  if (new Set(specs).size !== specs.length)
    throw new ConfigError([`--policy lists the same policy twice (${specs.join(', ')})`]);
  const baseline = str('baseline');
  const labels = policyLabels(policies);
  const baselineMisses =
    baseline === undefined
      ? undefined
      : baselineProblem(
          baseline,
          policies.map((p, i) => ({ label: labels[i], strategy: p })),
        );
  if (baselineMisses !== undefined) throw new ConfigError([`--baseline ${baselineMisses}`]);
  const { profile } = modelProfileFromFlags(flags, DEFAULT_PROFILE_NAME, false, 'simulate');
  const fleet = fleetWithEngineArgs(
    fleetFlag('instances', str('instances') ?? '7', INSTANCES_RANGE, () => profile),
    engineArgsFlag(flags),
  );
  return {
    workload: recognizingCaptureFiles(() => parseWorkloadSpec(str('workload') ?? 'long-context')),
    policies,
    instances: fleet.length,
    fleet,
    routers: integerFlag('routers', str('routers') ?? '1', ROUTERS_RANGE.min, ROUTERS_RANGE.max),
    observeIntervalMs: integerFlag(
      'observe-ms',
      str('observeMs') ?? str('observe-ms') ?? '0',
      OBSERVE_INTERVAL_RANGE.min,
      OBSERVE_INTERVAL_RANGE.max,
    ),
    // Prompts are hashed at the fleet's block size: the first instance's (fleetFlag checks they agree).
    profile: fleet[0],
    seed: integerFlag('seed', str('seed') ?? '1', 0, 4294967295),
    stepJitterCv:
      (str('stepJitter') ?? str('step-jitter')) === undefined
        ? 0
        : numberFlag(
            'step-jitter',
            str('stepJitter') ?? str('step-jitter'),
            STEP_JITTER_CV_RANGE.min,
            STEP_JITTER_CV_RANGE.max,
          ),
    clientLatency: clientLatencyOf(
      str('routerOverhead') ?? str('router-overhead'),
      str('networkRtt') ?? str('network-rtt'),
    ),
    warmupMs: numberFlag('warmup', str('warmup') ?? '0', 0, 604800) * 1000,
    sendUntilMs:
      str('duration') === undefined ? undefined : numberFlag('duration', str('duration'), 0, 604800, true) * 1000,
    maxRequests: optionalIntegerFlag('max-requests', str('max-requests') ?? str('maxRequests'), 1, 100_000_000),
    baseline,
    out: str('out') ?? defaultReportDir('simulate'),
    quiet: flags.quiet === true,
    flowControl: flowControlFlag(flags),
    kvEvents: kvEventsSimFlag(flags),
    engineRestart: restartSimFlag(flags, fleet.length),
    bypassShare: bypassSimFlag(flags),
    jobs: integerFlag(
      'jobs',
      str('jobs') ?? String(Math.min(defaultJobs(), JOBS_RANGE.max)),
      JOBS_RANGE.min,
      JOBS_RANGE.max,
    ),
  };
}

function clientLatencyOf(
  routerOverhead: string | undefined,
  networkRtt: string | undefined,
): ClientLatency | undefined {
  if (routerOverhead === undefined && networkRtt === undefined) return undefined;
  const { min, max } = CLIENT_LATENCY_RANGE_MS;
  return {
    ...(routerOverhead !== undefined
      ? { routerOverheadMs: numberRangeFlag('router-overhead', routerOverhead, min, max) }
      : {}),
    ...(networkRtt !== undefined ? { networkRttMs: numberRangeFlag('network-rtt', networkRtt, min, max) } : {}),
  };
}

/**
 * Replicas that see only their own requests disagree on least-loaded cold placements: said once, so a comparison of
 * replica setups is not read as the policy's best (docs/router.md, Several router replicas).
 */
export function blindReplicaNote(flags: {
  readonly routers: number;
  readonly observeIntervalMs: number;
  readonly policies: readonly PolicyConfig[];
}): string | undefined {
  if (flags.routers < 2 || flags.observeIntervalMs > 0 || !flags.policies.some(placesColdPromptsByLoad))
    return undefined;
  return `note: ${flags.routers} replicas that see only their own requests (no --observe-ms) place cold prompts by load each on its own view, so they disagree: run them with ${formatPolicySpec(CACHE_AWARE_FOR_BLIND_REPLICAS)}, as docs/router.md#several-router-replicas says`;
}

export async function runSimulateCommand(
  rawFlags: Record<string, unknown>,
  print: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  progress: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<{ comparison: StrategyComparison; files: ReportFiles }> {
  const flags = parseSimulateFlags(rawFlags);
  if (!flags.quiet) progress(contextRefusalLine(countContextRefusals(flags.workload, flags.fleet, flags)));
  const blindNote = blindReplicaNote(flags);
  if (blindNote !== undefined) progress(blindNote);
  const reporter = new ProgressReporter({ mode: flags.quiet ? 'silent' : 'auto', label: 'simulate' });
  const expected = Math.min(flags.workload.expectedRequests, flags.maxRequests ?? Infinity);
  const board = new SimulationProgressBoard({
    strategies: flags.policies.length,
    expectedPerStrategy: expected,
    expectedExact: flags.workload.expectedRequestsExact || expected === flags.maxRequests,
    sendUntilMs: flags.sendUntilMs,
    report: reporter.update,
  });
  const indexOf = (p: PolicyConfig) => flags.policies.indexOf(p);
  const parallel = flags.jobs > 1 && flags.policies.length > 1;
  const concurrentRuns = parallel ? Math.min(flags.jobs, flags.policies.length) : 1;
  const config: StrategyComparisonConfig = {
    workload: flags.workload,
    policies: flags.policies,
    instances: flags.instances,
    routers: flags.routers,
    observeIntervalMs: flags.observeIntervalMs,
    profile: flags.profile,
    ...(new Set(flags.fleet.map((p) => p.name)).size > 1 ? { profiles: flags.fleet } : {}),
    seed: flags.seed,
    stepJitterCv: flags.stepJitterCv,
    flowControl: flags.flowControl,
    ...(flags.kvEvents !== undefined ? { kvEvents: flags.kvEvents } : {}),
    ...(flags.engineRestart !== undefined ? { engineRestart: flags.engineRestart } : {}),
    ...(flags.bypassShare > 0 ? { bypassShare: flags.bypassShare } : {}),
    clientLatency: flags.clientLatency,
    warmupMs: flags.warmupMs,
    sendUntilMs: flags.sendUntilMs,
    maxRequests: flags.maxRequests,
    // A core left idle by the runs prepares their prompts (identical results either way).
    promptWorker: promptWorkerPays(
      concurrentRuns,
      Math.min(flags.workload.expectedRequests, flags.maxRequests ?? Infinity),
    ),
    baseline: flags.baseline,
    onStrategyStart: flags.quiet
      ? undefined
      : (p, i) => {
          reporter.end();
          progress(
            `[${i + 1}/${flags.policies.length}] simulating ${formatPolicySpec(p)} on ${fleetText(flags.fleet)}…`,
          );
        },
    onProgress: (p, sim) => board.progress(indexOf(p), sim),
    onStrategyDone: (p, r) => {
      const failed = r.records.reduce((n, record) => n + (record.error === undefined ? 0 : 1), 0);
      if (!flags.quiet) {
        reporter.end();
        progress(
          `    ${formatPolicySpec(p)}: ${r.records.length} requests (${failed} failed), ${(r.simulatedMs / 1000).toFixed(0)} s simulated in ${(r.wallMs / 1000).toFixed(1)} s`,
        );
      }
      board.strategyDone(indexOf(p), r.records.length, failed);
    },
  };
  let comparison: StrategyComparison;
  try {
    comparison = parallel ? await compareStrategiesInParallel(config, { jobs: flags.jobs }) : compareStrategies(config);
  } finally {
    reporter.end();
  }
  const files = await writeReport(comparison.report, flags.out);
  // The terminal gets the verdict and a compact table (≤120 columns); the full tables are in report.md.
  if (!flags.quiet) print(terminalSummary(comparison.report));
  print(`report: ${files.html}\n        ${files.markdown}\n        ${files.json}`);
  return { comparison, files };
}
