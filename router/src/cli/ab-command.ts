import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import type { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { Command } from 'commander';
import { ModelDiscoveryError, ProgressReporter, runLiveBenchmark, type LiveBenchmarkResult } from '../benchmark';
import { AbPlanError, buildAbPlan, parseAbStrategies, renderAbPlan } from '../aws/ab-plan';
import { writeAbReport } from '../aws/ab-report';
import { AwsSetupError } from '../aws/endpoint-facts';
import { checkVariantsComparable, RoutingAb, type AbOutcome, type WorkloadRun } from '../aws/routing-ab';
import { systemClock, type Clock } from '../aws/throttling-retry';
import { BenchFlagError, liveOptionsOf, parseCommandLine, processIo, type BenchIo, type RawBenchFlags } from './bench-command';
import { defaultReportDir } from './flag-values';
import { resolveSageMakerTarget, sageMakerBenchPlan, SAGEMAKER_DEFAULT_DURATION_S } from './sagemaker-bench';

/**
 * `prefix-router ab`: a routing A/B on a live SageMaker endpoint. Prints the plan (fleet, cost, how each switch
 * deploys and how long it takes) and changes nothing without --yes; with it, runs the workload once per
 * strategy (or once split between variants with --variants), restores the original configuration, and writes
 * the client's and CloudWatch's figures side by side. Exit codes: 0 done (or plan only), 1 bad flags or setup,
 * 2 a run failed but the endpoint was restored, 3 the endpoint could NOT be restored, 130 interrupted.
 */
export function register(program: Command): void {
  defineAbOptions(program.command('ab')).action(async (flags: RawAbFlags) => {
    // SIGTERM (a cancelled CI job, a container stop) restores like Ctrl-C; only SIGKILL cannot.
    const io: BenchIo = {
      ...processIo(),
      onInterrupt: (handler) => {
        process.on('SIGINT', handler);
        process.on('SIGTERM', handler);
        return () => {
          process.off('SIGINT', handler);
          process.off('SIGTERM', handler);
        };
      },
    };
    process.exitCode = await runAbCommand(flags, { io });
  });
}

export interface RawAbFlags {
  readonly endpointName?: string;
  readonly strategies?: string;
  readonly variants?: boolean;
  readonly workload?: string;
  readonly concurrency?: string;
  readonly rate?: string;
  readonly duration?: string;
  readonly maxRequests?: string;
  readonly warmup?: string;
  readonly timeout?: string;
  readonly model?: string;
  readonly region?: string;
  readonly prefixAwareId?: string;
  readonly pricePerInstanceHour?: string;
  readonly pollInterval?: string;
  readonly switchTimeout?: string;
  readonly cloudwatchDelay?: string;
  readonly cloudwatch?: boolean;
  readonly emfNamespace?: string;
  readonly timeScale?: string;
  readonly out?: string;
  readonly yes?: boolean;
  readonly quiet?: boolean;
}

export function defineAbOptions(command: Command): Command {
  return command
    .description('routing A/B on a live SageMaker endpoint: one run per routing strategy (or per variant with --variants), restored afterwards; see docs/validate.md')
    .option('--endpoint-name <name>', 'the SageMaker endpoint (its current configuration is restored at the end)')
    .option('--strategies <list>', 'RANDOM, LEAST_OUTSTANDING_REQUESTS, PREFIX_AWARE[:prefixLength=N,concurrencyThreshold=N], comma-separated, in run order')
    .option('--variants', 'compare the endpoint\'s production variants (differing only in RoutingConfig) at the same time, splitting one workload with TargetVariant; no deployment')
    .option('--workload <spec>', "workload spec, e.g. 'long-context?groups=100' (see docs/workloads.md)")
    .option('--concurrency <n>', 'closed loop: keep n requests in flight')
    .option('--rate <r>', 'open loop: Poisson arrivals at r requests/s')
    .option('--duration <s>', `stop sending after s seconds per run (default ${SAGEMAKER_DEFAULT_DURATION_S})`)
    .option('--max-requests <n>', 'send at most n requests per run (default 10000)')
    .option('--warmup <s>', 'leave requests sent in the first s seconds of each run out of the figures (they still warm the caches)', '0')
    .option('--timeout <s>', 'per-request timeout in seconds', '600')
    .option('--model <name>', 'model name in request bodies (default: from the endpoint\'s model environment)')
    .option('--region <region>', 'AWS region (default: the SDK chain, e.g. AWS_REGION)')
    .option('--prefix-aware-id <id>', 'PrefixAwareId routing hint sent with every request')
    .option('--price-per-instance-hour <usd>', 'instance price for the plan\'s cost lines (default: a built-in list price for a few types)')
    .option('--poll-interval <s>', 'seconds between DescribeEndpoint polls while a switch deploys, 1..600', '30')
    .option('--switch-timeout <min>', 'longest wait for one switch in minutes, 1..1440 (default: the DeploymentConfig\'s limit + 30)')
    .option('--cloudwatch-delay <s>', 'seconds to wait after the last run before reading CloudWatch, 0..3600', '180')
    .option('--no-cloudwatch', 'do not read CloudWatch')
    .option('--emf-namespace <ns>', 'CloudWatch namespace of the router sidecar\'s EMF metrics (its PREFIX_ROUTER_EMF_NAMESPACE)', 'PrefixRouter')
    .option('--time-scale <x>', 'only for local rehearsals against emulators: they run x times faster', '1')
    .option('--out <dir>', 'report directory (default ./reports/ab-<time>)')
    .option('--yes', 'make the changes the plan describes (without it the plan is printed and nothing changes)')
    .option('--quiet', 'no progress lines');
}

export function parseAbArgv(argv: readonly string[]): RawAbFlags {
  return parseCommandLine<RawAbFlags>(defineAbOptions(new Command('ab')), argv);
}

export interface AbCommandDeps {
  readonly io: BenchIo;
  readonly sagemaker?: SageMakerClient;
  readonly cloudwatch?: CloudWatchClient;
  readonly runtime?: SageMakerRuntimeClient;
  readonly clock?: Clock;
  readonly env?: NodeJS.ProcessEnv;
  /** Short id in created configuration names; default derived from the start time. */
  readonly runId?: string;
  /** Ctrl-C source (tests); default SIGINT via io.onInterrupt. */
  readonly interrupt?: AbortSignal;
  readonly now?: () => Date;
}

function numberFlag(problems: string[], flag: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const v = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(v) || v < min || v > max) {
    problems.push(`--${flag} must be a number between ${min} and ${max} (got ${JSON.stringify(raw)})`);
    return undefined;
  }
  return v;
}

export async function runAbCommand(flags: RawAbFlags, deps: AbCommandDeps): Promise<number> {
  const { io } = deps;
  const clock = deps.clock ?? systemClock;
  const problems: string[] = [];
  if (flags.endpointName === undefined) problems.push('--endpoint-name is required');
  if (flags.workload === undefined) problems.push('--workload is required');
  if (flags.variants && flags.strategies !== undefined) problems.push('give --strategies (switch the routing one strategy after another) or --variants (compare existing variants), not both');
  if (!flags.variants && flags.strategies === undefined) problems.push('--strategies is required (e.g. RANDOM,PREFIX_AWARE), or --variants');
  const price = numberFlag(problems, 'price-per-instance-hour', flags.pricePerInstanceHour, 0, 10_000);
  const pollS = numberFlag(problems, 'poll-interval', flags.pollInterval ?? '30', 1, 600) ?? 30;
  const switchMin = numberFlag(problems, 'switch-timeout', flags.switchTimeout, 1, 1440);
  const cwDelayS = numberFlag(problems, 'cloudwatch-delay', flags.cloudwatchDelay ?? '180', 0, 3600) ?? 180;
  if (flags.emfNamespace !== undefined && !/^[^:][^\s]{0,254}$/.test(flags.emfNamespace)) {
    problems.push(`--emf-namespace must be 1-255 characters without spaces, not starting with ':' (got ${JSON.stringify(flags.emfNamespace)})`);
  }
  if (problems.length > 0) {
    io.stderr.write(`prefix-router ab: ${problems.join('\n  ')}\n`);
    return 1;
  }
  const benchFlags: RawBenchFlags = {
    sagemakerEndpoint: flags.endpointName,
    workload: flags.workload,
    concurrency: flags.concurrency,
    rate: flags.rate,
    duration: flags.duration,
    maxRequests: flags.maxRequests,
    warmup: flags.warmup,
    timeout: flags.timeout,
    timeScale: flags.timeScale,
    prefixAwareId: flags.prefixAwareId,
    quiet: flags.quiet,
  };
  let target;
  try {
    target = await resolveSageMakerTarget(
      { endpointName: flags.endpointName!, region: flags.region, model: flags.model },
      { sagemaker: deps.sagemaker, runtime: deps.runtime, env: deps.env, clock },
    );
    if (target.facts === undefined) {
      throw new AwsSetupError('unsupported', 'ab needs the SageMaker control plane (DescribeEndpoint, UpdateEndpoint): AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME alone points only the runtime API elsewhere');
    }
    const facts = target.facts;
    const strategies = flags.variants ? [] : parseAbStrategies(flags.strategies!, facts.variants[0]?.routing);
    if (flags.variants) checkVariantsComparable(facts.config);
    const names = facts.variants.map((v) => v.name);
    // Validates every bench flag now, before the plan is shown.
    const { settings } = sageMakerBenchPlan(benchFlags, target, flags.variants ? () => names[0] : undefined);
    // The duration bound (default 600 s) is the most a run sends for; a shorter workload ends sooner.
    const runSeconds = (settings.durationMs ?? Number(SAGEMAKER_DEFAULT_DURATION_S) * 1000) / 1000;
    const plan = buildAbPlan({ facts, mode: flags.variants ? 'variants' : 'switch', strategies, pricePerInstanceHour: price, runSeconds });
    const startedAt = deps.now?.() ?? new Date();
    const runId = deps.runId ?? startedAt.getTime().toString(36).slice(-6);
    io.stdout.write(`${renderAbPlan(plan, runId)}\n`);
    if (!flags.yes) {
      io.stdout.write('\nNothing was changed. Rerun with --yes to run this plan.\n');
      return 0;
    }

    const interrupt = new AbortController();
    deps.interrupt?.addEventListener('abort', () => interrupt.abort(), { once: true });
    if (deps.interrupt?.aborted) interrupt.abort();
    let presses = 0;
    const removeInterrupt = io.onInterrupt?.(() => {
      presses++;
      if (presses === 1) {
        io.stderr.write(`\ninterrupted: stopping the run and restoring ${facts.configName} (this waits for a full deployment; killing the process now leaves the endpoint on a test configuration — see docs/validate.md)\n`);
        interrupt.abort();
      } else io.stderr.write('\nstill restoring; the endpoint is being put back on its original configuration\n');
    });

    const runWorkload = async (run: WorkloadRun): Promise<LiveBenchmarkResult> => {
      const perRun = sageMakerBenchPlan(benchFlags, target!, run.targetVariantOf);
      const progress = new ProgressReporter({ stream: io.stderr, mode: flags.quiet ? 'silent' : 'auto', label: run.label });
      try {
        return await runLiveBenchmark({ ...liveOptionsOf(perRun.settings), ...perRun.extra(), signal: run.signal, onProgress: progress.update });
      } finally {
        progress.end();
      }
    };
    const cloudwatch = flags.cloudwatch === false ? undefined : (deps.cloudwatch ?? new CloudWatchClient({ region: target.region }));
    let outcome: AbOutcome;
    try {
      outcome = await new RoutingAb(
        { sagemaker: target.sagemaker!, cloudwatch, clock, log: (line) => io.stderr.write(`${line}\n`), runWorkload },
        {
          plan,
          runId,
          signal: interrupt.signal,
          pollIntervalMs: pollS * 1000,
          switchTimeoutMs: switchMin === undefined ? undefined : switchMin * 60_000,
          cloudWatchDelayMs: cwDelayS * 1000,
          sidecarNamespace: flags.emfNamespace,
        },
      ).run();
    } finally {
      removeInterrupt?.();
      if (deps.cloudwatch === undefined) cloudwatch?.destroy();
    }
    const directory = flags.out ?? defaultReportDir('ab', startedAt);
    const files = await writeAbReport(directory, plan, outcome, settings.workload, runId, startedAt.toISOString());
    io.stdout.write(`\nreport: ${files.markdown}\n        ${files.json}\n${files.benchmark ? `        ${files.benchmark.markdown}\n        ${files.benchmark.html}\n` : ''}`);
    if (!outcome.restored) {
      io.stderr.write(`prefix-router ab: the endpoint was NOT restored: ${outcome.restoreError?.message}\n`);
      return 3;
    }
    if (outcome.interrupted) return 130;
    const allFailed = outcome.runs.filter((r) => r.result.sent > 0 && r.result.failed === r.result.sent);
    for (const r of allFailed) {
      const first = r.result.records.find((x) => x.error !== undefined);
      io.stderr.write(`prefix-router ab: every request of ${r.label} failed (first: ${first?.error}${first?.errorDetail ? `: ${first.errorDetail}` : ''})\n`);
    }
    if (outcome.failure) {
      io.stderr.write(`prefix-router ab: ${outcome.failure.message} (the endpoint was restored)\n`);
      return 2;
    }
    if (files.benchmark === undefined && outcome.runs.length > 0) {
      io.stderr.write('prefix-router ab: no run measured anything: each ended before its warm-up did (shorten --warmup or lengthen the runs)\n');
      return 2;
    }
    return allFailed.length > 0 ? 2 : 0;
  } catch (err) {
    if (err instanceof AwsSetupError || err instanceof BenchFlagError || err instanceof AbPlanError || err instanceof ModelDiscoveryError) {
      io.stderr.write(`prefix-router ab: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    if (deps.runtime === undefined) target?.runtime.destroy();
    if (deps.sagemaker === undefined) target?.sagemaker?.destroy();
  }
}
