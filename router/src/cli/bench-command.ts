import { Command, CommanderError } from 'commander';
import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  appendToReport,
  buildLiveReport,
  checkAppendable,
  fileSlug,
  fleetKvTokensOf,
  LIVE_RANGES,
  normalizeMetricsUrl,
  parseTargetUrl,
  ProgressReporter,
  recordsJsonl,
  runLiveBenchmark,
  DEFAULT_INSTANCE_HEADER,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type LiveBenchmarkOptions,
  type LiveBenchmarkResult,
  type ProgressStream,
} from '../benchmark';
import { parseReportJson } from '../sim/report/render-json';
import { strategyLabel, type BenchmarkReport, type StrategyId } from '../sim/report/report-model';
import { terminalSummary } from '../sim/report/terminal-summary';
import { writeReport, type ReportFiles } from '../sim/report/write-report';
import type { Workload } from '../sim/workload/workload';
import { parseWorkloadSpec } from '../sim/workload/workload-spec';
import { policyOptionsOf } from '../policy/policy-config';
import { parsePolicySpec } from '../policy/policy-spec';
import { DEFAULT_BLOCK_TOKENS } from '../state/block-hash';
import { defaultReportDir } from './flag-values';
import { runSageMakerBench } from './sagemaker-bench';

/**
 * `prefix-router bench`: one live run of a workload against a router (or any OpenAI-compatible URL), written
 * as a report (JSON, markdown, HTML) and optionally appended to an earlier report so strategies run one after
 * another compare side by side. Flags are validated before anything is sent; every message names the flag
 * and its allowed range.
 */
export function register(program: Command): void {
  defineBenchOptions(program.command('bench')).action(async (flags: RawBenchFlags) => {
    if (flags.sagemakerEndpoint !== undefined) {
      process.exitCode = await runSageMakerBench(flags, processIo());
      return;
    }
    const settings = parseBenchFlags(flags);
    process.exitCode = await runBench(settings, processIo());
  });
}

export interface RawBenchFlags {
  readonly url?: string;
  readonly workload?: string;
  readonly concurrency?: string;
  readonly rate?: string;
  readonly duration?: string;
  readonly maxRequests?: string;
  readonly warmup?: string;
  readonly timeScale?: string;
  readonly model?: string;
  readonly label?: string;
  readonly strategy?: string;
  readonly fleetKvTokens?: string;
  readonly backendMetrics?: readonly string[];
  readonly instanceHeader?: string;
  readonly timeout?: string;
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
}

export class BenchFlagError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.length === 1 ? problems[0] : `invalid bench flags:\n  ${problems.join('\n  ')}`);
    this.name = 'BenchFlagError';
  }
}

const collect = (value: string, previous: readonly string[] = []): string[] => [...previous, value];

/** Declares the bench flags on `command` (the CLI's sub-command, or a bare Command for in-process parsing). */
export function defineBenchOptions(command: Command): Command {
  const r = LIVE_RANGES;
  return command
    .description('benchmark a router (or any OpenAI-compatible URL) with a workload; writes a JSON, markdown and HTML report')
    .option('--url <url>', 'base URL of the server, http(s) (requests go to URL/v1/chat/completions or URL/v1/completions)')
    .option('--workload <spec>', "workload spec, e.g. 'long-context?groups=550' (see docs/workloads.md)")
    .option('--concurrency <n>', `closed loop: keep n requests in flight, ${r.concurrency.min}..${r.concurrency.max}`)
    .option('--rate <r>', 'open loop: Poisson arrivals at r requests/s, (0, 100000]')
    .option('--duration <s>', 'stop sending after s seconds of model time, (0, 604800]; in-flight requests then drain')
    .option('--max-requests <n>', `send at most n requests, ${r.maxRequests.min}..${r.maxRequests.max}`)
    .option('--warmup <s>', 'leave requests sent in the first s seconds out of latency and hit rate, [0, 604800]', '0')
    .option('--time-scale <x>', 'the servers run x times faster than real time (emulators), (0, 1000000]', '1')
    .option('--model <name>', 'model name in requests (default: the first model GET URL/v1/models lists)')
    .option('--label <name>', 'name of this run in the report (default: the strategy)')
    .option('--strategy <name>', 'routing strategy the server runs, as the report names it; a policy spec like sagemaker-prefix-aware?prefixLength=2048 records its options (default: the label, else "live")')
    .option('--fleet-kv-tokens <n>', `KV-cache tokens of all instances together (vLLM logs "GPU KV cache size: N tokens" per instance): adds the hit-rate ceilings, ${DEFAULT_BLOCK_TOKENS}..1e12`)
    .option('--backend-metrics <url...>', 'Prometheus endpoint of each backend (a server root gets /metrics); repeat or list several')
    .option('--instance-header <name>', 'response header naming the serving instance', DEFAULT_INSTANCE_HEADER)
    .option('--timeout <s>', 'per-request timeout in seconds of model time, (0, 86400]', String(DEFAULT_REQUEST_TIMEOUT_MS / 1000))
    .option('--drain <s>', 'after the last send, wait at most s seconds of model time for in-flight requests, [0, 86400] (default: --timeout)')
    .option('--header <name: value>', 'extra request header for the server (e.g. "authorization: Bearer …"); repeatable', collect)
    .option('--no-ignore-eos', 'do not send vLLM\'s ignore_eos (for servers that reject unknown fields)')
    .option('--out <dir>', 'report directory (default: ./reports/bench-<time>, or the --append report\'s directory)')
    .option('--baseline <label>', 'run to compare against: a label or strategy name (default: random, when present)')
    .option('--append <report.json>', 'add this run to an existing report (same workload), rewriting it in place unless --out is given')
    .option('--quiet', 'no progress and no table; print only the report paths')
    .option('--sagemaker-endpoint <name>', 'benchmark a SageMaker endpoint through the AWS SDK instead of --url (credentials and region from the default chain; AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME honoured); see docs/validate.md')
    .option('--region <region>', 'AWS region of --sagemaker-endpoint (default: the SDK chain, e.g. AWS_REGION)')
    .option('--api <api>', 'with --sagemaker-endpoint: invoke (InvokeEndpointWithResponseStream) or openai (the /openai/v1 path with a bearer token in --header)', 'invoke')
    .option('--prefix-aware-id <id>', 'with --sagemaker-endpoint: PrefixAwareId routing hint sent with every request (1-64 printable ASCII)')
    .option('--cloudwatch', "with --sagemaker-endpoint: after the run, read CloudWatch's metrics for its window into cloudwatch.md beside the report")
    .option('--cloudwatch-delay <s>', 'with --cloudwatch: seconds to wait after the run for CloudWatch to publish, 0..3600 (default 180)');
}

/**
 * Parses a command's arguments (without the command name) in-process, as the CLI would, into its raw flags;
 * commander's own errors (unknown option, missing value) become a BenchFlagError.
 */
export function parseCommandLine<Flags extends object>(command: Command, argv: readonly string[]): Flags {
  command.exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  try {
    command.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) throw new BenchFlagError([err.message.replace(/^error: /, '')]);
    throw err;
  }
  return command.opts<Flags>();
}

/** Parses bench arguments (without `prefix-router bench`) in-process, as the CLI would; throws BenchFlagError. */
export function parseBenchArgv(argv: readonly string[]): BenchSettings {
  return parseBenchFlags(parseCommandLine(defineBenchOptions(new Command('bench')), argv));
}

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

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

/** Validates raw flag strings; collects every problem, each naming the flag and its allowed range. */
export function parseBenchFlags(flags: RawBenchFlags): BenchSettings {
  const problems: string[] = [];
  const number = (
    flag: string,
    raw: string | undefined,
    range: { min: number; max: number; minExclusive?: boolean },
    integer = false,
  ): number | undefined => {
    if (raw === undefined) return undefined;
    const value = Number(raw);
    const low = range.minExclusive ? value > range.min : value >= range.min;
    if (!DECIMAL.test(raw.trim()) || !Number.isFinite(value) || (integer && !Number.isInteger(value)) || !low || value > range.max) {
      const interval = range.minExclusive ? `greater than ${range.min} and at most ${range.max}` : `between ${range.min} and ${range.max}`;
      problems.push(`--${flag} must be ${integer ? 'an integer' : 'a number'} ${interval} (got ${JSON.stringify(raw)})`);
      return undefined;
    }
    return value;
  };
  const seconds = (flag: string, raw: string | undefined, range: { min: number; max: number; minExclusive?: boolean }): number | undefined => {
    const s = number(flag, raw, { min: range.min / 1000, max: range.max / 1000, minExclusive: range.minExclusive });
    return s === undefined ? undefined : s * 1000;
  };
  const r = LIVE_RANGES;

  if (
    flags.sagemakerEndpoint === undefined &&
    (flags.region !== undefined || flags.prefixAwareId !== undefined || (flags.api !== undefined && flags.api !== 'invoke') || flags.cloudwatch || flags.cloudwatchDelay !== undefined)
  ) {
    problems.push('--region, --api, --prefix-aware-id and --cloudwatch apply only with --sagemaker-endpoint');
  }
  if (flags.url === undefined) problems.push('--url is required: the base URL of the server, e.g. http://127.0.0.1:8080');
  else {
    try {
      parseTargetUrl(flags.url, '--url');
    } catch (err) {
      problems.push((err as Error).message);
    }
  }

  const concurrency = number('concurrency', flags.concurrency, r.concurrency, true);
  const rate = number('rate', flags.rate, { min: 0, max: 100_000, minExclusive: true });
  let workload: Workload | undefined;
  if (flags.workload === undefined) problems.push("--workload is required: a workload spec such as 'long-context' or 'short-chat?count=100'");
  else {
    let spec = flags.workload.trim();
    const given = specOptionNames(spec);
    const trace = spec.startsWith('trace:');
    if (flags.concurrency !== undefined && flags.rate !== undefined) problems.push('give --concurrency (closed loop) or --rate (open loop), not both');
    else if (rate !== undefined) {
      if (trace) problems.push('--rate does not apply to trace workloads: their arrivals are the trace timestamps (use speedup= in --workload)');
      else if (given.includes('rate')) problems.push('--rate conflicts with rate= in --workload; give one of them');
      else if (given.includes('concurrency')) problems.push('--rate conflicts with concurrency= in --workload (a closed loop); give one of them');
      else spec = withOption(spec, 'rate', rate);
    } else if (concurrency !== undefined) {
      if (given.includes('concurrency')) problems.push('--concurrency conflicts with concurrency= in --workload; give one of them');
      else spec = withOption(spec, 'concurrency', concurrency);
    }
    if (flags.concurrency === undefined || concurrency !== undefined) {
      try {
        workload = parseWorkloadSpec(spec);
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
  const requestTimeoutMs = seconds('timeout', flags.timeout ?? String(DEFAULT_REQUEST_TIMEOUT_MS / 1000), r.requestTimeoutMs) ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const drainTimeoutMs = seconds('drain', flags.drain, r.drainTimeoutMs);

  const nonEmpty = (flag: string, value: string | undefined): string | undefined => {
    if (value !== undefined && value.trim() === '') problems.push(`--${flag} must not be empty`);
    return value?.trim() === '' ? undefined : value;
  };
  const model = nonEmpty('model', flags.model);
  const label = nonEmpty('label', flags.label);
  const strategy = nonEmpty('strategy', flags.strategy);
  const baseline = nonEmpty('baseline', flags.baseline);
  const out = nonEmpty('out', flags.out);
  const append = nonEmpty('append', flags.append);
  if (append !== undefined && out === undefined && !/^[A-Za-z0-9._-]+\.json$/.test(basename(append))) {
    problems.push(`--append must name a .json file whose name is letters, digits, '.', '_' or '-' (got "${append}"), or give --out`);
  }

  const instanceHeader = flags.instanceHeader ?? DEFAULT_INSTANCE_HEADER;
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(instanceHeader)) problems.push(`--instance-header must be an HTTP header name (got "${instanceHeader}")`);

  const backendMetricsUrls: string[] = [];
  for (const url of flags.backendMetrics ?? []) {
    try {
      backendMetricsUrls.push(normalizeMetricsUrl(url, '--backend-metrics'));
    } catch (err) {
      problems.push((err as Error).message);
    }
  }

  const headers: Record<string, string> = {};
  for (const raw of flags.header ?? []) {
    const colon = raw.indexOf(':');
    const name = colon < 0 ? '' : raw.slice(0, colon).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      problems.push(`--header must be "name: value" with an HTTP header name (got "${raw.length > 40 ? `${raw.slice(0, 40)}…` : raw}")`);
      continue;
    }
    headers[name.toLowerCase()] = raw.slice(colon + 1).trim();
  }

  const strategyId: StrategyId = strategyIdOf(strategy ?? label ?? 'live', strategy !== undefined, problems);
  const fleetKvTokens = number('fleet-kv-tokens', flags.fleetKvTokens, { min: DEFAULT_BLOCK_TOKENS, max: 1e12 }, true);
  if (problems.length > 0) throw new BenchFlagError(problems);
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
  };
}

/**
 * The strategy a run is reported under: a policy spec (`name?option=value&…`) is parsed so its options show;
 * a bare name is kept as given (a router may run a policy this package does not know).
 */
function strategyIdOf(text: string, fromFlag: boolean, problems: string[]): StrategyId {
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
    ceilings: settings.fleetKvTokens === undefined ? undefined : { fleetCapacityBlocks: Math.floor(settings.fleetKvTokens / DEFAULT_BLOCK_TOKENS), blockTokens: DEFAULT_BLOCK_TOKENS },
  };
}

export interface BenchIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: ProgressStream;
  /** Registers the Ctrl-C handler; returns its removal. */
  readonly onInterrupt?: (handler: () => void) => () => void;
}

export function processIo(): BenchIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    onInterrupt: (handler) => {
      process.on('SIGINT', handler);
      return () => process.off('SIGINT', handler);
    },
  };
}

export interface BenchOutcome {
  readonly exitCode: number;
  readonly report: BenchmarkReport;
  readonly files: ReportFiles;
  readonly recordsFile: string;
  readonly result: LiveBenchmarkResult;
}

/**
 * Runs the benchmark a parsed bench command describes and writes the report. Ctrl-C once stops sending and
 * lets in-flight requests finish; twice cancels them; either way the partial report is written. Exit code: 0,
 * 130 after an abort, 2 when no request succeeded.
 */
export async function runBenchWithOutcome(settings: BenchSettings, io: BenchIo, extra: Partial<LiveBenchmarkOptions> = {}): Promise<BenchOutcome> {
  let existing: BenchmarkReport | undefined;
  if (settings.append !== undefined) {
    let text: string;
    try {
      text = await readFile(settings.append, 'utf8');
    } catch (err) {
      throw new Error(`--append: cannot read ${settings.append}: ${(err as Error).message}`);
    }
    try {
      existing = parseReportJson(text);
      checkAppendable(existing, {
        mode: 'live',
        workloadSpec: settings.workload.spec,
        environment: { 'time scale': settings.timeScale, ...(settings.model !== undefined ? { model: settings.model } : {}) },
        labels: [settings.label],
      });
    } catch (err) {
      throw new Error(`--append ${settings.append}: ${(err as Error).message}`);
    }
  }
  const startedAt = new Date();
  const directory = settings.out ?? (settings.append !== undefined ? dirname(settings.append) : defaultReportDir('bench', startedAt));
  const baseName = settings.append !== undefined && settings.out === undefined ? basename(settings.append, '.json') : 'report';

  const stop = new AbortController();
  const abort = new AbortController();
  const removeInterrupt = io.onInterrupt?.(() => {
    if (!stop.signal.aborted) {
      io.stderr.write('\nstopping: no new requests; waiting for those in flight (Ctrl-C again to cancel them)\n');
      stop.abort();
    } else {
      io.stderr.write('\ncancelling in-flight requests\n');
      abort.abort();
    }
  });
  // The fleet ceiling needs the fleet's KV size: from --fleet-kv-tokens, else from the backends' own
  // vllm:cache_config_info (num_gpu_blocks × block_size) when every one of them exports it.
  if (settings.fleetKvTokens === undefined && settings.backendMetricsUrls.length > 0) {
    const discovered = await fleetKvTokensOf(settings.backendMetricsUrls);
    if (discovered !== undefined) {
      settings = { ...settings, fleetKvTokens: discovered };
      if (!settings.quiet) io.stderr.write(`fleet KV cache: ${discovered.toLocaleString('en-US')} tokens (vllm:cache_config_info of ${settings.backendMetricsUrls.length} backends)\n`);
    }
  }
  const progress = new ProgressReporter({ stream: io.stderr, mode: settings.quiet ? 'silent' : 'auto', label: settings.label });
  let result: LiveBenchmarkResult;
  try {
    result = await runLiveBenchmark({ ...liveOptionsOf(settings), ...extra, signal: abort.signal, stopSignal: stop.signal, onProgress: progress.update });
  } finally {
    progress.end();
    removeInterrupt?.();
  }

  const single = buildLiveReport({
    result,
    workload: settings.workload,
    strategy: settings.strategy,
    label: settings.label,
    baseline: existing === undefined ? settings.baseline : undefined,
    createdAt: startedAt.toISOString(),
  });
  const report = existing === undefined ? single : appendToReport(existing, single, settings.baseline);
  const files = await writeReport(report, directory, { baseName });
  const recordsFile = join(dirname(files.json), `${baseName}.records.${fileSlug(settings.label)}.jsonl`);
  await writeFile(recordsFile, recordsJsonl(result));

  // The terminal gets the verdict and a compact table (≤120 columns); the full tables are in the report files.
  if (!settings.quiet) io.stdout.write(`\n${terminalSummary(report)}\n\n`);
  io.stdout.write(`report: ${files.markdown}\n        ${files.html}\n        ${files.json}\nrecords: ${recordsFile}\n`);

  let exitCode = 0;
  if (result.stopReason === 'aborted') exitCode = 130;
  else if (result.sent === 0 || result.failed === result.sent) {
    const first = result.records.find((r) => r.error !== undefined);
    io.stderr.write(
      result.sent === 0
        ? 'prefix-router bench: no request was sent\n'
        : `prefix-router bench: every request failed (first: ${first?.error}${first?.errorDetail ? `: ${first.errorDetail}` : ''})\n`,
    );
    exitCode = 2;
  }
  return { exitCode, report, files, recordsFile, result };
}

/** runBenchWithOutcome, returning only the exit code (what the CLI sets). */
export async function runBench(settings: BenchSettings, io: BenchIo): Promise<number> {
  return (await runBenchWithOutcome(settings, io)).exitCode;
}
