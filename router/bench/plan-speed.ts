/**
 * `npm run bench:plan`: how long a full default `prefix-router plan` of the shipped Mooncake trace takes on this
 * machine (target: ≤ 3 min wall on 2 cores), with every strategy's answer. Wall time depends on what else runs:
 * the run prints the CPU time and the load average beside it, and the simulations each strategy needed.
 *
 *     npm run bench:plan [-- --slo 'p90-ttft<=2s'] [--jobs N] [--engine-search on|off|both]
 *                        [--policy SPEC ...] [--sweep SPEC ...] [--instances MIN..MAX]
 *
 * `--engine-search off` runs the simulations the plan ran before it searched engine settings: the before of
 * docs/plan.md#speed. `--engine-search both` runs the plan without the grid, then with it, in one process (the
 * same machine load as near as two runs in a row can have it), and prints the ratio against the target of 2×
 * (issue 38). `--policy`/`--sweep` (repeatable, as in `plan`) replace the default strategies, for a shorter run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPlanCommand } from '../src/cli/plan-command';
import { engineArgsText } from '../src/emulator/engine-args';
import type { PlanReport } from '../src/plan/plan-report';

export const PLAN_WALL_TARGET_SECONDS = 180;
/** Issue 38: the plan with the engine grid within this multiple of its time without it. */
export const ENGINE_GRID_TIME_TARGET = 2;

interface TimedPlan {
  readonly engineSearch: 'on' | 'off';
  readonly report: PlanReport;
  readonly wallSeconds: number;
  readonly cpuSeconds: number;
  readonly loadBefore: string;
  readonly loadAfter: string;
}

const loadText = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(', ');

function flagsOf(args: readonly string[]) {
  const values = (name: string) =>
    args.flatMap((a, i) => (a === `--${name}` && i + 1 < args.length ? [args[i + 1]] : []));
  const flag = (name: string, fallback: string) => values(name).at(-1) ?? fallback;
  const engineSearch = flag('engine-search', 'on');
  if (!['on', 'off', 'both'].includes(engineSearch))
    throw new Error(`--engine-search must be on, off or both (got ${JSON.stringify(engineSearch)})`);
  return {
    engineSearches: engineSearch === 'both' ? (['off', 'on'] as const) : [engineSearch as 'on' | 'off'],
    plan: {
      workload: 'trace:mooncake-synthetic',
      slo: [flag('slo', 'p90-ttft<=2s')],
      jobs: flag('jobs', String(availableParallelism())),
      ...(values('policy').length > 0 ? { policy: values('policy') } : {}),
      ...(values('sweep').length > 0 ? { sweep: values('sweep') } : {}),
      ...(values('instances').length > 0 ? { instances: flag('instances', '') } : {}),
    },
  };
}

async function timePlan(plan: Record<string, unknown>, engineSearch: 'on' | 'off'): Promise<TimedPlan> {
  const out = mkdtempSync(join(tmpdir(), 'bench-plan-'));
  const loadBefore = loadText();
  const cpuBefore = process.cpuUsage();
  const started = Date.now();
  try {
    const { report } = await runPlanCommand({ ...plan, engineSearch, out, quiet: true }, () => undefined);
    const cpu = process.cpuUsage(cpuBefore);
    return {
      engineSearch,
      report,
      wallSeconds: (Date.now() - started) / 1000,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      loadBefore,
      loadAfter: loadText(),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function printPlan(run: TimedPlan): void {
  const { report } = run;
  console.log(
    `bench:plan — plan of trace:mooncake-synthetic, ${report.slos.join(', ')}, instances ${report.instances.min}..${report.instances.max}, engine search ${run.engineSearch}, ${availableParallelism()} cores`,
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
    `simulations: ${report.runs}; load average ${run.loadBefore} before, ${run.loadAfter} after (1, 5, 15 min)`,
  );
  console.log(
    `wall: ${run.wallSeconds.toFixed(1)} s (target ≤ ${PLAN_WALL_TARGET_SECONDS} s: ${run.wallSeconds <= PLAN_WALL_TARGET_SECONDS ? 'met' : 'NOT met'}); CPU of this process and its worker threads: ${run.cpuSeconds.toFixed(1)} s`,
  );
  console.log('');
}

async function main(): Promise<void> {
  const { engineSearches, plan } = flagsOf(process.argv.slice(2));
  const runs: TimedPlan[] = [];
  for (const engineSearch of engineSearches) {
    const run = await timePlan(plan, engineSearch);
    printPlan(run);
    runs.push(run);
  }
  if (runs.length === 2) {
    const [off, on] = runs;
    const wall = on.wallSeconds / off.wallSeconds;
    console.log(
      `engine grid: ${on.report.runs} simulations vs ${off.report.runs}; wall ${wall.toFixed(2)}× (target ≤ ${ENGINE_GRID_TIME_TARGET}×: ${wall <= ENGINE_GRID_TIME_TARGET ? 'met' : 'NOT met'}), CPU ${(on.cpuSeconds / off.cpuSeconds).toFixed(2)}×`,
    );
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
