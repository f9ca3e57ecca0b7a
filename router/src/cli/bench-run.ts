import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  appendToReport,
  buildLiveReport,
  checkAppendable,
  fileSlug,
  fleetKvTokensOf,
  ProgressReporter,
  recordsJsonl,
  runLiveBenchmark,
  type LiveBenchmarkOptions,
  type LiveBenchmarkResult,
  type ProgressStream,
} from '../benchmark';
import { parseReportJson } from '../report/render-json';
import { baselineProblem, type BenchmarkReport } from '../report/report-model';
import { ConfigError } from '../common/config-error';
import { terminalSummary } from '../report/terminal-summary';
import { writeReport, type ReportFiles } from '../report/write-report';
import { liveOptionsOf, type BenchSettings } from './bench-flags';
import { defaultReportDir } from './flag-values';

/**
 * One `prefix-router bench` run from validated settings (bench-flags.ts): the live benchmark, its report
 * (JSON, markdown, HTML, records), optionally appended to an earlier report so strategies run one after
 * another compare side by side.
 */
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
 * The report --append names, read and checked before any request is sent: the same workload and environment, a new
 * label, and a baseline that names a run of it or of this one.
 */
async function appendedReport(settings: BenchSettings, append: string): Promise<BenchmarkReport> {
  let text: string;
  try {
    text = await readFile(append, 'utf8');
  } catch (err) {
    throw new Error(`--append: cannot read ${append}: ${(err as Error).message}`);
  }
  let existing: BenchmarkReport;
  try {
    existing = parseReportJson(text);
    checkAppendable(existing, {
      mode: 'live',
      workloadSpec: settings.workload.spec,
      environment: {
        'time scale': settings.timeScale,
        ...(settings.model !== undefined ? { model: settings.model } : {}),
      },
      labels: [settings.label],
    });
  } catch (err) {
    throw new Error(`--append ${append}: ${(err as Error).message}`);
  }
  const baselineMisses =
    settings.baseline === undefined
      ? undefined
      : baselineProblem(settings.baseline, [
          ...existing.strategies,
          { label: settings.label, strategy: settings.strategy },
        ]);
  if (baselineMisses !== undefined) throw new ConfigError([`--baseline ${baselineMisses}`]);
  return existing;
}

/**
 * The fleet ceiling needs the fleet's KV size: from --fleet-kv-tokens, else from the backends' own
 * vllm:cache_config_info (num_gpu_blocks × block_size) when every one of them exports it.
 */
async function withDiscoveredFleetKv(settings: BenchSettings, io: BenchIo): Promise<BenchSettings> {
  if (settings.fleetKvTokens !== undefined || settings.backendMetricsUrls.length === 0) return settings;
  const discovered = await fleetKvTokensOf(settings.backendMetricsUrls);
  if (discovered === undefined) return settings;
  if (!settings.quiet)
    io.stderr.write(
      `fleet KV cache: ${discovered.toLocaleString('en-US')} tokens (vllm:cache_config_info of ${settings.backendMetricsUrls.length} backends)\n`,
    );
  return { ...settings, fleetKvTokens: discovered };
}

/**
 * Runs the benchmark a parsed bench command describes and writes the report. Ctrl-C once stops sending and
 * lets in-flight requests finish; twice cancels them; either way the partial report is written. Exit code: 0,
 * 130 after an abort, 2 when no request succeeded.
 */
export async function runBenchWithOutcome(
  settings: BenchSettings,
  io: BenchIo,
  extra: Partial<LiveBenchmarkOptions> = {},
): Promise<BenchOutcome> {
  const existing = settings.append === undefined ? undefined : await appendedReport(settings, settings.append);
  const startedAt = new Date();
  const directory =
    settings.out ?? (settings.append !== undefined ? dirname(settings.append) : defaultReportDir('bench', startedAt));
  const baseName =
    settings.append !== undefined && settings.out === undefined ? basename(settings.append, '.json') : 'report';

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
  settings = await withDiscoveredFleetKv(settings, io);
  const progress = new ProgressReporter({
    stream: io.stderr,
    mode: settings.quiet ? 'silent' : 'auto',
    label: settings.label,
  });
  let result: LiveBenchmarkResult;
  try {
    result = await runLiveBenchmark({
      ...liveOptionsOf(settings),
      ...extra,
      signal: abort.signal,
      stopSignal: stop.signal,
      onProgress: progress.update,
    });
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
