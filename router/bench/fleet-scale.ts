/**
 * `npm run bench:fleet`: how the simulator's cost grows with the fleet. Simulates `long-context` scaled with
 * the fleet (6 req/s and 550 prefix groups per 7 instances, as AWS's 7-instance experiment) under one policy at
 * several fleet sizes, each in its own child process run one after the other, and prints side by side: requests,
 * wall and CPU time, max RSS, wall and CPU per request, and each size's per-request cost as a ratio of the
 * smallest size's (the flatness the simulator aims for).
 *
 *   npm run bench:fleet [-- --instances 7,112 --seconds 900 --policy sagemaker-prefix-aware --repeat 1 --cpu-prof DIR]
 *
 * Each child builds the whole report (ceilings included), as `prefix-router simulate` does, but writes no
 * files. `--cpu-prof DIR` passes --cpu-prof to the children (one .cpuprofile per fleet size, for
 * chrome://inspect or speedscope). CPU time is the robust figure on a shared machine; the load average at
 * start and end is printed beside the table. `--repeat N` runs the sizes N times, interleaved (7, 112, 7, 112,
 * …) so that a slow spell of a shared machine hits every size alike, and adds a table of each size's median
 * per-request cost and the ratio of the medians: a few seconds at a small size move by a tenth between runs.
 */
import { integerFlag, numberFlag } from '../src/cli/flag-values';
import { ConfigError } from '../src/common/config-error';
import { parseDecimalInteger } from '../src/common/decimal-text';
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { builtinProfile } from '../src/emulator/engine-profile';
import { parsePolicySpec } from '../src/policy/policy-spec';
import { compareStrategies } from '../src/sim/compare-strategies';
import { promptWorkerPays } from '../src/sim/prompt-worker';
import { parseWorkloadSpec } from '../src/workload';
import { median } from '../src/report/stats';

interface Args {
  readonly instances: number[];
  readonly seconds: number;
  readonly policy: string;
  readonly cpuProf: string | undefined;
  readonly promptWorker: PromptWorkerMode;
  readonly repeat: number;
}

/** on/off: prompts prepared on a worker thread or not; auto: as `prefix-router simulate` decides (promptWorkerPays). */
export type PromptWorkerMode = 'auto' | 'on' | 'off';

export interface ChildResult {
  readonly instances: number;
  readonly requests: number;
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly maxRssMb: number;
  /** At the end of the run (report built, results still referenced): the JS heap, and typed arrays' buffers. */
  readonly heapUsedMb: number;
  readonly arrayBuffersMb: number;
  readonly hitRate: number | null;
}

const USAGE =
  'usage: fleet-scale [--instances N,N,...] [--seconds S] [--policy SPEC] [--prompt-worker auto|on|off] [--repeat N] [--cpu-prof DIR]';

export function parseArgs(argv: readonly string[]): Args {
  let instances = [7, 112];
  let seconds = 900;
  let policy = 'sagemaker-prefix-aware';
  let cpuProf: string | undefined;
  let promptWorker: PromptWorkerMode = 'auto';
  let repeat = 1;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--instances') instances = parseFleetSizes(value);
    else if (flag === '--seconds') seconds = numberFlag('seconds', value, 0, 86_400, true);
    else if (flag === '--policy') policy = String(value);
    else if (flag === '--cpu-prof') cpuProf = String(value);
    else if (flag === '--repeat') repeat = integerFlag('repeat', value, 1, 20);
    else if (flag === '--prompt-worker') {
      if (value !== 'auto' && value !== 'on' && value !== 'off')
        throw new Error(`--prompt-worker must be auto, on or off (got ${String(value)})`);
      promptWorker = value;
    } else throw new Error(`${USAGE}; unknown flag "${flag}"`);
    i++;
  }
  parsePolicySpec(policy);
  return { instances, seconds, policy, cpuProf, promptWorker, repeat };
}

/** `--instances N,N,...`: fleet sizes within the simulator's 1–1024. */
export function parseFleetSizes(value: string | undefined): number[] {
  const sizes = String(value)
    .split(',')
    .map((n) => parseDecimalInteger(n));
  if (sizes.some((n) => n === undefined || n < 1 || n > 1024))
    throw new ConfigError([`--instances must list integers between 1 and 1024 (got ${String(value)})`]);
  return sizes as number[];
}

/** The workload spec for a fleet of n: AWS's 7-instance shape, scaled. */
export function scaledLongContext(instances: number, seconds: number): string {
  const rate = (6 * instances) / 7;
  const groups = Math.max(1, Math.round((550 * instances) / 7));
  return `long-context?groups=${groups}&rate=${rate}&duration=${seconds}`;
}

/** One simulation of the scaled workload; what a child process measures about itself. */
export function measureFleet(
  instances: number,
  seconds: number,
  policy: string,
  promptWorker: PromptWorkerMode = 'auto',
): ChildResult {
  const profile = builtinProfile('p5-llama-3.1-70b');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const workload = parseWorkloadSpec(scaledLongContext(instances, seconds));
  const { results, report } = compareStrategies({
    workload,
    policies: [parsePolicySpec(policy)],
    instances,
    profile,
    promptWorker: promptWorker === 'auto' ? promptWorkerPays(1, workload.expectedRequests) : promptWorker === 'on',
  });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const memory = process.memoryUsage();
  return {
    instances,
    requests: results[0].records.length,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    heapUsedMb: memory.heapUsed / 2 ** 20,
    arrayBuffersMb: memory.arrayBuffers / 2 ** 20,
    hitRate: report.strategies[0].cacheHitRate.engineReported,
  };
}

function fmt(n: number, digits = 1): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export interface FleetScaleOptions {
  readonly instances: readonly number[];
  readonly seconds: number;
  readonly policy: string;
  /** Directory for one .cpuprofile per fleet size. */
  readonly cpuProf?: string;
  readonly promptWorker?: PromptWorkerMode;
  /** Runs of every size, interleaved (default 1). */
  readonly repeat?: number;
  /** Measure in this process instead of one child per size (max RSS is then the process's so far): for smoke tests. */
  readonly inProcess?: boolean;
  readonly log?: (line: string) => void;
}

/**
 * Runs every fleet size, one after the other (`repeat` rounds of them); returns the markdown table, with the
 * load average beside it and, with more than one round, each size's medians.
 */
export function runFleetScale(options: FleetScaleOptions): { rows: ChildResult[]; markdown: string } {
  const load0 = loadavg();
  const rounds = options.repeat ?? 1;
  const rows: ChildResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const n of options.instances) {
      let row: ChildResult;
      if (options.inProcess) {
        row = measureFleet(n, options.seconds, options.policy, options.promptWorker);
      } else {
        const name = rounds > 1 ? `fleet-${n}-${round}` : `fleet-${n}`;
        const nodeFlags = options.cpuProf
          ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProf}`, `--cpu-prof-name=${name}.cpuprofile`]
          : [];
        const line = execFileSync(
          process.execPath,
          [
            ...nodeFlags,
            __filename,
            '--child',
            String(n),
            String(options.seconds),
            options.policy,
            options.promptWorker ?? 'auto',
          ],
          {
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'inherit'],
            maxBuffer: 1 << 20,
          },
        );
        row = JSON.parse(line.trim().split('\n').pop()!) as ChildResult;
      }
      rows.push(row);
      options.log?.(
        `  ${n} instances${rounds > 1 ? ` (run ${round} of ${rounds})` : ''}: ${row.requests} requests in ${fmt(row.wallMs / 1000)} s`,
      );
    }
  }
  const load1 = loadavg();
  const base = rows[0];
  const perReq = (r: ChildResult) => r.wallMs / r.requests;
  const cpuPerReq = (r: ChildResult) => r.cpuMs / r.requests;
  const runOf = (i: number) => Math.floor(i / options.instances.length) + 1;
  const lines = [
    `fleet-scale: long-context scaled with the fleet (6 req/s and 550 groups per 7 instances), ${options.seconds} simulated s, policy ${options.policy}, p5-llama-3.1-70b, prompt worker ${options.promptWorker ?? 'auto'}${rounds > 1 ? `, ${rounds} interleaved runs of each size` : ''}`,
    `load average at start ${load0.map((l) => l.toFixed(1)).join(' ')}, at end ${load1.map((l) => l.toFixed(1)).join(' ')}`,
    '',
    `|${rounds > 1 ? ' run |' : ''} instances | requests | wall (s) | CPU (s) | max RSS (MB) | JS heap (MB) | typed arrays (MB) | wall / request (ms) | CPU / request (ms) | wall / request ÷ first row | CPU / request ÷ first row | hit rate |`,
    `|${rounds > 1 ? ' ---: |' : ''} ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`,
    ...rows.map(
      (r, i) =>
        `|${rounds > 1 ? ` ${runOf(i)} |` : ''} ${r.instances} | ${r.requests.toLocaleString('en-US')} | ${fmt(r.wallMs / 1000)} | ${fmt(r.cpuMs / 1000)} | ${fmt(r.maxRssMb, 0)} | ${fmt(r.heapUsedMb, 0)} | ${fmt(r.arrayBuffersMb, 0)} | ${fmt(perReq(r), 3)} | ${fmt(cpuPerReq(r), 3)} | ${fmt(perReq(r) / perReq(base), 2)}× | ${fmt(cpuPerReq(r) / cpuPerReq(base), 2)}× | ${r.hitRate === null ? '–' : `${(r.hitRate * 100).toFixed(1)} %`} |`,
    ),
  ];
  if (rounds > 1) lines.push('', ...medianTable(options.instances, rows, perReq, cpuPerReq));
  return { rows, markdown: lines.join('\n') };
}

/** Each size's median per-request wall and CPU over its runs (min–max beside), and the medians' ratio to the first size's. */
function medianTable(
  instances: readonly number[],
  rows: readonly ChildResult[],
  perReq: (r: ChildResult) => number,
  cpuPerReq: (r: ChildResult) => number,
): string[] {
  const of = (n: number, f: (r: ChildResult) => number) => rows.filter((r) => r.instances === n).map(f);
  const range = (xs: number[]) => `${fmt(Math.min(...xs), 3)}–${fmt(Math.max(...xs), 3)}`;
  const wall0 = median(of(instances[0], perReq));
  const cpu0 = median(of(instances[0], cpuPerReq));
  return [
    "| instances | wall / request, median (min–max) (ms) | CPU / request, median (min–max) (ms) | median wall / request ÷ first size's | median CPU / request ÷ first size's |",
    '| ---: | ---: | ---: | ---: | ---: |',
    ...instances.map((n) => {
      const wall = of(n, perReq);
      const cpu = of(n, cpuPerReq);
      return `| ${n} | ${fmt(median(wall), 3)} (${range(wall)}) | ${fmt(median(cpu), 3)} (${range(cpu)}) | ${fmt(median(wall) / wall0, 2)}× | ${fmt(median(cpu) / cpu0, 2)}× |`;
    }),
  ];
}

function main(): void {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') {
    process.stdout.write(
      `${JSON.stringify(measureFleet(Number(argv[1]), Number(argv[2]), argv[3], argv[4] as PromptWorkerMode))}\n`,
    );
    return;
  }
  const args = parseArgs(argv);
  const { markdown } = runFleetScale({ ...args, log: (l) => process.stderr.write(`${l}\n`) });
  process.stdout.write(`${markdown}\n`);
}

if (require.main === module) main();
