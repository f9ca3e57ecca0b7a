/**
 * `npm run bench:kv-truth` (issue 39, "Measure where truth matters"): `cache-aware` on its own estimate, `cache-aware`
 * following the engines' KV events (sim/simulated-kv-events.ts: no delay, 50 ms, 1 % of batches lost without and with
 * a replay socket) and
 * `oracle` (the simulator's greedy reference, reading the engine models directly) side by side, on four scenarios of
 * 7 × p5-llama-3.1-70b: an engine restart the routers never see, KV pressure from long outputs, 30 % of the traffic
 * around the router, and two router replicas without published state. Writes the bench:kv-truth section of
 * docs/benchmarks.md (reports per seed and scenario in reports/bench-kv-truth/).
 *
 *   npm run bench:kv-truth [-- --quick] [--seeds N] [--jitter-streams K] [--scenarios KEYS]
 *
 * --quick: a third of the simulated time (a smoke run). --seeds N: every scenario at seeds 1..N (workload and run;
 * default 1). --jitter-streams K: each seed run K times with vLLM's measured step-time jitter
 * (MEASURED_STEP_JITTER_CV, emulator/step-jitter.ts), stream 1..K, instead of once without (default 0). The full
 * tables are the first run's; then each events row's P90 ÷ the estimate's in every run. --scenarios A,B: only those
 * (keys: KV_TRUTH_SCENARIO_KEYS), printed and not written into the docs.
 *
 * The verdict "no scenario worse than the estimate" is statistical (report/paired-comparison.ts): under KV pressure
 * the fleet is overloaded and chaotic, so one changed decision or 0.2 % step jitter moves a P90 by several per cent
 * and a single run's ratio is one draw. Each run pairs the two rows (same workload, seed and jitter stream); an events
 * row is "worse" only when the sign test's 95 % interval for the median of its log-ratios lies above 0, i.e. beyond
 * the run-to-run spread; with fewer than six runs no interval reaches 95 % and the bench says so.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { builtinProfile, type EngineProfile } from '../src/emulator/engine-profile';
import {
  CACHE_AWARE_FOR_BLIND_REPLICAS,
  formatPolicySpec,
  placesColdPromptsByLoad,
  type PolicyConfig,
} from '../src/policy';
import { buildReport, writeReport, type RequestRecord, type StrategySummary } from '../src/report';
import { simulateStrategy, type StrategyRunSettings } from '../src/sim/compare-strategies';
import type { SimulatedKvEventSettings } from '../src/sim/simulated-kv-events';
import { toStrategyRun } from '../src/sim/simulator';
import { parseWorkloadSpec } from '../src/workload';
import { integerFlag } from '../src/cli/flag-values';
import { ConfigError } from '../src/common/config-error';
import { MEASURED_STEP_JITTER_CV } from '../src/emulator/step-jitter';
import { comparePairedRatios, PAIRED_CONFIDENCE, type PairedRatioComparison } from '../src/report/paired-comparison';
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

/** How the replica scenarios' cache-aware rows run, as their flags name it. */
const BLIND_REPLICA_SPEC = formatPolicySpec(CACHE_AWARE_FOR_BLIND_REPLICAS);

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
/** Step-jitter streams `--jitter-streams` may ask for per seed (0: one run without jitter). */
export const KV_TRUTH_JITTER_STREAMS = { min: 0, max: 10 } as const;

/**
 * The five scenarios at `seed` (the workload's and the run's), `seconds` of arrivals each (the first third a warm-up,
 * not measured); with `jitterStream` ≥ 1, every engine step jittered at vLLM's measured CV, from that stream.
 */
export function kvTruthScenarios(seconds: number, seed = 1, jitterStream = 0): KvTruthScenario[] {
  const warmupMs = Math.round(seconds / 3) * 1000;
  const jitter = jitterStream === 0 ? {} : { stepJitterCv: MEASURED_STEP_JITTER_CV, stepJitterStream: jitterStream };
  const base = { instances: 7, profile: P5, seed, warmupMs, ...jitter };
  const longContext = `long-context?duration=${seconds}&seed=${seed}`;
  const kvPressure = `${longContext}&rate=10&groups=200&outputTokens=1000..3000`;
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
      spec: kvPressure,
      settings: { ...base, profile: P5_SMALL_KV },
    },
    {
      // The queue rule (router.md, engine truth) counts the engine's account only as far as the router's own index
      // holds the prefix once more than a step of prefill is queued: prefixes another replica or a bypassing client
      // sent are then not counted. This is where that costs most.
      key: 'kv-pressure-shared',
      title: 'KV pressure, two router replicas and 30 % of the traffic around them',
      flags: `--profile (p5 with kvCapacityBlocks 20000) --routers 2 --bypass 30, ${BLIND_REPLICA_SPEC}`,
      spec: kvPressure,
      settings: { ...base, profile: P5_SMALL_KV, routers: 2, bypassShare: 0.3 },
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
      flags: `--routers 2, ${BLIND_REPLICA_SPEC}`,
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

/** A row's policy in a scenario: replicas without published state run `cache-aware` as docs/router.md says they must. */
function policyOf(row: Row, s: KvTruthScenario): PolicyConfig {
  return (s.settings.routers ?? 1) > 1 && placesColdPromptsByLoad(row.policy)
    ? CACHE_AWARE_FOR_BLIND_REPLICAS
    : row.policy;
}

async function runScenario(s: KvTruthScenario, reportDir: string | undefined): Promise<ScenarioOutcome> {
  const t0 = Date.now();
  const workload = parseWorkloadSpec(s.spec);
  const outcomes = ROWS.map((row) =>
    simulateStrategy(workload, policyOf(row, s), {
      ...s.settings,
      ...(row.kvEvents ? { kvEvents: row.kvEvents } : {}),
    }),
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
  if (reportDir !== undefined) await writeReport(report, join(reportDir, runLabel(s).replace(/[ ,]+/g, '-'), s.key));
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

/** A run's label in the tables: its seed, and its jitter stream when jittered. */
function runLabel(s: KvTruthScenario): string {
  const stream = s.settings.stepJitterStream ?? 0;
  return `seed ${s.settings.seed ?? 1}${stream > 0 ? `, jitter ${stream}` : ''}`;
}

/** One events row's verdict against the estimate over all runs, in words. */
function verdictText(c: PairedRatioComparison): string {
  if (c.interval === null) return `**too few runs** (${c.runs}; the sign test needs 6 for 95 %)`;
  const { low, high, coverage } = c.interval;
  // Four decimals: an interval that ends a hair below 1× must not print as ending at 1.000×.
  const range = `median ${low.toFixed(4)}–${high.toFixed(4)}× at ${(coverage * 100).toFixed(1)} %`;
  return `**${c.verdict}** (${range}, ${c.runs} runs)`;
}

/** One scenario's table at its first run, and its verdict lines against the issue's targets over all runs. */
function scenarioLines(o: ScenarioOutcome, verdicts: readonly PairedRatioComparison[]): string[] {
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
  const labels = o.rows.slice(1, -1).map((r) => r.label);
  const worse = labels.filter((_, i) => verdicts[i].verdict === 'worse');
  const unjudged = verdicts.some((v) => v.verdict === 'too few runs');
  const noWorse =
    worse.length > 0 ? `**not met** (${worse.join(', ')})` : unjudged ? '**not judged** (too few runs)' : '**met**';
  return [
    `### ${o.scenario.title} (\`${o.scenario.spec}\`, ${o.scenario.flags}; ${runLabel(o.scenario)})`,
    '',
    '| strategy | TTFT P50 | TTFT P90 | P90 ÷ oracle | P90 ÷ estimate | hit rate | predicted − delivered | errors |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...lines,
    '',
    `- With events (no delay), P90 ${times(events.ttftMs.p90, oracle.ttftMs.p90)} oracle's (target ≤ ${ORACLE_P90_RATIO}×: ${p90VsOracle <= ORACLE_P90_RATIO ? '**met**' : '**not met**'}).`,
    `- No events row worse than the estimate at P90 beyond the run-to-run spread (sign test, ${PAIRED_CONFIDENCE * 100} %, over all runs): ${noWorse}.`,
    '',
  ];
}

/** Each events row's P90 ÷ the estimate's in one outcome, in row order (rows between the estimate and oracle). */
function eventsRatios(o: ScenarioOutcome): (number | null)[] {
  const estimate = o.rows[0].ttftMs.p90;
  return o.rows.slice(1, -1).map((r) => (r.ttftMs.p90 === null || !estimate ? null : r.ttftMs.p90 / estimate));
}

/** Per scenario (`byRun[i][k]`: scenario k in run i), each events row's paired verdict over the runs. */
function scenarioVerdicts(byRun: readonly (readonly ScenarioOutcome[])[]): PairedRatioComparison[][] {
  return byRun[0].map((_, k) => {
    const ratios = byRun.map((outcomes) => eventsRatios(outcomes[k]));
    return ratios[0].map((_r, row) =>
      comparePairedRatios(ratios.map((r) => r[row]).filter((x): x is number => x !== null)),
    );
  });
}

/** Per scenario, each events row's P90 ÷ the estimate's in every run, their geometric mean and the verdict. */
function runLines(
  byRun: readonly (readonly ScenarioOutcome[])[],
  verdicts: readonly (readonly PairedRatioComparison[])[],
): string[] {
  if (byRun.length < 2) return [];
  const runs = byRun.map((outcomes) => runLabel(outcomes[0].scenario));
  const lines = [
    `### P90 ÷ the estimate's in every run (${runs.length} runs)`,
    '',
    "Each cell: that events row's P90 TTFT ÷ `cache-aware (estimate)`'s in the same scenario and run (same workload, seed and jitter stream); then the geometric mean, and the verdict: **worse** only when the sign test's exact 95 % interval for the median ratio lies above 1×, **better** when below, else **within the spread**.",
    '',
  ];
  byRun[0].forEach((first, k) => {
    const labels = first.rows.slice(1, -1).map((r) => r.label);
    const rows = labels.map((label, row) => {
      const cells = byRun.map((outcomes) => eventsRatios(outcomes[k])[row]);
      const mean = times(verdicts[k][row].geometricMean, 1);
      return `| ${[label, ...cells.map((x) => times(x, 1)), mean, verdictText(verdicts[k][row])].join(' | ')} |`;
    });
    lines.push(
      `#### ${first.scenario.title}`,
      '',
      `| strategy | ${runs.join(' | ')} | geometric mean | verdict |`,
      `| --- | ${runs.map(() => '---:').join(' | ')} | ---: | --- |`,
      ...rows,
      '',
    );
  });
  return lines;
}

/**
 * Runs every scenario in each run (`scenariosByRun`, one list per seed and jitter stream) and returns the docs
 * section (markers included): the full tables at the first run, then each events row's P90 ÷ the estimate's in every
 * run and its verdict.
 */
export async function runKvTruthBench(
  scenariosByRun: readonly (readonly KvTruthScenario[])[],
  label: string,
  reportDir?: string,
  log?: (line: string) => void,
): Promise<string> {
  const started = Date.now();
  const load = loadavg()[0];
  const byRun: ScenarioOutcome[][] = [];
  for (const scenarios of scenariosByRun) {
    const outcomes: ScenarioOutcome[] = [];
    for (const s of scenarios) {
      outcomes.push(await runScenario(s, reportDir));
      const seconds = outcomes[outcomes.length - 1].wallSeconds.toFixed(0);
      log?.(`${runLabel(s)}, ${s.key}: ${ROWS.length} runs in ${seconds} s`);
    }
    byRun.push(outcomes);
  }
  const verdicts = scenarioVerdicts(byRun);
  const runText = `${byRun.length === 1 ? 'one run' : `${byRun.length} runs`}: ${byRun.map((o) => runLabel(o[0].scenario)).join('; ')} (the workload's and the run's seed${byRun.length === 1 ? '' : "; the scenario tables are the first run's"})`;
  const jittered = byRun.some((o) => (o[0].scenario.settings.stepJitterCv ?? 0) > 0);
  const jitterText = jittered
    ? `, every engine step jittered at vLLM's measured CV ${MEASURED_STEP_JITTER_CV * 100} % (section 4) from the stream named`
    : '';
  return [
    KV_TRUTH_START,
    '## 9. Engine truth: where KV events matter (`npm run bench:kv-truth`)',
    '',
    `Produced by \`${label}\` on ${new Date().toISOString().slice(0, 10)} in ${((Date.now() - started) / 1000).toFixed(0)} s on the shared 2-core development machine (load average ${load.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end; simulated time does not depend on it). 7 × p5-llama-3.1-70b, ${runText}${jitterText}, the first third of each run a warm-up left out of the figures. Rows: \`cache-aware\` on its own estimate; \`cache-aware\` following the engines' KV events (\`simulate --kv-events on\`) delivered at once, 50 ms after each engine step, with 1 % of batches lost and no replay socket (a loss leaves that engine to the estimate until it restarts), and with 1 % lost and replayed (\`--kv-events-replay on\`); \`oracle\`, which reads the engine models directly. Hit rate: engine-reported, routed requests only; predicted − delivered: the mean of |the cached tokens the decision predicted − those the engine served| over each request's prompt tokens. Errors: requests the restart cut. Targets (issue 39): with events, P90 TTFT within ${ORACLE_P90_RATIO}× \`oracle\`'s in each scenario; no scenario worse than the estimate, judged over the runs (sign test on the paired P90 ratios, ${PAIRED_CONFIDENCE * 100} %: worse only beyond the run-to-run spread).`,
    '',
    ...byRun[0].flatMap((o, k) => scenarioLines(o, verdicts[k])),
    ...runLines(byRun, verdicts),
    KV_TRUTH_END,
  ].join('\n');
}

export interface KvTruthArgs {
  readonly quick: boolean;
  readonly seeds: number;
  readonly jitterStreams: number;
  /** Only these scenarios (keys); undefined: all, and the section is written into docs/benchmarks.md. */
  readonly scenarios?: readonly string[];
}

/** The scenario keys `--scenarios` accepts, in the bench's order. */
export const KV_TRUTH_SCENARIO_KEYS: readonly string[] = kvTruthScenarios(60).map((s) => s.key);

/** `--scenarios A,B`: known keys only (the error lists them). */
function scenarioKeysFlag(raw: string | undefined): string[] {
  const keys = (raw ?? '').split(',');
  const unknown = keys.filter((k) => !KV_TRUTH_SCENARIO_KEYS.includes(k));
  if (unknown.length > 0)
    throw new ConfigError([
      `--scenarios takes a comma-separated list of ${KV_TRUTH_SCENARIO_KEYS.join(', ')} (got ${JSON.stringify(raw ?? '')})`,
    ]);
  return keys;
}

/** The command line: `--quick`, `--seeds N`, `--jitter-streams K` and `--scenarios KEYS` (errors name the flag and its range). */
export function parseKvTruthArgs(argv: readonly string[]): KvTruthArgs {
  let quick = false;
  let seeds = 1;
  let jitterStreams = 0;
  let scenarios: string[] | undefined;
  const { min, max } = KV_TRUTH_JITTER_STREAMS;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--quick') quick = true;
    else if (argv[i] === '--seeds') seeds = integerFlag('seeds', argv[++i], KV_TRUTH_SEEDS.min, KV_TRUTH_SEEDS.max);
    else if (argv[i] === '--jitter-streams') jitterStreams = integerFlag('jitter-streams', argv[++i], min, max);
    else if (argv[i] === '--scenarios') scenarios = scenarioKeysFlag(argv[++i]);
    else
      throw new Error(
        `usage: npm run bench:kv-truth [-- --quick] [--seeds N] [--jitter-streams K] [--scenarios KEYS]; unknown flag "${argv[i]}"`,
      );
  }
  return { quick, seeds, jitterStreams, ...(scenarios === undefined ? {} : { scenarios }) };
}

/** Every run the arguments ask for, seed by seed, each one list of scenarios. */
export function kvTruthRuns(args: KvTruthArgs): KvTruthScenario[][] {
  const streams = args.jitterStreams === 0 ? [0] : Array.from({ length: args.jitterStreams }, (_, j) => j + 1);
  const wanted = (s: KvTruthScenario) => args.scenarios === undefined || args.scenarios.includes(s.key);
  return Array.from({ length: args.seeds }, (_, i) =>
    streams.map((stream) => kvTruthScenarios(args.quick ? 60 : 180, i + 1, stream).filter(wanted)),
  ).flat();
}

/**
 * Runs the bench as `argv` asks; with every scenario, writes its section into docs/benchmarks.md (a subset only
 * prints it: it would replace the whole section).
 */
async function main(argv: readonly string[]): Promise<void> {
  const args = parseKvTruthArgs(argv);
  const flags = [
    ...(args.quick ? ['--quick'] : []),
    ...(args.seeds > 1 ? ['--seeds', String(args.seeds)] : []),
    ...(args.jitterStreams > 0 ? ['--jitter-streams', String(args.jitterStreams)] : []),
    ...(args.scenarios !== undefined ? ['--scenarios', args.scenarios.join(',')] : []),
  ];
  const label = `npm run bench:kv-truth${flags.length > 0 ? ` -- ${flags.join(' ')}` : ''}`;
  const section = await runKvTruthBench(kvTruthRuns(args), label, join('reports', 'bench-kv-truth'), (l) =>
    process.stderr.write(`${l}\n`),
  );
  if (args.scenarios === undefined)
    writeSection(join('docs', 'benchmarks.md'), section, { begin: KV_TRUTH_START, end: KV_TRUTH_END });
  process.stdout.write(`${section}\n`);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : String((err as Error).stack ?? err)}\n`);
    process.exit(1);
  });
}
