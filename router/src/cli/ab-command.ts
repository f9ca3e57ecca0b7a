import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { SageMakerClient, type SageMakerClientConfig } from '@aws-sdk/client-sagemaker';
import type { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { Command } from 'commander';
import { ModelDiscoveryError, ProgressReporter, runLiveBenchmark, type LiveBenchmarkResult } from '../benchmark';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { buildAbPlan, parseAbStrategies, planMinutes, renderAbPlan } from '../aws/ab-plan';
import { writeAbReport } from '../aws/ab-report';
import { AwsSetupError } from '../aws/endpoint-facts';
import { hostsInferenceComponents, refuseInferenceComponentEndpoint } from '../aws/inference-components';
import { isValidInferenceComponentName } from '../protocol/inference-component';
import { runShadowAb } from './ab-shadow';
import {
  checkVariantsComparable,
  configCopyInput,
  RoutingAb,
  type AbOutcome,
  type WorkloadRun,
} from '../aws/routing-ab';
import { DEFAULT_RETRY_POLICY, systemClock, type Clock, type RetryPolicy } from '../aws/throttling-retry';
import {
  DEFAULT_CLOUDWATCH_DELAY_S,
  liveOptionsOf,
  loadFlagProblems,
  parseCommandLine,
  type RawBenchFlags,
  type RawLoadFlags,
} from './bench-flags';
import { processIo, type BenchIo } from './bench-run';
import { endedAbStatus } from './ab-exit';
import { listenForAbSignals, AB_SIGNALS, type AbSignal } from './ab-signals';
import { ConfigError } from '../common/config-error';
import { defaultReportDir, FlagProblems, optionalNumberFlag } from './flag-values';
import { SAGEMAKER_NAME, SAGEMAKER_NAME_RULE } from '../aws/sagemaker-names';
import {
  prefixAwareIdProblem,
  resolveSageMakerTarget,
  sageMakerBenchPlan,
  SAGEMAKER_DEFAULT_DURATION_S,
  SAGEMAKER_DEFAULT_MAX_REQUESTS,
} from './sagemaker-bench';

/**
 * `prefix-router ab`: a routing A/B on a live SageMaker endpoint. Prints the plan (fleet, cost, how each switch
 * deploys and how long it takes) and changes nothing without --yes; with it, runs the workload once per
 * strategy (or once split between variants with --variants), restores the original configuration, and writes
 * the client's and CloudWatch's figures side by side. Exit codes: 0 done (or plan only), 1 bad flags or setup
 * (nothing changed), 2 a run failed but the endpoint was restored, 3 the endpoint is NOT where it began (the
 * message names its state and the commands that finish the job), 128 + the signal's number when a signal
 * (SIGINT 130, SIGTERM 143, SIGHUP 129) stopped the run and the endpoint was restored. An endpoint that hosts
 * inference components is not switched: without --shadow it is refused, with it ab-shadow.ts compares the
 * strategies on shadow endpoints and only reads the live one (same exit codes, 3 meaning shadow resources are left).
 */
export { AB_SIGNALS, type AbSignal } from './ab-signals';

export function register(program: Command): void {
  defineAbOptions(program.command('ab')).action(async (flags: RawAbFlags) => {
    // A closed terminal (SIGHUP) makes every later write fail with EIO/EPIPE; the restore must not die of it.
    process.stdout.on('error', () => undefined);
    process.stderr.on('error', () => undefined);
    const onSignal = (handler: (signal: AbSignal) => void): (() => void) => {
      const listeners = AB_SIGNALS.map((name) => [name, () => handler(name)] as const);
      for (const [name, fn] of listeners) process.on(name, fn);
      return () => {
        for (const [name, fn] of listeners) process.off(name, fn);
      };
    };
    process.exitCode = await runAbCommand(flags, { io: processIo(), onSignal });
  });
}

export interface RawAbFlags extends RawLoadFlags {
  readonly endpointName?: string;
  readonly strategies?: string;
  readonly variants?: boolean;
  readonly region?: string;
  readonly prefixAwareId?: string;
  readonly pricePerInstanceHour?: string;
  readonly pollInterval?: string;
  readonly switchTimeout?: string;
  readonly restoreTimeout?: string;
  readonly acceptCredentialExpiry?: boolean;
  readonly cloudwatchDelay?: string;
  readonly cloudwatch?: boolean;
  readonly emfNamespace?: string;
  readonly out?: string;
  readonly yes?: boolean;
  readonly quiet?: boolean;
  readonly shadow?: boolean;
  readonly inferenceComponent?: string;
  readonly maxShadowCostUsd?: string;
}

export function defineAbOptions(command: Command): Command {
  return command
    .description(
      'routing A/B on a live SageMaker endpoint: one run per routing strategy (or per variant with --variants), restored afterwards; see docs/validate.md',
    )
    .option('--endpoint-name <name>', 'the SageMaker endpoint (its current configuration is restored at the end)')
    .option(
      '--strategies <list>',
      'RANDOM, LEAST_OUTSTANDING_REQUESTS, PREFIX_AWARE[:prefixLength=N,concurrencyThreshold=N], comma-separated, in run order',
    )
    .option(
      '--variants',
      "compare the endpoint's production variants (differing only in RoutingConfig) at the same time, splitting one workload with TargetVariant; no deployment",
    )
    .option('--workload <spec>', "workload spec, e.g. 'long-context?groups=100' (see docs/workloads.md)")
    .option('--concurrency <n>', 'closed loop: keep n requests in flight')
    .option('--rate <r>', 'open loop: Poisson arrivals at r requests/s')
    .option('--duration <s>', `stop sending after s seconds per run (default ${SAGEMAKER_DEFAULT_DURATION_S})`)
    .option('--max-requests <n>', 'send at most n requests per run (default 10000)')
    .option(
      '--warmup <s>',
      'leave requests sent in the first s seconds of each run out of the figures (they still warm the caches)',
      '0',
    )
    .option('--timeout <s>', 'per-request timeout in seconds', '600')
    .option('--model <name>', "model name in request bodies (default: from the endpoint's model environment)")
    .option('--region <region>', 'AWS region (default: the SDK chain, e.g. AWS_REGION)')
    .option('--prefix-aware-id <id>', 'PrefixAwareId routing hint sent with every request')
    .option(
      '--price-per-instance-hour <usd>',
      "instance price for the plan's cost lines (default: a built-in list price for a few types)",
    )
    .option('--poll-interval <s>', 'seconds between DescribeEndpoint polls while a switch deploys, 1..600', '30')
    .option(
      '--switch-timeout <min>',
      "longest wait for one switch in minutes, 1..1440 (default: the DeploymentConfig's limit + 30)",
    )
    .option(
      '--restore-timeout <min>',
      'longest the restore keeps retrying and waiting, in minutes, 1..2880 (default: twice the switch wait, at least 60)',
    )
    .option(
      '--accept-credential-expiry',
      'run even though the credentials expire before the plan ends (when they refresh themselves: SSO, an instance or assumed role)',
    )
    .option(
      '--cloudwatch-delay <s>',
      'seconds to wait after the last run before reading CloudWatch, 0..3600',
      String(DEFAULT_CLOUDWATCH_DELAY_S),
    )
    .option('--no-cloudwatch', 'do not read CloudWatch')
    .option(
      '--emf-namespace <ns>',
      "CloudWatch namespace of the router sidecar's EMF metrics (its PREFIX_ROUTER_EMF_NAMESPACE)",
      'PrefixRouter',
    )
    .option(
      '--time-scale <x>',
      'only for local rehearsals against emulators (and a control plane on 127.0.0.1): they run x times faster',
      '1',
    )
    .option('--out <dir>', 'report directory (default ./prefix-router-reports/ab-<time>)')
    .option(
      '--shadow',
      'for an endpoint that hosts inference components: compare the strategies on shadow endpoints (copies of its configuration and components, one per strategy, side by side), deleted afterwards; the live endpoint is only read',
    )
    .option(
      '--inference-component <name>',
      'with --shadow: the live component (base or adapter) the workload invokes, on each shadow its copy (default: the only component)',
    )
    .option(
      '--max-shadow-cost-usd <usd>',
      "with --shadow --yes: the most the shadows may cost by the plan's estimate; required, and the run is refused when the estimate is higher",
    )
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
  /** A fresh SageMaker client (credential chain resolved again); default: a new client for the region. */
  readonly renewSageMaker?: () => SageMakerClient;
  /** Ctrl-C source (tests): aborting it acts as SIGINT. */
  readonly interrupt?: AbortSignal;
  /** Registers the signal handler (the CLI: SIGINT, SIGTERM, SIGHUP); returns its removal. */
  readonly onSignal?: (handler: (signal: AbSignal) => void) => () => void;
  readonly now?: () => Date;
}

/** True for http(s) URLs on a loopback host (a local rehearsal's control plane). */
export function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}

/** When the resolved credentials expire (undefined: no expiry given, or not resolvable now). */
async function credentialExpiry(client: SageMakerClient): Promise<Date | undefined> {
  try {
    const provider = client.config.credentials as unknown as () => Promise<{ expiration?: Date }>;
    const creds = typeof provider === 'function' ? await provider() : undefined;
    return creds?.expiration instanceof Date ? creds.expiration : undefined;
  } catch {
    return undefined;
  }
}

// eslint-disable-next-line max-lines-per-function -- not yet cut by concern (issue 36)
export async function runAbCommand(flags: RawAbFlags, deps: AbCommandDeps): Promise<number> {
  const { io } = deps;
  const clock = deps.clock ?? systemClock;
  const checks = new FlagProblems();
  const problems = { push: (problem: string) => checks.add(problem) };
  const numberFlag = (flag: string, raw: string | undefined, min: number, max: number): number | undefined =>
    checks.check(() => optionalNumberFlag(flag, raw, min, max));
  if (flags.endpointName === undefined) problems.push('--endpoint-name is required');
  else if (!SAGEMAKER_NAME.test(flags.endpointName))
    problems.push(`--endpoint-name must be ${SAGEMAKER_NAME_RULE} (got ${JSON.stringify(flags.endpointName)})`);
  // Every flag is checked before the first AWS call: the load flags as bench checks them (no target needed), the
  // strategies' syntax and ranges (PREFIX_AWARE's defaults come from the endpoint later), the routing hint.
  for (const problem of loadFlagProblems({
    ...flags,
    duration: flags.duration ?? SAGEMAKER_DEFAULT_DURATION_S,
    maxRequests: flags.maxRequests ?? SAGEMAKER_DEFAULT_MAX_REQUESTS,
  }))
    problems.push(problem);
  if (!flags.variants && flags.strategies !== undefined) checks.check(() => parseAbStrategies(flags.strategies!));
  const hintProblem = prefixAwareIdProblem(flags.prefixAwareId);
  if (hintProblem !== undefined) problems.push(hintProblem);
  if (flags.shadow && flags.variants)
    problems.push('give --shadow (strategies on shadow endpoints) or --variants (compare existing variants), not both');
  if (!flags.shadow && flags.inferenceComponent !== undefined)
    problems.push('--inference-component applies with --shadow');
  if (!flags.shadow && flags.maxShadowCostUsd !== undefined)
    problems.push('--max-shadow-cost-usd applies with --shadow');
  if (flags.inferenceComponent !== undefined && !isValidInferenceComponentName(flags.inferenceComponent)) {
    problems.push(
      `--inference-component must be 1 to 63 letters, digits and inner hyphens (got ${JSON.stringify(flags.inferenceComponent)})`,
    );
  }
  const maxShadowCost = numberFlag('max-shadow-cost-usd', flags.maxShadowCostUsd, 0, 1_000_000);
  if (flags.variants && flags.strategies !== undefined)
    problems.push(
      'give --strategies (switch the routing one strategy after another) or --variants (compare existing variants), not both',
    );
  if (!flags.variants && flags.strategies === undefined)
    problems.push('--strategies is required (e.g. RANDOM,PREFIX_AWARE), or --variants');
  const price = numberFlag('price-per-instance-hour', flags.pricePerInstanceHour, 0, 10_000);
  const pollS = numberFlag('poll-interval', flags.pollInterval ?? '30', 1, 600) ?? 30;
  const switchMin = numberFlag('switch-timeout', flags.switchTimeout, 1, 1440);
  const restoreMin = numberFlag('restore-timeout', flags.restoreTimeout, 1, 2880);
  const cwDelayS =
    numberFlag('cloudwatch-delay', flags.cloudwatchDelay ?? String(DEFAULT_CLOUDWATCH_DELAY_S), 0, 3600) ??
    DEFAULT_CLOUDWATCH_DELAY_S;
  if (flags.emfNamespace !== undefined && !/^[^:][^\s]{0,254}$/.test(flags.emfNamespace)) {
    problems.push(
      `--emf-namespace must be 1-255 characters without spaces, not starting with ':' (got ${JSON.stringify(flags.emfNamespace)})`,
    );
  }
  if (checks.problems.length > 0) {
    io.stderr.write(`prefix-router ab: ${checks.problems.join('\n  ')}\n`);
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
  let target: Awaited<ReturnType<typeof resolveSageMakerTarget>> | undefined;
  try {
    target = await resolveSageMakerTarget(
      { endpointName: flags.endpointName!, region: flags.region, model: flags.model },
      { sagemaker: deps.sagemaker, runtime: deps.runtime, env: deps.env, clock },
    );
    if (target.facts === undefined) {
      throw new AwsSetupError(
        'unsupported',
        'ab needs the SageMaker control plane (DescribeEndpoint, UpdateEndpoint): AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME alone points only the runtime API elsewhere',
      );
    }
    const facts = target.facts;
    const strategies = flags.variants ? [] : parseAbStrategies(flags.strategies!, facts.variants[0]?.routing);
    if (flags.shadow) {
      if (!hostsInferenceComponents(facts)) {
        throw new AwsSetupError(
          'unsupported',
          `--shadow is for endpoints that host inference components; '${facts.endpointName}' serves a model on its variant, so ab switches it in place and restores it (drop --shadow)`,
        );
      }
      const env = deps.env ?? process.env;
      const controlUrl = env.AWS_ENDPOINT_URL_SAGEMAKER ?? env.AWS_ENDPOINT_URL;
      const scale = controlUrl !== undefined && isLoopbackUrl(controlUrl) ? Number(flags.timeScale ?? '1') || 1 : 1;
      const startedAt = deps.now?.() ?? new Date();
      // Only the run's duration is read here (for the cost); each shadow's own target is checked in runShadowAb.
      const benchSettings = sageMakerBenchPlan(benchFlags, { ...target, model: flags.model ?? 'any' }).settings;
      const region = target.region;
      return await runShadowAb({
        io,
        clock,
        target,
        facts,
        strategies,
        benchFlags,
        inferenceComponent: flags.inferenceComponent,
        model: flags.model,
        pricePerInstanceHour: price,
        maxShadowCostUsd: maxShadowCost,
        yes: flags.yes === true,
        quiet: flags.quiet === true,
        runSeconds: (benchSettings.durationMs ?? Number(SAGEMAKER_DEFAULT_DURATION_S) * 1000) / 1000,
        runId: deps.runId ?? startedAt.getTime().toString(36).slice(-6),
        startedAt,
        directory: flags.out ?? defaultReportDir('ab', startedAt),
        pollIntervalMs: (pollS * 1000) / scale,
        createTimeoutMs: switchMin === undefined ? undefined : (switchMin * 60_000) / scale,
        cleanupTimeoutMs: restoreMin === undefined ? undefined : (restoreMin * 60_000) / scale,
        retry: {
          ...DEFAULT_RETRY_POLICY,
          baseDelayMs: DEFAULT_RETRY_POLICY.baseDelayMs / scale,
          maxDelayMs: DEFAULT_RETRY_POLICY.maxDelayMs / scale,
        },
        credentialsExpireAt: await credentialExpiry(target.sagemaker!),
        acceptCredentialExpiry: flags.acceptCredentialExpiry === true,
        timeScale: scale,
        renewSageMaker:
          deps.renewSageMaker ??
          (deps.sagemaker === undefined
            ? () => new SageMakerClient({ region, ignoreCache: true } as SageMakerClientConfig)
            : undefined),
        signals: deps,
      });
    }
    // Before anything changes: an endpoint hosting inference components is refused (aws/inference-components.ts says why).
    await refuseInferenceComponentEndpoint(target.sagemaker!, facts, clock);
    if (flags.variants) checkVariantsComparable(facts.config);
    const names = facts.variants.map((v) => v.name);
    // Validates every bench flag now, before the plan is shown.
    const { settings } = sageMakerBenchPlan(benchFlags, target, flags.variants ? () => names[0] : undefined);
    // The duration bound (default 600 s) is the most a run sends for; a shorter workload ends sooner.
    const runSeconds = (settings.durationMs ?? Number(SAGEMAKER_DEFAULT_DURATION_S) * 1000) / 1000;
    const plan = buildAbPlan({
      facts,
      mode: flags.variants ? 'variants' : 'switch',
      strategies,
      pricePerInstanceHour: price,
      runSeconds,
    });
    const startedAt = deps.now?.() ?? new Date();
    const runId = deps.runId ?? startedAt.getTime().toString(36).slice(-6);
    io.stdout.write(`${renderAbPlan(plan, runId)}\n`);
    // A rehearsal against a control plane on this machine runs its waits faster, like the emulators; a real one never.
    const env = deps.env ?? process.env;
    const controlUrl = env.AWS_ENDPOINT_URL_SAGEMAKER ?? env.AWS_ENDPOINT_URL;
    const scale = controlUrl !== undefined && isLoopbackUrl(controlUrl) ? Number(flags.timeScale ?? '1') || 1 : 1;
    const expiry = await credentialExpiry(target.sagemaker!);
    const needMs = (planMinutes(plan) * 60_000) / scale;
    const expiresTooSoon = expiry !== undefined && expiry.getTime() - clock.now() < needMs;
    if (expiry !== undefined) {
      const leftMin = Math.round((expiry.getTime() - clock.now()) / 60_000);
      io.stdout.write(
        expiresTooSoon
          ? `\nWARNING: the AWS credentials expire at ${expiry.toISOString()} (in ${leftMin} min), before the plan's ≈ ${Math.round(needMs / 60_000)} min end. If they do not refresh themselves, calls fail from then on; the restore re-resolves the credential chain and retries until --restore-timeout, so refresh them in time (aws sso login, a longer role session) or pass --accept-credential-expiry when they refresh themselves.\n`
          : `Credentials expire at ${expiry.toISOString()} (in ${leftMin} min), after the plan's ≈ ${Math.round(needMs / 60_000)} min.\n`,
      );
    }
    if (!flags.yes) {
      io.stdout.write('\nNothing was changed. Rerun with --yes to run this plan.\n');
      return 0;
    }
    if (expiresTooSoon && !flags.acceptCredentialExpiry) {
      io.stderr.write(
        'prefix-router ab: the credentials expire before the plan ends (see above); nothing was changed. Refresh them or pass --accept-credential-expiry.\n',
      );
      return 1;
    }
    // Hours of work must not end in an unwritable report: the directory is created and written before any change,
    // with the original configuration (CreateEndpointConfig input) that the finishing commands can recreate.
    const directory = flags.out ?? defaultReportDir('ab', startedAt);
    const originalConfigFile = resolve(directory, 'original-endpoint-config.json');
    try {
      await mkdir(directory, { recursive: true });
      await access(directory, fsConstants.W_OK);
      if (plan.mode === 'switch')
        await writeFile(
          originalConfigFile,
          `${JSON.stringify(configCopyInput(facts.config, facts.configName), null, 2)}\n`,
        );
    } catch (err) {
      io.stderr.write(
        `prefix-router ab: --out ${directory} is not writable (${(err as Error).message}); nothing was changed\n`,
      );
      return 1;
    }

    const listener = listenForAbSignals(deps, io, {
      first: (name) =>
        `${name}: stopping the run and restoring ${facts.configName} (no further change but the restore is sent; the restore waits for a full deployment, and killing the process now can leave the endpoint on a test configuration: see docs/validate.md)`,
      again: (name) => `${name}: still restoring; the endpoint is being put back on its original configuration`,
    });
    const liveTarget = target;
    const runWorkload = async (run: WorkloadRun): Promise<LiveBenchmarkResult> => {
      const perRun = sageMakerBenchPlan(benchFlags, liveTarget, run.targetVariantOf);
      const progress = new ProgressReporter({
        stream: io.stderr,
        mode: flags.quiet ? 'silent' : 'auto',
        label: run.label,
      });
      try {
        return await runLiveBenchmark({
          ...liveOptionsOf(perRun.settings),
          ...perRun.extra(),
          signal: run.signal,
          onProgress: progress.update,
        });
      } finally {
        progress.end();
      }
    };
    const cloudwatch =
      flags.cloudwatch === false ? undefined : (deps.cloudwatch ?? new CloudWatchClient({ region: target.region }));
    const region = target.region;
    // A new client resolves the credential chain again; ignoreCache (passed through to the chain's shared-file
    // providers) re-reads ~/.aws/credentials and config, which the SDK otherwise caches for the process's life.
    const renewSageMaker =
      deps.renewSageMaker ??
      (deps.sagemaker === undefined
        ? () => new SageMakerClient({ region, ignoreCache: true } as SageMakerClientConfig)
        : undefined);
    const retry: RetryPolicy = {
      ...DEFAULT_RETRY_POLICY,
      baseDelayMs: DEFAULT_RETRY_POLICY.baseDelayMs / scale,
      maxDelayMs: DEFAULT_RETRY_POLICY.maxDelayMs / scale,
    };
    let outcome: AbOutcome;
    try {
      outcome = await new RoutingAb(
        {
          sagemaker: target.sagemaker!,
          renewSageMaker,
          cloudwatch,
          clock,
          log: (line) => io.stderr.write(`${line}\n`),
          runWorkload,
        },
        {
          plan,
          runId,
          signal: listener.signal,
          pollIntervalMs: (pollS * 1000) / scale,
          switchTimeoutMs: switchMin === undefined ? undefined : (switchMin * 60_000) / scale,
          restoreTimeoutMs: restoreMin === undefined ? undefined : (restoreMin * 60_000) / scale,
          cloudWatchDelayMs: cwDelayS * 1000,
          retry,
          sidecarNamespace: flags.emfNamespace,
          originalConfigFile,
        },
      ).run();
    } finally {
      listener.remove();
      if (deps.cloudwatch === undefined) cloudwatch?.destroy();
    }
    // Written once the restore's result is known, so the report says where the endpoint is.
    let files: Awaited<ReturnType<typeof writeAbReport>> | undefined;
    try {
      files = await writeAbReport(directory, plan, outcome, settings.workload, runId, startedAt.toISOString());
      io.stdout.write(
        `\nreport: ${files.markdown}\n        ${files.json}\n${files.benchmark ? `        ${files.benchmark.markdown}\n        ${files.benchmark.html}\n` : ''}`,
      );
    } catch (err) {
      io.stderr.write(`prefix-router ab: could not write the report to ${directory}: ${(err as Error).message}\n`);
    }
    if (!outcome.finished) {
      const st = outcome.finalState;
      const state =
        st === undefined
          ? 'unknown (DescribeEndpoint did not answer)'
          : `${st.status} on ${st.configName}${st.pendingConfig ? `, deploying ${st.pendingConfig}` : ''}${st.failureReason ? ` (${st.failureReason})` : ''}`;
      io.stderr.write(
        `prefix-router ab: the endpoint is NOT where it began: ${outcome.restored ? `it is InService on ${facts.configName}, but configuration(s) ${outcome.leftConfigs.join(', ')} are left` : outcome.restoreError?.message}\n` +
          `State: ${facts.endpointName} is ${state}\n` +
          `Finish by hand with:\n${outcome.finishCommands.map((c) => `  ${c}`).join('\n')}\n`,
      );
      return 3;
    }
    const ended = endedAbStatus(outcome, io, listener.caught(), 'the endpoint was restored');
    if (ended.status !== undefined) return ended.status;
    if (files !== undefined && files.benchmark === undefined && outcome.runs.length > 0) {
      io.stderr.write(
        'prefix-router ab: no run measured anything: each ended before its warm-up did (shorten --warmup or lengthen the runs)\n',
      );
      return 2;
    }
    return ended.allFailed > 0 || files === undefined ? 2 : 0;
  } catch (err) {
    if (err instanceof AwsSetupError || err instanceof ConfigError || err instanceof ModelDiscoveryError) {
      io.stderr.write(`prefix-router ab: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    if (deps.runtime === undefined) target?.runtime.destroy();
    if (deps.sagemaker === undefined) target?.sagemaker?.destroy();
  }
}
