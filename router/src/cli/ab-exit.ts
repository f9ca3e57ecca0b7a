import type { LiveBenchmarkResult } from '../benchmark/live-benchmark';
import type { BenchIo } from './bench-run';
import { SIGNAL_NUMBERS, type AbSignal } from './ab-signals';

/**
 * `ab`'s exit status, the same in every mode (switch, --variants, --shadow); a signal that stopped the run exits
 * 128 + its number instead (SIGINT 130, SIGTERM 143, SIGHUP 129) once everything is restored or deleted.
 */
export enum AbExitCode {
  /** Every run done and reported, or the plan printed without --yes. */
  Done = 0,
  /** Bad flags or setup: nothing was changed or created. */
  Refused = 1,
  /** A run failed (or measured nothing), but the endpoint was restored and every shadow deleted. */
  RunFailed = 2,
  /** The endpoint is NOT where it began, or shadow resources are left: the message says what and how to finish. */
  LeftBehind = 3,
}

/** How an `ab` run ended, in either mode, once nothing it changed is left behind. */
export interface EndedAbRuns {
  readonly runs: readonly { readonly label: string; readonly result: LiveBenchmarkResult }[];
  readonly interrupted: boolean;
  /** What stopped the runs early. */
  readonly failure?: Error;
}

/**
 * The exit status both `ab` modes share once nothing they changed is left: 128 + the signal's number after a
 * signal; otherwise every run whose requests all failed is named on stderr, and a failure that stopped the runs
 * gives 2 (its message followed by `aftermath`: what became of the endpoint). `status` is undefined when the runs
 * ended without a failure: the caller decides between 0 and 2 from `allFailed` and what else it checks.
 */
export function endedAbStatus(
  ended: EndedAbRuns,
  io: BenchIo,
  caught: AbSignal | undefined,
  aftermath: string,
): { readonly status?: number; readonly allFailed: number } {
  if (ended.interrupted) return { status: 128 + SIGNAL_NUMBERS[caught ?? 'SIGINT'], allFailed: 0 };
  const allFailed = ended.runs.filter((r) => r.result.sent > 0 && r.result.failed === r.result.sent);
  for (const r of allFailed) {
    const first = r.result.records.find((x) => x.error !== undefined);
    io.stderr.write(
      `prefix-router ab: every request of ${r.label} failed (first: ${first?.error}${first?.errorDetail ? `: ${first.errorDetail}` : ''})\n`,
    );
  }
  if (ended.failure) {
    io.stderr.write(`prefix-router ab: ${ended.failure.message} (${aftermath})\n`);
    return { status: AbExitCode.RunFailed, allFailed: allFailed.length };
  }
  return { allFailed: allFailed.length };
}
