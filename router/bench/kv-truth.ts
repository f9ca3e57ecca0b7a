/**
 * `npm run bench:kv-truth` (issue 39, "Measure where truth matters"): `cache-aware` on its own estimate, `cache-aware`
 * following the engines' KV events (sim/simulated-kv-events.ts: no delay, 50 ms, 1 % of batches lost without and with
 * a replay socket) and
 * `oracle` (the simulator's greedy reference, reading the engine models directly) side by side, on four scenarios of
 * 7 × p5-llama-3.1-70b: an engine restart the routers never see, KV pressure from long outputs, 30 % of the traffic
 * around the router, and two router replicas without published state. Writes the bench:kv-truth section of
 * docs/benchmarks.md (reports per seed and scenario in reports/bench-kv-truth/).
 *
 *   npm run bench:kv-truth [-- --quick] [--seeds N]
 *
 * --quick: a third of the simulated time (a smoke run). --seeds N: every scenario at seeds 1..N (workload and run),
 * the full tables at seed 1 and each events row's P90 ÷ the estimate's at every seed (default 1).
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { builtinProfile, type EngineProfile } from '../src/emulator/engine-profile';
import type { PolicyConfig } from '../src/policy';
import { buildReport, writeReport, type RequestRecord, type StrategySummary } from '../src/report';
import { simulateStrategy, type StrategyRunSettings } from '../src/sim/compare-strategies';
import type { SimulatedKvEventSettings } from '../src/sim/simulated-kv-events';
import { toStrategyRun } from '../src/sim/simulator';
import { parseWorkloadSpec } from '../src/workload';
import { integerFlag } from '../src/cli/flag-values';
import { ConfigError } from '../src/common/config-error';
import { writeSection } from './policy-targets';

export const KV_TRUTH_START = '<!-- bench:kv-truth -->';
export const KV_TRUTH_END = '<!-- /bench:kv-truth -->';

/** The issue's target: with events, P90 TTFT within this factor of oracle's in each scenario. */
const ORACLE_P90_RATIO = 1.02;
const P5 = builtinProfile('p5-llama-3.1-70b');
/** A p5 whose KV cache holds 320k tokens (a quarter of Llama 3.1 70B's): long outputs then evict cached prefixes. */
const P5_SMALL_KV: EngineProfile = { ...P5, name: 'p5-llama-3.1-70b, 20,000 KV blocks', kvCapacityBlocks: 20_000 };

/** One row: a policy and how its routers learn the engines' caches. */
interface Row {
  readonly label: string;
  readonly policy: PolicyConfig;
  readonly kvEvents?: SimulatedKvEventSettings;
}

const ESTIMATE = 'cache-aware (estimate)';
const ROWS: readonly Row[] = [
  { label: ESTIMATE, policy: { name: 'cache-aware' } },
  { label: 'cache-aware + events', policy: { name: 'cache-aware' }, kvEvents: { delayMs: 0, lossRate: 0 } },
  { label: 'cache-aware + events, 50 ms', policy: { name: 'cache-aware' }, kvEvents: { delayMs: 50, lossRate: 0 } },
  {
    label: 'cache-aware + events, 1 % lost',
    policy: { name: 'cache-aware' },
    kvEvents: { delayMs: 0, lossRate: 0.01 },
  },
  {
    label: 'cache-aware + events, 1 % lost, replayed',
    policy: { name: 'cache-aware' },
    kvEvents: { delayMs: 0, lossRate: 0.01, replay: true },
  },
  { label: 'oracle', policy: { name: 'oracle' } },
];

export interface KvTruthScenario {
  readonly key: string;
  readonly title: string;
  /** What the scenario sets, in the docs' words (the simulate flags). */
  readonly flags: string;
  readonly spec: string;
  readonly settings: StrategyRunSettings;
}

/** Seeds `--seeds` may ask for: each runs every scenario's six rows. */
export const KV_TRUTH_SEEDS = { min: 1, max: 20 } as const;

/**
 * The four scenarios at `seed` (the workload's and the run's), `seconds` of arrivals each (the first third a warm-up,
 * not measured).
 */
export function kvTruthScenarios(seconds: number, seed = 1): KvTruthScenario[] {
  const warmupMs = Math.round(seconds / 3) * 1000;
  const base = { instances: 7, profile: P5, seed, warmupMs };
  const longContext = `long-context?duration=${seconds}&seed=${seed}`;
  return [
    {
      key: 'restart',
      title: 'an engine restart the routers never see',
      flags: `--restart-at ${(seconds * 2) / 3} --restart-instance 0 --restart-down 0`,
      spec: longContext,
      settings: { ...base, engineRestart: { instance: 0, atMs: (seconds * 2000) / 3, downMs: 0 } },
    },
    {
      key: 'kv-pressure',
      title: 'KV pressure from long outputs',
      flags: `--profile (p5 with kvCapacityBlocks 20000)`,
      spec: `${longContext}&rate=10&groups=200&outputTokens=1000..3000`,
      settings: { ...base, profile: P5_SMALL_KV },
    },
    {
      key: 'bypass',
      title: '30 % of the traffic around the router',
      flags: '--bypass 30',
      spec: longContext,
      settings: { ...base, bypassShare: 0.3 },
    },
    {
      key: 'replicas',
      title: 'two router replicas without published state',
      flags: '--routers 2',
      spec: longContext,
      settings: { ...base, routers: 2 },
    },
  ];
}

interface ScenarioOutcome {
  readonly scenario: KvTruthScenario;
  readonly rows: readonly StrategySummary[];
  /** Per row: mean |predicted − delivered cached tokens| over the measured requests, as a share of their prompt. */
  readonly predictionErrors: readonly (number | null)[];
  readonly wallSeconds: number;
}

/**
 * Mean |predicted − delivered cached tokens| ÷ prompt tokens over the served requests sent after the warm-up; null
 * when the policy's decisions predict nothing.
 */
function predictionError(records: readonly RequestRecord[], warmupMs: number): number | null {
  const measured = records.filter((r) => r.error === undefined && r.sentAtMs >= warmupMs && (r.promptTokens ?? 0) > 0);
  if (measured.length === 0 || measured.every((r) => r.predictedCachedTokens === undefined)) return null;
  const sum = measured.reduce(
    (n, r) => n + Math.abs((r.predictedCachedTokens ?? 0) - (r.cachedPromptTokens ?? 0)) / (r.promptTokens ?? 1),
    0,
  );
  return sum / measured.length;
}

async function runScenario(s: KvTruthScenario, reportDir: string | undefined): Promise<ScenarioOutcome> {
  const t0 = Date.now();
  const workload = parseWorkloadSpec(s.spec);
  const outcomes = ROWS.map((row) =>
    simulateStrategy(workload, row.policy, { ...s.settings, ...(row.kvEvents ? { kvEvents: row.kvEvents } : {}) }),
  );
  const report = buildReport({
    mode: 'simulated',
    title: `bench:kv-truth: ${s.title}`,
    workload,
    environment: { instances: 7, profile: s.settings.profile.name, scenario: s.flags },
    baseline: ESTIMATE,
    ceilings: outcomes[0].ceilings,
    runs: outcomes.map((o, i) => ({ ...toStrategyRun(o.result, ROWS[i].label), ceilings: o.ceilings })),
  });
  if (reportDir !== undefined) await writeReport(report, join(reportDir, `seed-${s.settings.seed ?? 1}`, s.key));
  return {
    scenario: s,
    rows: report.strategies,
    predictionErrors: outcomes.map((o) => predictionError(o.result.records, s.settings.warmupMs ?? 0)),
    wallSeconds: (Date.now() - t0) / 1000,
  };
}

function ms(x: number | null): string {
  return x === null ? '—' : `${x.toFixed(0)} ms`;
}
function times(a: number | null, b: number | null): string {
  return a === null || b === null || b === 0 ? '—' : `${(a / b).toFixed(3)}×`;
}
function pct(x: number | null): string {
  return x === null ? '—' : `${(x * 100).toFixed(1)} %`;
}

/** One scenario's table and its verdict lines against the issue's targets. */
function scenarioLines(o: ScenarioOutcome): string[] {
  const oracle = o.rows[o.rows.length - 1];
  const estimate = o.rows[0];
  const lines = o.rows.map((r, i) => {
    const hit = r.cacheHitRate.engineReported ?? r.cacheHitRate.prometheus;
    const cells = [
      r.label,
      ms(r.ttftMs.p50),
      ms(r.ttftMs.p90),
      times(r.ttftMs.p90, oracle.ttftMs.p90),
      times(r.ttftMs.p90, estimate.ttftMs.p90),
      pct(hit),
      pct(o.predictionErrors[i]),
      String(r.errors),
    ];
    return `| ${cells.join(' | ')} |`;
  });
  const events = o.rows[1];
  const p90VsOracle = (events.ttftMs.p90 ?? Infinity) / (oracle.ttftMs.p90 ?? 1);
  const withEvents = o.rows.slice(1, -1);
  const worse = withEvents.filter((r) => (r.ttftMs.p90 ?? Infinity) > (estimate.ttftMs.p90 ?? 0));
  return [
    `### ${o.scenario.title} (\`${o.scenario.spec}\`, ${o.scenario.flags})`,
    '',
    '| strategy | TTFT P50 | TTFT P90 | P90 ÷ oracle | P90 ÷ estimate | hit rate | predicted − delivered | errors |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...lines,
    '',
    `- With events (no delay), P90 ${times(events.ttftMs.p90, oracle.ttftMs.p90)} oracle's (target ≤ ${ORACLE_P90_RATIO}×: ${p90VsOracle <= ORACLE_P90_RATIO ? '**met**' : '**not met**'}).`,
    `- No events row worse than the estimate at P90: ${worse.length === 0 ? '**met**' : `**not met** (${worse.map((r) => r.label).join(', ')})`}.`,
    '',
  ];
}

/** Each events row's P90 ÷ the estimate's in one outcome, in row order (rows between the estimate and oracle). */
function eventsRatios(o: ScenarioOutcome): (number | null)[] {
  const estimate = o.rows[0].ttftMs.p90;
  return o.rows.slice(1, -1).map((r) => (r.ttftMs.p90 === null || !estimate ? null : r.ttftMs.p90 / estimate));
}

/**
 * Per scenario, each events row's P90 ÷ the estimate's at every seed and their geometric mean, and the verdict: the
 * seeds and rows where events are worse. `bySeed[i][k]` is scenario k at the i-th seed.
 */
function seedLines(bySeed: readonly (readonly ScenarioOutcome[])[]): string[] {
  if (bySeed.length < 2) return [];
  const seeds = bySeed.map((outcomes) => outcomes[0].scenario.settings.seed ?? 1);
  const lines = [
    `### P90 ÷ the estimate's at seeds ${seeds[0]}–${seeds[seeds.length - 1]}`,
    '',
    "Each cell: that events row's P90 TTFT ÷ `cache-aware (estimate)`'s in the same scenario and seed; the last column is the geometric mean over the seeds.",
    '',
  ];
  for (let k = 0; k < bySeed[0].length; k++) {
    const ratios = bySeed.map((outcomes) => eventsRatios(outcomes[k]));
    const labels = bySeed[0][k].rows.slice(1, -1).map((r) => r.label);
    const worse: string[] = [];
    const rows = labels.map((label, row) => {
      const cells = ratios.map((r) => r[row]);
      cells.forEach((x, i) => {
        if (x !== null && x > 1) worse.push(`${label} at seed ${seeds[i]}, ${x.toFixed(3)}×`);
      });
      const known = cells.filter((x): x is number => x !== null);
      const mean = known.length === 0 ? null : Math.exp(known.reduce((a, x) => a + Math.log(x), 0) / known.length);
      return `| ${[label, ...cells.map((x) => times(x, 1)), times(mean, 1)].join(' | ')} |`;
    });
    lines.push(
      `#### ${bySeed[0][k].scenario.title}`,
      '',
      `| strategy | ${seeds.map((x) => `seed ${x}`).join(' | ')} | geometric mean |`,
      `| --- | ${seeds.map(() => '---:').join(' | ')} | ---: |`,
      ...rows,
      '',
      `- Events rows worse than the estimate at P90: ${worse.length === 0 ? 'none' : worse.join('; ')}.`,
      '',
    );
  }
  return lines;
}

/**
 * Runs every scenario at each seed (`scenariosBySeed`, one list per seed) and returns the docs section (markers
 * included): the full tables at the first seed, then each events row's P90 ÷ the estimate's at every seed.
 */
export async function runKvTruthBench(
  scenariosBySeed: readonly (readonly KvTruthScenario[])[],
  label: string,
  reportDir?: string,
  log?: (line: string) => void,
): Promise<string> {
  const started = Date.now();
  const load = loadavg()[0];
  const bySeed: ScenarioOutcome[][] = [];
  for (const scenarios of scenariosBySeed) {
    const outcomes: ScenarioOutcome[] = [];
    for (const s of scenarios) {
      outcomes.push(await runScenario(s, reportDir));
      const seconds = outcomes[outcomes.length - 1].wallSeconds.toFixed(0);
      log?.(`seed ${s.settings.seed ?? 1}, ${s.key}: ${ROWS.length} runs in ${seconds} s`);
    }
    bySeed.push(outcomes);
  }
  const seeds = scenariosBySeed.map((scenarios) => scenarios[0]?.settings.seed ?? 1);
  const seedText =
    seeds.length === 1
      ? `seed ${seeds[0]} (the workload's and the run's)`
      : `seeds ${seeds.join(', ')} (the workload's and the run's; the scenario tables are seed ${seeds[0]}'s)`;
  return [
    KV_TRUTH_START,
    '## 9. Engine truth: where KV events matter (`npm run bench:kv-truth`)',
    '',
    `Produced by \`${label}\` on ${new Date().toISOString().slice(0, 10)} in ${((Date.now() - started) / 1000).toFixed(0)} s on the shared 2-core development machine (load average ${load.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end; simulated time does not depend on it). 7 × p5-llama-3.1-70b, ${seedText}, the first third of each run a warm-up left out of the figures. Rows: \`cache-aware\` on its own estimate; \`cache-aware\` following the engines' KV events (\`simulate --kv-events on\`) delivered at once, 50 ms after each engine step, with 1 % of batches lost and no replay socket (a loss leaves that engine to the estimate until it restarts), and with 1 % lost and replayed (\`--kv-events-replay on\`); \`oracle\`, which reads the engine models directly. Hit rate: engine-reported, routed requests only; predicted − delivered: the mean of |the cached tokens the decision predicted − those the engine served| over each request's prompt tokens. Errors: requests the restart cut. Targets (issue 39): with events, P90 TTFT within ${ORACLE_P90_RATIO}× \`oracle\`'s in each scenario; no scenario worse than the estimate.`,
    '',
    ...bySeed[0].flatMap(scenarioLines),
    ...seedLines(bySeed),
    KV_TRUTH_END,
  ].join('\n');
}

/** The command line: `--quick` and `--seeds N` (errors name the flag and its range). */
export function parseKvTruthArgs(argv: readonly string[]): { quick: boolean; seeds: number } {
  let quick = false;
  let seeds = 1;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--quick') quick = true;
    else if (argv[i] === '--seeds') seeds = integerFlag('seeds', argv[++i], KV_TRUTH_SEEDS.min, KV_TRUTH_SEEDS.max);
    else throw new Error(`usage: npm run bench:kv-truth [-- --quick] [--seeds N]; unknown flag "${argv[i]}"`);
  }
  return { quick, seeds };
}

/** Runs the bench as `argv` asks and writes its section into docs/benchmarks.md. */
async function main(argv: readonly string[]): Promise<void> {
  const { quick, seeds } = parseKvTruthArgs(argv);
  const flags = [...(quick ? ['--quick'] : []), ...(seeds > 1 ? ['--seeds', String(seeds)] : [])];
  const label = `npm run bench:kv-truth${flags.length > 0 ? ` -- ${flags.join(' ')}` : ''}`;
  const bySeed = Array.from({ length: seeds }, (_, i) => kvTruthScenarios(quick ? 60 : 180, i + 1));
  const section = await runKvTruthBench(bySeed, label, join('reports', 'bench-kv-truth'), (l) =>
    process.stderr.write(`${l}\n`),
  );
  writeSection(join('docs', 'benchmarks.md'), section, { begin: KV_TRUTH_START, end: KV_TRUTH_END });
  process.stdout.write(`${section}\n`);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : String((err as Error).stack ?? err)}\n`);
    process.exit(1);
  });
}
