import { constants as fsConstants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { ProgressReporter, runLiveBenchmark, type LiveBenchmarkResult } from '../benchmark';
import type { AbPlan } from '../aws/ab-plan';
import { writeAbReport, type AbReportFiles } from '../aws/ab-report';
import type { AbOutcome } from '../aws/routing-ab';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../aws/throttling-retry';
import type { Workload } from '../workload/workload';
import { liveOptionsOf } from './bench-flags';
import type { BenchIo } from './bench-run';
import type { sageMakerBenchPlan } from './sagemaker-bench';

/** The steps both `ab` modes (switch and --shadow) take the same way. */

/** One measured run of the workload, with a progress line labelled for it. */
export async function measureRun(
  perRun: ReturnType<typeof sageMakerBenchPlan>,
  view: { readonly io: BenchIo; readonly quiet: boolean; readonly label: string },
  signal: AbortSignal,
): Promise<LiveBenchmarkResult> {
  const progress = new ProgressReporter({
    stream: view.io.stderr,
    mode: view.quiet ? 'silent' : 'auto',
    label: view.label,
  });
  try {
    return await runLiveBenchmark({
      ...liveOptionsOf(perRun.settings),
      ...perRun.extra(),
      signal,
      onProgress: progress.update,
    });
  } finally {
    progress.end();
  }
}

/**
 * Hours of work must not end in an unwritable report: the directory is created and checked before any change.
 * False (after saying so on stderr, ending with `unchanged`) when it cannot be written.
 */
export async function writableReportDirectory(directory: string, io: BenchIo, unchanged: string): Promise<boolean> {
  try {
    await mkdir(directory, { recursive: true });
    await access(directory, fsConstants.W_OK);
    return true;
  } catch (err) {
    io.stderr.write(`prefix-router ab: --out ${directory} is not writable (${(err as Error).message}); ${unchanged}\n`);
    return false;
  }
}

export interface AbReportInput {
  readonly directory: string;
  readonly plan: AbPlan;
  readonly outcome: AbOutcome;
  readonly workload: Workload;
  readonly runId: string;
  readonly startedAt: Date;
}

/** Writes the report and prints its files; undefined (after saying why on stderr) when it could not be written. */
export async function writeAndListReport(input: AbReportInput, io: BenchIo): Promise<AbReportFiles | undefined> {
  const { directory } = input;
  try {
    const files = await writeAbReport(
      directory,
      input.plan,
      input.outcome,
      input.workload,
      input.runId,
      input.startedAt.toISOString(),
    );
    io.stdout.write(
      `\nreport: ${files.markdown}\n        ${files.json}\n${files.benchmark ? `        ${files.benchmark.markdown}\n        ${files.benchmark.html}\n` : ''}`,
    );
    return files;
  } catch (err) {
    io.stderr.write(`prefix-router ab: could not write the report to ${directory}: ${(err as Error).message}\n`);
    return undefined;
  }
}

/** The control-plane retry policy, its waits shortened by a local rehearsal's time scale (1 against AWS). */
export function scaledRetryPolicy(timeScale: number): RetryPolicy {
  return {
    ...DEFAULT_RETRY_POLICY,
    baseDelayMs: DEFAULT_RETRY_POLICY.baseDelayMs / timeScale,
    maxDelayMs: DEFAULT_RETRY_POLICY.maxDelayMs / timeScale,
  };
}
