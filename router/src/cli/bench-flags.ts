import { Command, CommanderError } from 'commander';
import { basename } from 'node:path';
import {
  LIVE_RANGES,
  normalizeMetricsUrl,
  parseTargetUrl,
  DEFAULT_INSTANCE_HEADER,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type LiveBenchmarkOptions,
} from '../benchmark';
import { baselineProblem, strategyLabel, type StrategyId } from '../report/report-model';
import type { Workload } from '../workload/workload';
import { parseWorkloadSpec } from '../workload/workload-spec';
import { policyOptionsOf } from '../policy/policy-config';
import { parsePolicySpec } from '../policy/policy-spec';
import { recognizingCaptureFiles } from './workload-flag';
import { DEFAULT_BLOCK_TOKENS } from '../state/block-hash';
import { ConfigError } from '../common/config-error';
import { collect, FlagProblems, integerFlag, numberFlag, type FlagRange } from './flag-values';

/**
 * The flags of `prefix-router bench` (declared once, for the CLI and for in-process parsing) and their
 * validation into BenchSettings. Flags are validated before anything is sent; every problem is listed at once,
 * each naming the flag and its allowed range. The run itself is in bench-run.ts.
 */
/** The load flags `bench` and `ab` share (ab replays the same workload through each strategy), as typed. */
export interface RawLoadFlags {
  readonly workload?: string;
  readonly concurrency?: string;
  readonly rate?: string;
  readonly duration?: string;
  readonly maxRequests?: string;
  readonly warmup?: string;
  readonly timeScale?: string;
  readonly model?: string;
  readonly timeout?: string;
}

export interface RawBenchFlags extends RawLoadFlags {
  readonly url?: string;
  readonly label?: string;
  readonly strategy?: string;
  readonly fleetKvTokens?: string;
  readonly backendMetrics?: readonly string[];
  readonly instanceHeader?: string;
  readonly drain?: string;
  readonly header?: readonly string[];
  readonly ignoreEos?: boolean;
  readonly out?: string;
  readonly baseline?: string;
  readonly append?: string;
  readonly quiet?: boolean;
  readonly sagemakerEndpoint?: string;
  readonly region?: string;
  readonly api?: string;
  readonly prefixAwareId?: string;
  readonly inferenceComponent?: string;
  readonly cloudwatch?: boolean;
  readonly cloudwatchDelay?: string;
}

export interface BenchSettings {
  readonly url: string;
  /** The workload with --rate / --concurrency applied. */
  readonly workload: Workload;
  readonly model?: string;
  readonly label: string;
  readonly strategy: StrategyId;
  /** KV tokens of all instances together, for the hit-rate ceilings. */
  readonly fleetKvTokens?: number;
  readonly durationMs?: number;
  readonly maxRequests?: number;
  readonly warmupMs: number;
  readonly timeScale: number;
  readonly requestTimeoutMs: number;
  readonly drainTimeoutMs?: number;
  readonly backendMetricsUrls: readonly string[];
  readonly instanceHeader: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly ignoreEos: boolean;
  readonly out?: string;
  readonly baseline?: string;
  readonly append?: string;
  readonly quiet: boolean;
  /** With --cloudwatch: how long after the run CloudWatch gets to publish before it is read. */
  readonly cloudWatchDelayMs: number;
}

/** CloudWatch publishes endpoint metrics at one-minute granularity and may take a few minutes more. */
export const DEFAULT_CLOUDWATCH_DELAY_S = 180;

/** Declares the bench flags on `command` (the CLI's sub-command, or a bare Command for in-process parsing). */
export function defineBenchOptions(command: Command): Command {
  const r = LIVE_RANGES;
  command
    .description(
      'benchmark a router (or any OpenAI-compatible URL) with a workload; writes a JSON, markdown and HTML report',
    )
    .option(
      '--url <url>',
      'base URL of the server, http(s) (requests go to URL/v1/chat/completions or URL/v1/completions)',
    )
    .option('--workload <spec>', "workload spec, e.g. 'long-context?groups=550' (see docs/workloads.md)")
    .option('--concurrency <n>', `closed loop: keep n requests in flight, ${r.concurrency.min}..${r.concurrency.max}`)
    .option('--rate <r>', 'open loop: Poisson arrivals at r requests/s, (0, 100000]')
    .option('--duration <s>', 'stop sending after s seconds of model time, (0, 604800]; in-flight requests then drain')
    .option('--max-requests <n>', `send at most n requests, ${r.maxRequests.min}..${r.maxRequests.max}`)
    .option('--warmup <s>', 'leave requests sent in the first s seconds out of latency and hit rate, [0, 604800]', '0')
    .option('--time-scale <x>', 'the servers run x times faster than real time (emulators), (0, 1000000]', '1')
    .option('--model <name>', 'model name in requests (default: the first model GET URL/v1/models lists)')
    .option('--label <name>', 'name of this run in the report (default: the strategy)')
    .option(
      '--strategy <name>',
      'routing strategy the server runs, as the report names it; a policy spec like sagemaker-prefix-aware?prefixLength=2048 records its options (default: the label, else "live")',
    )
    .option(
      '--fleet-kv-tokens <n>',
      `KV-cache tokens of all instances together (vLLM logs "GPU KV cache size: N tokens" per instance): adds the hit-rate ceilings, ${DEFAULT_BLOCK_TOKENS}..1e12`,
    )
    .option(
      '--backend-metrics <url...>',
      'Prometheus endpoint of each backend (a server root gets /metrics); repeat or list several',
    )
    .option('--instance-header <name>', 'response header naming the serving instance', DEFAULT_INSTANCE_HEADER)
    .option(
      '--timeout <s>',
      'per-request timeout in seconds of model time, (0, 86400]',
      String(DEFAULT_REQUEST_TIMEOUT_MS / 1000),
    )
    .option(
      '--drain <s>',
      'after the last send, wait at most s seconds of model time for in-flight requests, [0, 86400] (default: --timeout)',
    )
    .option(
      '--header <name: value>',
      'extra request header for the server (e.g. "authorization: Bearer …"); repeatable',
      collect,
    )
    .option('--no-ignore-eos', "do not send vLLM's ignore_eos (for servers that reject unknown fields)")
    .option(
      '--out <dir>',
      "report directory (default: ./prefix-router-reports/bench-<time>, or the --append report's directory)",
    )
    .option('--baseline <label>', 'run to compare against: a label or strategy name (default: random, when present)')
    .option(
      '--append <report.json>',
      'add this run to an existing report (same workload), rewriting it in place unless --out is given',
    )
    .option('--quiet', 'no progress and no table; print only the report paths');
  return defineSageMakerBenchOptions(command);
}

/** The flags of `bench --sagemaker-endpoint`: the endpoint, its API, routing hint, component and CloudWatch read. */
function defineSageMakerBenchOptions(command: Command): Command {
  return command
    .option(
      '--sagemaker-endpoint <name>',
      'benchmark a SageMaker endpoint through the AWS SDK instead of --url (credentials and region from the default chain; AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME honoured); see docs/validate.md',
    )
    .option('--region <region>', 'AWS region of --sagemaker-endpoint (default: the SDK chain, e.g. AWS_REGION)')
    .option(
      '--api <api>',
      'with --sagemaker-endpoint: invoke (InvokeEndpointWithResponseStream) or openai (the /openai/v1 path with a bearer token in --header)',
      'invoke',
    )
    .option(
      '--prefix-aware-id <id>',
      'with --sagemaker-endpoint: PrefixAwareId routing hint sent with every request (1-64 printable ASCII)',
    )
    .option(
      '--inference-component <name>',
      'with --sagemaker-endpoint: the inference component (model or LoRA adapter) every request invokes (InferenceComponentName); required on an endpoint that hosts components',
    )
    .option(
      '--cloudwatch',
      "with --sagemaker-endpoint: after the run, read CloudWatch's metrics for its window into cloudwatch.md beside the report",
    )
    .option(
      '--cloudwatch-delay <s>',
      `with --cloudwatch: seconds to wait after the run for CloudWatch to publish, 0..3600 (default ${DEFAULT_CLOUDWATCH_DELAY_S})`,
    );
}

/**
 * Parses a command's arguments (without the command name) in-process, as the CLI would, into its raw flags;
 * commander's own errors (unknown option, missing value) become a ConfigError.
 */
export function parseCommandLine<Flags extends object>(command: Command, argv: readonly string[]): Flags {
  command.exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  try {
    command.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) throw new ConfigError([err.message.replace(/^error: /, '')]);
    throw err;
  }
  return command.opts<Flags>();
}

/** Parses bench arguments (without `prefix-router bench`) in-process, as the CLI would; throws ConfigError. */
export function parseBenchArgv(argv: readonly string[]): BenchSettings {
  return parseBenchFlags(parseCommandLine(defineBenchOptions(new Command('bench')), argv));
}

/** Query option names the user wrote in a workload spec (`kind?name=value&…`). */
function specOptionNames(spec: string): string[] {
  const q = spec.indexOf('?');
  if (q < 0) return [];
  return spec
    .slice(q + 1)
    .split('&')
    .filter((p) => p !== '')
    .map((p) => decodeURIComponent(p.split('=')[0]));
}

function withOption(spec: string, name: string, value: number): string {
  return `${spec}${spec.includes('?') ? '&' : '?'}${name}=${value}`;
}

/** `number` and `seconds` flag readers that collect problems instead of throwing. */
function flagReaders(checks: FlagProblems) {
  const number = (flag: string, raw: string | undefined, range: FlagRange, integer = false): number | undefined =>
    raw === undefined
      ? undefined
      : checks.check(() =>
          integer
            ? integerFlag(flag, raw, range.min, range.max)
            : numberFlag(flag, raw, range.min, range.max, range.minExclusive),
        );
  const seconds = (flag: string, raw: string | undefined, range: FlagRange): number | undefined => {
    const s = number(flag, raw, { min: range.min / 1000, max: range.max / 1000, minExclusive: range.minExclusive });
    return s === undefined ? undefined : s * 1000;
  };
  return { number, seconds };
}

/** The load flags read into settings: what a run sends and for how long, independent of where it goes. */
export interface LoadSettings {
  readonly workload: Workload | undefined;
  readonly durationMs?: number;
  readonly maxRequests?: number;
  readonly warmupMs: number;
  readonly timeScale: number;
  readonly requestTimeoutMs: number;
  readonly model?: string;
}

/**
 * Reads the load flags `bench` and `ab` share (RawLoadFlags), adding every problem to `checks`. Needs no target:
 * `ab` checks them before it asks AWS anything, `bench` as part of its own flags.
 */
export function readLoadFlags(flags: RawLoadFlags, checks: FlagProblems): LoadSettings {
  const problems = { push: (problem: string) => checks.add(problem) };
  const { number, seconds } = flagReaders(checks);
  const r = LIVE_RANGES;
  const concurrency = number('concurrency', flags.concurrency, r.concurrency, true);
  const rate = number('rate', flags.rate, { min: 0, max: 100_000, minExclusive: true });
  let workload: Workload | undefined;
  if (flags.workload === undefined)
    problems.push("--workload is required: a workload spec such as 'long-context' or 'short-chat?count=100'");
  else {
    let spec = flags.workload.trim();
    const given = specOptionNames(spec);
    const trace = spec.startsWith('trace:');
    if (flags.concurrency !== undefined && flags.rate !== undefined)
      problems.push('give --concurrency (closed loop) or --rate (open loop), not both');
    else if (rate !== undefined) {
      if (trace)
        problems.push(
          '--rate does not apply to trace workloads: their arrivals are the trace timestamps (use speedup= in --workload)',
        );
      else if (given.includes('rate')) problems.push('--rate conflicts with rate= in --workload; give one of them');
      else if (given.includes('concurrency'))
        problems.push('--rate conflicts with concurrency= in --workload (a closed loop); give one of them');
      else spec = withOption(spec, 'rate', rate);
    } else if (concurrency !== undefined) {
      if (given.includes('concurrency'))
        problems.push('--concurrency conflicts with concurrency= in --workload; give one of them');
      else spec = withOption(spec, 'concurrency', concurrency);
    }
    if (flags.concurrency === undefined || concurrency !== undefined) {
      try {
        workload = recognizingCaptureFiles(() => parseWorkloadSpec(spec));
      } catch (err) {
        problems.push(`--workload: ${(err as Error).message}`);
      }
    }
  }

  const durationMs = seconds('duration', flags.duration, r.durationMs);
  const maxRequests = number('max-requests', flags.maxRequests, r.maxRequests, true);
  const warmupMs = seconds('warmup', flags.warmup ?? '0', r.warmupMs) ?? 0;
  if (durationMs !== undefined && warmupMs > 0 && warmupMs >= durationMs) {
    problems.push(`--warmup (${warmupMs / 1000} s) must be shorter than --duration (${durationMs / 1000} s)`);
  }
  const timeScale = number('time-scale', flags.timeScale ?? '1', r.timeScale) ?? 1;
  const requestTimeoutMs =
    seconds('timeout', flags.timeout ?? String(DEFAULT_REQUEST_TIMEOUT_MS / 1000), r.requestTimeoutMs) ??
    DEFAULT_REQUEST_TIMEOUT_MS;
  const model = flags.model !== undefined && flags.model.trim() === '' ? undefined : flags.model;
  if (flags.model !== undefined && model === undefined) problems.push('--model must not be empty');
  return { workload, durationMs, maxRequests, warmupMs, timeScale, requestTimeoutMs, model };
}

/** Every problem of the load flags, [] when they are valid (see readLoadFlags). */
export function loadFlagProblems(flags: RawLoadFlags): readonly string[] {
  const checks = new FlagProblems();
  readLoadFlags(flags, checks);
  return checks.problems;
}

/** Problem sink of a flag check. */
interface Problems {
  push(problem: string): void;
}

/** --url is required and valid; the SageMaker flags apply only with --sagemaker-endpoint. */
function targetFlagProblems(flags: RawBenchFlags, problems: Problems): void {
  if (
    flags.sagemakerEndpoint === undefined &&
    (flags.region !== undefined ||
      flags.prefixAwareId !== undefined ||
      flags.inferenceComponent !== undefined ||
      (flags.api !== undefined && flags.api !== 'invoke') ||
      flags.cloudwatch ||
      flags.cloudwatchDelay !== undefined)
  ) {
    problems.push(
      '--region, --api, --prefix-aware-id, --inference-component and --cloudwatch apply only with --sagemaker-endpoint',
    );
  }
  if (flags.url === undefined)
    problems.push('--url is required: the base URL of the server, e.g. http://127.0.0.1:8080');
  else {
    try {
      parseTargetUrl(flags.url, '--url');
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
}

/** --header "name: value" flags as lower-cased names and trimmed values. */
function requestHeaders(raws: readonly string[], problems: Problems): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const raw of raws) {
    const colon = raw.indexOf(':');
    const name = colon < 0 ? '' : raw.slice(0, colon).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      problems.push(
        `--header must be "name: value" with an HTTP header name (got "${raw.length > 40 ? `${raw.slice(0, 40)}…` : raw}")`,
      );
      continue;
    }
    headers[name.toLowerCase()] = raw.slice(colon + 1).trim();
  }
  return headers;
}

/** Validates raw flag strings; collects every problem, each naming the flag and its allowed range. */
export function parseBenchFlags(flags: RawBenchFlags): BenchSettings {
  const checks = new FlagProblems();
  const problems = { push: (problem: string) => checks.add(problem) };
  const { number, seconds } = flagReaders(checks);
  const r = LIVE_RANGES;

  targetFlagProblems(flags, problems);

  const { workload, durationMs, maxRequests, warmupMs, timeScale, requestTimeoutMs, model } = readLoadFlags(
    flags,
    checks,
  );
  const drainTimeoutMs = seconds('drain', flags.drain, r.drainTimeoutMs);
  const cloudWatchDelayMs =
    seconds('cloudwatch-delay', flags.cloudwatchDelay ?? String(DEFAULT_CLOUDWATCH_DELAY_S), {
      min: 0,
      max: 3_600_000,
    }) ?? DEFAULT_CLOUDWATCH_DELAY_S * 1000;

  const nonEmpty = (flag: string, value: string | undefined): string | undefined => {
    if (value !== undefined && value.trim() === '') problems.push(`--${flag} must not be empty`);
    return value?.trim() === '' ? undefined : value;
  };
  const label = nonEmpty('label', flags.label);
  const strategy = nonEmpty('strategy', flags.strategy);
  const baseline = nonEmpty('baseline', flags.baseline);
  const out = nonEmpty('out', flags.out);
  const append = nonEmpty('append', flags.append);
  if (append !== undefined && out === undefined && !/^[A-Za-z0-9._-]+\.json$/.test(basename(append))) {
    problems.push(
      `--append must name a .json file whose name is letters, digits, '.', '_' or '-' (got "${append}"), or give --out`,
    );
  }

  const instanceHeader = flags.instanceHeader ?? DEFAULT_INSTANCE_HEADER;
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(instanceHeader))
    problems.push(`--instance-header must be an HTTP header name (got "${instanceHeader}")`);

  const backendMetricsUrls: string[] = [];
  for (const url of flags.backendMetrics ?? []) {
    try {
      backendMetricsUrls.push(normalizeMetricsUrl(url, '--backend-metrics'));
    } catch (err) {
      problems.push((err as Error).message);
    }
  }

  const headers = requestHeaders(flags.header ?? [], problems);

  const strategyId: StrategyId = strategyIdOf(strategy ?? label ?? 'live', strategy !== undefined, problems);
  // Without --append the report holds this run alone; with it, bench-run checks against the appended report's runs.
  const baselineMisses =
    baseline === undefined || append !== undefined
      ? undefined
      : baselineProblem(baseline, [{ label: label ?? strategyLabel(strategyId), strategy: strategyId }]);
  if (baselineMisses !== undefined) problems.push(`--baseline ${baselineMisses}`);
  const fleetKvTokens = number('fleet-kv-tokens', flags.fleetKvTokens, { min: DEFAULT_BLOCK_TOKENS, max: 1e12 }, true);
  checks.throwIfAny();
  return {
    url: flags.url!,
    workload: workload!,
    model,
    label: label ?? strategyLabel(strategyId),
    strategy: strategyId,
    fleetKvTokens,
    durationMs,
    maxRequests,
    warmupMs,
    timeScale,
    requestTimeoutMs,
    drainTimeoutMs,
    backendMetricsUrls,
    instanceHeader,
    headers,
    ignoreEos: flags.ignoreEos ?? true,
    out,
    baseline,
    append,
    quiet: flags.quiet ?? false,
    cloudWatchDelayMs,
  };
}

/**
 * The strategy a run is reported under: a policy spec (`name?option=value&…`) is parsed so its options show;
 * a bare name is kept as given (a router may run a policy this package does not know).
 */
function strategyIdOf(text: string, fromFlag: boolean, problems: { push(problem: string): void }): StrategyId {
  if (!fromFlag || !text.includes('?')) return { name: text.trim() };
  try {
    const config = parsePolicySpec(text, '--strategy');
    return { name: config.name, options: policyOptionsOf(config) };
  } catch (err) {
    problems.push((err as Error).message);
    return { name: text };
  }
}

/** The runLiveBenchmark options a bench invocation stands for. */
export function liveOptionsOf(settings: BenchSettings): LiveBenchmarkOptions {
  return {
    url: settings.url,
    workload: settings.workload,
    model: settings.model,
    maxRequests: settings.maxRequests,
    durationMs: settings.durationMs,
    warmupMs: settings.warmupMs,
    timeScale: settings.timeScale,
    requestTimeoutMs: settings.requestTimeoutMs,
    drainTimeoutMs: settings.drainTimeoutMs,
    instanceHeader: settings.instanceHeader,
    backendMetricsUrls: settings.backendMetricsUrls,
    headers: settings.headers,
    ignoreEos: settings.ignoreEos,
    ceilings:
      settings.fleetKvTokens === undefined
        ? undefined
        : {
            fleetCapacityBlocks: Math.floor(settings.fleetKvTokens / DEFAULT_BLOCK_TOKENS),
            blockTokens: DEFAULT_BLOCK_TOKENS,
          },
  };
}
