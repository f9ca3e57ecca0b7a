import type { Command } from 'commander';
import { defineBenchOptions, parseBenchFlags, type RawBenchFlags } from './bench-flags';
import { processIo, runBench } from './bench-run';
import { runSageMakerBench } from './sagemaker-bench';

/**
 * `prefix-router bench`: one live run of a workload against a router (or any OpenAI-compatible URL, or a
 * SageMaker endpoint with --sagemaker-endpoint), written as a report. The flags are in bench-flags.ts, the run
 * in bench-run.ts, the SageMaker target in sagemaker-bench.ts; this file only wires them to the CLI.
 */
export function register(program: Command): void {
  defineBenchOptions(program.command('bench')).action(async (flags: RawBenchFlags) => {
    if (flags.sagemakerEndpoint !== undefined) {
      process.exitCode = await runSageMakerBench(flags, processIo());
      return;
    }
    process.exitCode = await runBench(parseBenchFlags(flags), processIo());
  });
}
