/**
 * `npm run bench:plan`: how long a full default `prefix-router plan` of the shipped Mooncake trace takes on this
 * machine (target: ≤ 3 min wall on 2 cores), with every strategy's answer. Wall time depends on what else runs:
 * the run prints the CPU time beside it, and the simulations each strategy needed.
 *
 *     npm run bench:plan [-- --slo 'p90-ttft<=2s'] [--jobs N] [--engine-search on|off]
 *
 * `--engine-search off` runs the simulations the plan ran before it searched engine settings: the before of
 * docs/plan.md#speed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPlanCommand } from '../src/cli/plan-command';
import { engineArgsText } from '../src/emulator/engine-args';

export const PLAN_WALL_TARGET_SECONDS = 180;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string, fallback: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : fallback;
  };
  const out = mkdtempSync(join(tmpdir(), 'bench-plan-'));
  const cpuBefore = process.cpuUsage();
  const started = Date.now();
  try {
    const { report } = await runPlanCommand(
      {
        workload: 'trace:mooncake-synthetic',
        slo: [flag('slo', 'p90-ttft<=2s')],
        jobs: flag('jobs', String(availableParallelism())),
        engineSearch: flag('engine-search', 'on'),
        out,
        quiet: true,
      },
      () => undefined,
    );
    const wallSeconds = (Date.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    console.log(
      `bench:plan — default plan of trace:mooncake-synthetic, ${report.slos.join(', ')}, instances ${report.instances.min}..${report.instances.max}, ${availableParallelism()} cores`,
    );
    console.log('');
    console.log('| strategy | fewest instances | setting there | engine settings there | simulations measured |');
    console.log('|---|---:|---|---|---:|');
    for (const s of report.strategies) {
      const engine = s.engineArgs === null ? '–' : engineArgsText(s.engineArgs).join(' ');
      console.log(
        `| ${s.label} | ${s.minInstances ?? `none up to ${report.instances.max}`} | ${s.atMin?.policy ?? '–'} | ${engine} | ${s.curve.length} sizes |`,
      );
    }
    if (report.autoscaling)
      console.log(
        `\nautoscaling (${report.autoscaling.strategy}): ${report.autoscaling.minCapacity ?? '–'}..${report.autoscaling.maxCapacity ?? '–'}`,
      );
    console.log('');
    console.log(
      `simulations: ${report.runs}; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(', ')} (1, 5, 15 min)`,
    );
    console.log(
      `wall: ${wallSeconds.toFixed(1)} s (target ≤ ${PLAN_WALL_TARGET_SECONDS} s: ${wallSeconds <= PLAN_WALL_TARGET_SECONDS ? 'met' : 'NOT met'}); CPU of this process and its worker threads: ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s`,
    );
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
