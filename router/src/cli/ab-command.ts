import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { SageMakerClient, type SageMakerClientConfig } from '@aws-sdk/client-sagemaker';
import type { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { Command } from 'commander';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ModelDiscoveryError } from '../benchmark';
import {
  buildAbPlan,
  parseAbStrategies,
  planMinutes,
  renderAbPlan,
  type AbPlan,
  type AbStrategy,
} from '../aws/ab-plan';
import type { AbReportFiles } from '../aws/ab-report';
import { AwsSetupError, type EndpointFacts } from '../aws/endpoint-facts';
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
import { systemClock, type Clock, type RetryPolicy } from '../aws/throttling-retry';
import {
  DEFAULT_CLOUDWATCH_DELAY_S,
  loadFlagProblems,
  parseCommandLine,
  type RawBenchFlags,
  type RawLoadFlags,
} from './bench-flags';
import { processIo, type BenchIo } from './bench-run';
import { AbExitCode, endedAbStatus } from './ab-exit';
import { listenForAbSignals, AB_SIGNALS, type AbSignal } from './ab-signals';
import { measureRun, scaledRetryPolicy, writableReportDirectory, writeAndListReport } from './ab-steps';
import { ConfigError } from '../common/config-error';
import { defaultReportDir, FlagProblems, optionalNumberFlag } from './flag-values';
import { SAGEMAKER_NAME, SAGEMAKER_NAME_RULE } from '../aws/sagemaker-names';
import {
  prefixAwareIdProblem,
  resolveSageMakerTarget,
  sageMakerBenchPlan,
  SAGEMAKER_DEFAULT_DURATION_S,
  SAGEMAKER_DEFAULT_MAX_REQUESTS,
  type SageMakerTarget,
} from './sagemaker-bench';

/** The signals `ab` stops at (and restores after); the exit codes are documented on runAbCommand. */
export { AB_SIGNALS, type AbSignal } from './ab-signals';
export { AbExitCode } from './ab-exit';

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

/** `ab`'s flags, each checked and converted once: everything either mode needs before its first AWS call. */
export interface AbSettings {
  readonly endpointName: string;
  /** switch: one strategy after another; variants: the existing variants at once; shadow: shadow endpoints. */
  readonly mode: 'switch' | 'variants' | 'shadow';
  /** --strategies as given (parsed against the endpoint's PREFIX_AWARE defaults once they are read). */
  readonly strategies: string | undefined;
  /** The flags each run's benchmark takes, as `bench --sagemaker-endpoint` would. */
  readonly benchFlags: RawBenchFlags;
  readonly region: string | undefined;
  readonly model: string | undefined;
  readonly inferenceComponent: string | undefined;
  readonly pricePerInstanceHour: number | undefined;
  readonly maxShadowCostUsd: number | undefined;
  readonly pollIntervalS: number;
  readonly switchTimeoutMin: number | undefined;
  readonly restoreTimeoutMin: number | undefined;
  readonly cloudWatchDelayS: number;
  readonly readCloudWatch: boolean;
  readonly emfNamespace: string | undefined;
  readonly out: string | undefined;
  readonly yes: boolean;
  readonly quiet: boolean;
  readonly acceptCredentialExpiry: boolean;
}

const EMF_NAMESPACE = /^[^:][^\s]{0,254}$/;

/** Every flag is checked before the first AWS call; the settings, or every problem found. */
export function resolveAbSettings(flags: RawAbFlags): AbSettings | { readonly problems: readonly string[] } {
  const checks = new FlagProblems();
  const numberFlag = (flag: string, raw: string | undefined, min: number, max: number): number | undefined =>
    checks.check(() => optionalNumberFlag(flag, raw, min, max));
  for (const problem of abFlagProblems(flags)) checks.add(problem);
  if (!flags.variants && flags.strategies !== undefined) checks.check(() => parseAbStrategies(flags.strategies!));
  const settings: AbSettings = {
    endpointName: flags.endpointName ?? '',
    mode: flags.shadow ? 'shadow' : flags.variants ? 'variants' : 'switch',
    strategies: flags.strategies,
    benchFlags: benchFlagsOf(flags),
    region: flags.region,
    model: flags.model,
    inferenceComponent: flags.inferenceComponent,
    pricePerInstanceHour: numberFlag('price-per-instance-hour', flags.pricePerInstanceHour, 0, 10_000),
    maxShadowCostUsd: numberFlag('max-shadow-cost-usd', flags.maxShadowCostUsd, 0, 1_000_000),
    pollIntervalS: numberFlag('poll-interval', flags.pollInterval ?? '30', 1, 600) ?? 30,
    switchTimeoutMin: numberFlag('switch-timeout', flags.switchTimeout, 1, 1440),
    restoreTimeoutMin: numberFlag('restore-timeout', flags.restoreTimeout, 1, 2880),
    cloudWatchDelayS:
      numberFlag('cloudwatch-delay', flags.cloudwatchDelay ?? String(DEFAULT_CLOUDWATCH_DELAY_S), 0, 3600) ??
      DEFAULT_CLOUDWATCH_DELAY_S,
    readCloudWatch: flags.cloudwatch !== false,
    emfNamespace: flags.emfNamespace,
    out: flags.out,
    yes: flags.yes === true,
    quiet: flags.quiet === true,
    acceptCredentialExpiry: flags.acceptCredentialExpiry === true,
  };
  return checks.problems.length > 0 ? { problems: checks.problems } : settings;
}

/** The problems of the flags that are not numbers: names, the load flags as bench checks them, flag combinations. */
function abFlagProblems(flags: RawAbFlags): string[] {
  const problems: string[] = [];
  if (flags.endpointName === undefined) problems.push('--endpoint-name is required');
  else if (!SAGEMAKER_NAME.test(flags.endpointName))
    problems.push(`--endpoint-name must be ${SAGEMAKER_NAME_RULE} (got ${JSON.stringify(flags.endpointName)})`);
  // The load flags as bench checks them (no target needed); PREFIX_AWARE's defaults come from the endpoint later.
  problems.push(
    ...loadFlagProblems({
      ...flags,
      duration: flags.duration ?? SAGEMAKER_DEFAULT_DURATION_S,
      maxRequests: flags.maxRequests ?? SAGEMAKER_DEFAULT_MAX_REQUESTS,
    }),
  );
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
  if (flags.variants && flags.strategies !== undefined)
    problems.push(
      'give --strategies (switch the routing one strategy after another) or --variants (compare existing variants), not both',
    );
  if (!flags.variants && flags.strategies === undefined)
    problems.push('--strategies is required (e.g. RANDOM,PREFIX_AWARE), or --variants');
  if (flags.emfNamespace !== undefined && !EMF_NAMESPACE.test(flags.emfNamespace)) {
    problems.push(
      `--emf-namespace must be 1-255 characters without spaces, not starting with ':' (got ${JSON.stringify(flags.emfNamespace)})`,
    );
  }
  return problems;
}

function benchFlagsOf(flags: RawAbFlags): RawBenchFlags {
  return {
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
}

/** One `ab` run once its endpoint is read: the settings, the endpoint, and what both modes derive from them once. */
interface AbRun {
  readonly settings: AbSettings;
  readonly deps: AbCommandDeps;
  readonly io: BenchIo;
  readonly clock: Clock;
  readonly target: SageMakerTarget;
  readonly facts: EndpointFacts;
  readonly strategies: readonly AbStrategy[];
  /** A rehearsal against a control plane on this machine runs its waits faster, like the emulators; a real one never. */
  readonly timeScale: number;
  readonly retry: RetryPolicy;
  readonly runId: string;
  readonly startedAt: Date;
  readonly directory: string;
  readonly credentialsExpireAt: Date | undefined;
  /** A fresh SageMaker client, resolving the credential chain again (undefined when the caller gave the client). */
  readonly renewSageMaker: (() => SageMakerClient) | undefined;
  readonly pollIntervalMs: number;
  /** --switch-timeout and --restore-timeout in ms of this run's (scaled) time. */
  readonly switchTimeoutMs: number | undefined;
  readonly restoreTimeoutMs: number | undefined;
}

/**
 * `prefix-router ab`: a routing A/B on a live SageMaker endpoint. Prints the plan (fleet, cost, how each switch
 * deploys and how long it takes) and changes nothing without --yes; with it, runs the workload once per strategy
 * (or once split between variants with --variants), restores the original configuration, and writes the client's
 * and CloudWatch's figures side by side. An endpoint that hosts inference components is not switched: without
 * --shadow it is refused, with it ab-shadow.ts compares the strategies on shadow endpoints and only reads the live one.
 *
 * Returns the exit status, an {@link AbExitCode}: Done 0 (or plan only), Refused 1 (bad flags or setup, nothing
 * changed), RunFailed 2 (a run failed but the endpoint was restored), LeftBehind 3 (the endpoint is NOT where it
 * began, or shadow resources are left: the message names its state and the commands that finish the job); or
 * 128 + the signal's number (SIGINT 130, SIGTERM 143, SIGHUP 129) when a signal stopped the run and everything was
 * restored.
 */
export async function runAbCommand(flags: RawAbFlags, deps: AbCommandDeps): Promise<number> {
  const { io } = deps;
  const settings = resolveAbSettings(flags);
  if ('problems' in settings) {
    io.stderr.write(`prefix-router ab: ${settings.problems.join('\n  ')}\n`);
    return AbExitCode.Refused;
  }
  const clock = deps.clock ?? systemClock;
  let target: SageMakerTarget | undefined;
  try {
    target = await resolveSageMakerTarget(
      { endpointName: settings.endpointName, region: settings.region, model: settings.model },
      { sagemaker: deps.sagemaker, runtime: deps.runtime, env: deps.env, clock },
    );
    const facts = controlPlaneFacts(target);
    const strategies =
      settings.mode === 'variants' ? [] : parseAbStrategies(settings.strategies!, facts.variants[0]?.routing);
    if (settings.mode === 'shadow') {
      refuseUnlessHostingComponents(facts);
      return await runShadowMode(await abRun(settings, deps, target, facts, strategies));
    }
    // Before anything changes: an endpoint hosting inference components is refused (aws/inference-components.ts says why).
    await refuseInferenceComponentEndpoint(target.sagemaker!, facts, clock);
    if (settings.mode === 'variants') checkVariantsComparable(facts.config);
    return await runSwitchMode(await abRun(settings, deps, target, facts, strategies));
  } catch (err) {
    if (err instanceof AwsSetupError || err instanceof ConfigError || err instanceof ModelDiscoveryError) {
      io.stderr.write(`prefix-router ab: ${err.message}\n`);
      return AbExitCode.Refused;
    }
    throw err;
  } finally {
    if (deps.runtime === undefined) target?.runtime.destroy();
    if (deps.sagemaker === undefined) target?.sagemaker?.destroy();
  }
}

function controlPlaneFacts(target: SageMakerTarget): EndpointFacts {
  if (target.facts !== undefined) return target.facts;
  throw new AwsSetupError(
    'unsupported',
    'ab needs the SageMaker control plane (DescribeEndpoint, UpdateEndpoint): AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME alone points only the runtime API elsewhere',
  );
}

function refuseUnlessHostingComponents(facts: EndpointFacts): void {
  if (hostsInferenceComponents(facts)) return;
  throw new AwsSetupError(
    'unsupported',
    `--shadow is for endpoints that host inference components; '${facts.endpointName}' serves a model on its variant, so ab switches it in place and restores it (drop --shadow)`,
  );
}

async function abRun(
  settings: AbSettings,
  deps: AbCommandDeps,
  target: SageMakerTarget,
  facts: EndpointFacts,
  strategies: readonly AbStrategy[],
): Promise<AbRun> {
  const env = deps.env ?? process.env;
  const controlUrl = env.AWS_ENDPOINT_URL_SAGEMAKER ?? env.AWS_ENDPOINT_URL;
  const timeScale =
    controlUrl !== undefined && isLoopbackUrl(controlUrl) ? Number(settings.benchFlags.timeScale ?? '1') || 1 : 1;
  const startedAt = deps.now?.() ?? new Date();
  const region = target.region;
  const minutes = (min: number | undefined) => (min === undefined ? undefined : (min * 60_000) / timeScale);
  return {
    settings,
    deps,
    io: deps.io,
    clock: deps.clock ?? systemClock,
    target,
    facts,
    strategies,
    timeScale,
    retry: scaledRetryPolicy(timeScale),
    runId: deps.runId ?? startedAt.getTime().toString(36).slice(-6),
    startedAt,
    directory: settings.out ?? defaultReportDir('ab', startedAt),
    credentialsExpireAt: await credentialExpiry(target.sagemaker!),
    // A new client resolves the credential chain again; ignoreCache (passed through to the chain's shared-file
    // providers) re-reads ~/.aws/credentials and config, which the SDK otherwise caches for the process's life.
    renewSageMaker:
      deps.renewSageMaker ??
      (deps.sagemaker === undefined
        ? () => new SageMakerClient({ region, ignoreCache: true } as SageMakerClientConfig)
        : undefined),
    pollIntervalMs: (settings.pollIntervalS * 1000) / timeScale,
    switchTimeoutMs: minutes(settings.switchTimeoutMin),
    restoreTimeoutMs: minutes(settings.restoreTimeoutMin),
  };
}

/** The duration bound (default 600 s) is the most a run sends for; a shorter workload ends sooner. */
function runSecondsOf(settings: { readonly durationMs?: number }): number {
  return (settings.durationMs ?? Number(SAGEMAKER_DEFAULT_DURATION_S) * 1000) / 1000;
}

function runShadowMode(run: AbRun): Promise<number> {
  const { settings, target } = run;
  // Only the run's duration is read here (for the cost); each shadow's own target is checked in runShadowAb.
  const benchSettings = sageMakerBenchPlan(settings.benchFlags, { ...target, model: settings.model ?? 'any' }).settings;
  return runShadowAb({
    io: run.io,
    clock: run.clock,
    target,
    facts: run.facts,
    strategies: run.strategies,
    benchFlags: settings.benchFlags,
    inferenceComponent: settings.inferenceComponent,
    model: settings.model,
    pricePerInstanceHour: settings.pricePerInstanceHour,
    maxShadowCostUsd: settings.maxShadowCostUsd,
    yes: settings.yes,
    quiet: settings.quiet,
    runSeconds: runSecondsOf(benchSettings),
    runId: run.runId,
    startedAt: run.startedAt,
    directory: run.directory,
    pollIntervalMs: run.pollIntervalMs,
    createTimeoutMs: run.switchTimeoutMs,
    cleanupTimeoutMs: run.restoreTimeoutMs,
    retry: run.retry,
    credentialsExpireAt: run.credentialsExpireAt,
    acceptCredentialExpiry: settings.acceptCredentialExpiry,
    timeScale: run.timeScale,
    renewSageMaker: run.renewSageMaker,
    signals: run.deps,
  });
}

/** The switch (and --variants) mode: plan, consent, a writable report directory, the runs, the restore, the report. */
async function runSwitchMode(run: AbRun): Promise<number> {
  const { settings, facts, io } = run;
  const names = facts.variants.map((v) => v.name);
  // Validates every bench flag now, before the plan is shown.
  const benchPlan = sageMakerBenchPlan(
    settings.benchFlags,
    run.target,
    settings.mode === 'variants' ? () => names[0] : undefined,
  );
  const plan = buildAbPlan({
    facts,
    mode: settings.mode === 'variants' ? 'variants' : 'switch',
    strategies: run.strategies,
    pricePerInstanceHour: settings.pricePerInstanceHour,
    runSeconds: runSecondsOf(benchPlan.settings),
  });
  io.stdout.write(`${renderAbPlan(plan, run.runId)}\n`);
  const expiresTooSoon = reportCredentialExpiry(run, (planMinutes(plan) * 60_000) / run.timeScale);
  if (!settings.yes) {
    io.stdout.write('\nNothing was changed. Rerun with --yes to run this plan.\n');
    return AbExitCode.Done;
  }
  if (expiresTooSoon && !settings.acceptCredentialExpiry) {
    io.stderr.write(
      'prefix-router ab: the credentials expire before the plan ends (see above); nothing was changed. Refresh them or pass --accept-credential-expiry.\n',
    );
    return AbExitCode.Refused;
  }
  const originalConfigFile = resolve(run.directory, 'original-endpoint-config.json');
  if (!(await writableReportDirectory(run.directory, io, 'nothing was changed'))) return AbExitCode.Refused;
  // With the original configuration (CreateEndpointConfig input), which the finishing commands can recreate.
  if (plan.mode === 'switch' && !(await wroteOriginalConfig(run.directory, originalConfigFile, facts, io)))
    return AbExitCode.Refused;
  const listener = listenForAbSignals(run.deps, io, {
    first: (name) =>
      `${name}: stopping the run and restoring ${facts.configName} (no further change but the restore is sent; the restore waits for a full deployment, and killing the process now can leave the endpoint on a test configuration: see docs/validate.md)`,
    again: (name) => `${name}: still restoring; the endpoint is being put back on its original configuration`,
  });
  let outcome: AbOutcome;
  try {
    outcome = await runRoutingAb(run, plan, listener.signal, originalConfigFile);
  } finally {
    listener.remove();
  }
  // Written once the restore's result is known, so the report says where the endpoint is.
  const files = await writeAndListReport(
    {
      directory: run.directory,
      plan,
      outcome,
      workload: benchPlan.settings.workload,
      runId: run.runId,
      startedAt: run.startedAt,
    },
    io,
  );
  return switchExitCode(run, outcome, files, listener.caught());
}

/** Says when the credentials expire against the plan's length; true when they expire before it ends. */
function reportCredentialExpiry(run: AbRun, needMs: number): boolean {
  const expiry = run.credentialsExpireAt;
  if (expiry === undefined) return false;
  const leftMs = expiry.getTime() - run.clock.now();
  const expiresTooSoon = leftMs < needMs;
  const leftMin = Math.round(leftMs / 60_000);
  run.io.stdout.write(
    expiresTooSoon
      ? `\nWARNING: the AWS credentials expire at ${expiry.toISOString()} (in ${leftMin} min), before the plan's ≈ ${Math.round(needMs / 60_000)} min end. If they do not refresh themselves, calls fail from then on; the restore re-resolves the credential chain and retries until --restore-timeout, so refresh them in time (aws sso login, a longer role session) or pass --accept-credential-expiry when they refresh themselves.\n`
      : `Credentials expire at ${expiry.toISOString()} (in ${leftMin} min), after the plan's ≈ ${Math.round(needMs / 60_000)} min.\n`,
  );
  return expiresTooSoon;
}

async function wroteOriginalConfig(
  directory: string,
  file: string,
  facts: EndpointFacts,
  io: BenchIo,
): Promise<boolean> {
  try {
    await writeFile(file, `${JSON.stringify(configCopyInput(facts.config, facts.configName), null, 2)}\n`);
    return true;
  } catch (err) {
    io.stderr.write(
      `prefix-router ab: --out ${directory} is not writable (${(err as Error).message}); nothing was changed\n`,
    );
    return false;
  }
}

async function runRoutingAb(
  run: AbRun,
  plan: AbPlan,
  signal: AbortSignal,
  originalConfigFile: string,
): Promise<AbOutcome> {
  const { settings, deps, io } = run;
  const cloudwatch = settings.readCloudWatch
    ? (deps.cloudwatch ?? new CloudWatchClient({ region: run.target.region }))
    : undefined;
  try {
    return await new RoutingAb(
      {
        sagemaker: run.target.sagemaker!,
        renewSageMaker: run.renewSageMaker,
        cloudwatch,
        clock: run.clock,
        log: (line) => io.stderr.write(`${line}\n`),
        runWorkload: (workloadRun: WorkloadRun) =>
          measureRun(
            sageMakerBenchPlan(settings.benchFlags, run.target, workloadRun.targetVariantOf),
            { io, quiet: settings.quiet, label: workloadRun.label },
            workloadRun.signal,
          ),
      },
      {
        plan,
        runId: run.runId,
        signal,
        pollIntervalMs: run.pollIntervalMs,
        switchTimeoutMs: run.switchTimeoutMs,
        restoreTimeoutMs: run.restoreTimeoutMs,
        cloudWatchDelayMs: settings.cloudWatchDelayS * 1000,
        retry: run.retry,
        sidecarNamespace: settings.emfNamespace,
        originalConfigFile,
      },
    ).run();
  } finally {
    if (deps.cloudwatch === undefined) cloudwatch?.destroy();
  }
}

function switchExitCode(
  run: AbRun,
  outcome: AbOutcome,
  files: AbReportFiles | undefined,
  caught: AbSignal | undefined,
): number {
  const { io, facts } = run;
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
    return AbExitCode.LeftBehind;
  }
  const ended = endedAbStatus(outcome, io, caught, 'the endpoint was restored');
  if (ended.status !== undefined) return ended.status;
  if (files !== undefined && files.benchmark === undefined && outcome.runs.length > 0) {
    io.stderr.write(
      'prefix-router ab: no run measured anything: each ended before its warm-up did (shorten --warmup or lengthen the runs)\n',
    );
    return AbExitCode.RunFailed;
  }
  return ended.allFailed > 0 || files === undefined ? AbExitCode.RunFailed : AbExitCode.Done;
}
