/**
 * `npm run bench:peers` (issue 37, "Side by side, one run"): every registered peer router's policy, `cache-aware`,
 * the best `sagemaker-prefix-aware` setting of bench:policies' sweep and `random`, on the shipped Mooncake trace,
 * `long-context`, `shared-system`, `short-chat` (7 × p5-llama-3.1-70b) and the trace on the mixed fleet
 * (5 × p5 + 2 × p4d). Writes one table per workload between the bench:peers markers of docs/benchmarks.md and an
 * HTML page with one TTFT CDF chart per workload (reports/bench-peers/peers.html; full reports beside it).
 *
 *   npm run bench:peers [-- --quick] [-- --jobs N] [-- --workloads KEY,KEY]
 *
 * Peers are selected by name from the registry (a name it does not hold is skipped); `oracle`, the simulator's greedy
 * reference, gets a row in every table but is never the best peer the target compares with.
 * --quick: small request counts (a smoke run).
 * --workloads: only these workloads (trace, long-context, shared-system, short-chat, mixed-trace), to iterate on one;
 * the section is printed but docs/benchmarks.md is left as it is (its tables cover every workload).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { builtinProfile, type EngineProfile } from '../src/emulator/engine-profile';
import { expandPolicySweep, formatPolicySpec, policyDefinition, type PolicyConfig } from '../src/policy';
import { cdfChart, escapeXml, seriesColor, writeReport, type StrategySummary } from '../src/report';
import type { StrategyComparison } from '../src/sim/compare-strategies';
import { compareStrategiesInParallel, defaultJobs, JOBS_RANGE } from '../src/sim/parallel-runs';
import { parseWorkloadSpec } from '../src/workload';
import { MIXED_FLEET } from './mixed-fleet';
import { windowSpread, windowSpreadLine, type WindowSpread } from './peer-windows';
import { writeSection } from './policy-targets';

export const PEERS_START = '<!-- bench:peers -->';
export const PEERS_END = '<!-- /bench:peers -->';

/**
 * The peer routers of issue 37, in the order the tables list them. A name the registry does not hold (yet) is
 * skipped: `oracle` is the simulator's greedy bound, shown beside the peers but never counted as one.
 */
const PEER_NAMES = [
  'smg-cache-aware',
  'dynamo-kv',
  'production-stack-prefixaware',
  'aibrix-prefix-cache',
  'llm-d',
  'llm-d-precise',
] as const;
const ORACLE = 'oracle';
/** bench:policies' sweep: the best setting per workload is what PREFIX_AWARE can do at its best there. */
export const PEERS_SWEEP =
  'sagemaker-prefix-aware?prefixLength=1024,4096,8192,16384,65536&concurrencyThreshold=8,32,128';
/** The issue's target: cache-aware's P50 and P90 TTFT at most this times the best peer's. */
const TARGET_RATIO = 1.02;
const P5 = builtinProfile('p5-llama-3.1-70b');

export interface PeersWorkload {
  /** Short key: report folder and chart id. */
  readonly key: string;
  readonly title: string;
  /** Workload spec (trace: FILE is shown as TRACE in the docs). */
  readonly spec: string;
  readonly fleet: readonly EngineProfile[];
  /** When set, the table is followed by the spread of cache-aware's ratios over windows of this many requests. */
  readonly windowRequests?: number;
}

export interface PeersBenchOptions {
  readonly workloads: readonly PeersWorkload[];
  readonly sweep: string;
  /** Worker threads per comparison (1: in this thread). */
  readonly jobs: number;
  /** Directory for the HTML page and full reports; undefined: none written. */
  readonly reportDir?: string;
  readonly label: string;
  readonly log?: (line: string) => void;
}

export interface PeersBenchResult {
  /** The docs section, markers included. */
  readonly section: string;
  /** The HTML page: one TTFT CDF chart per workload. */
  readonly html: string;
}

/** The registered peers (and oracle, when registered), by name. */
export function registeredPeers(): PolicyConfig[] {
  return [...PEER_NAMES, ORACLE]
    .filter((name) => policyDefinition(name) !== undefined)
    .map((name) => ({ name }) as PolicyConfig);
}

/** How much of each workload a run sends. */
export interface PeersSizes {
  /** The first N trace requests; undefined: the whole trace. */
  readonly traceCount?: number;
  /** Requests per window of the trace workloads' sampling-noise line (see peer-windows.ts). */
  readonly traceWindow: number;
  /** Simulated seconds of long-context and short-chat arrivals. */
  readonly seconds: number;
  /** The first N shared-system requests (of its 64 groups × 16). */
  readonly sharedSystemCount: number;
}

/**
 * Full run: the whole shipped trace (3,993 requests), since the first 200 decide a median by one request (issue 37);
 * one AIBrix run of the whole trace costs 29 s of CPU (392 s before its table stopped hashing blocks with a MAC,
 * issue 37), cache-aware's 14 s.
 */
export const FULL_SIZES: PeersSizes = { traceWindow: 200, seconds: 60, sharedSystemCount: 256 };
/** --quick: a smoke run. */
export const QUICK_SIZES: PeersSizes = { traceCount: 40, traceWindow: 10, seconds: 15, sharedSystemCount: 64 };

/** The shipped trace, the three synthetic workloads and the mixed fleet, at the given sizes. */
export function peersWorkloads(trace: string, sizes: PeersSizes): PeersWorkload[] {
  const seven = Array.from({ length: 7 }, () => P5);
  const count = sizes.traceCount === undefined ? '' : `&count=${sizes.traceCount}`;
  const traceSpec = `trace:${trace}?speedup=1${count}`;
  const windowRequests = sizes.traceWindow;
  return [
    { key: 'trace', title: 'Mooncake trace, 7 × p5', spec: traceSpec, fleet: seven, windowRequests },
    {
      key: 'long-context',
      title: 'long-context, 7 × p5',
      spec: `long-context?duration=${sizes.seconds}`,
      fleet: seven,
    },
    {
      key: 'shared-system',
      title: 'shared-system, 7 × p5',
      spec: `shared-system?count=${sizes.sharedSystemCount}`,
      fleet: seven,
    },
    { key: 'short-chat', title: 'short-chat, 7 × p5', spec: `short-chat?duration=${sizes.seconds}`, fleet: seven },
    {
      key: 'mixed-trace',
      title: 'Mooncake trace, 5 × p5 + 2 × p4d',
      spec: traceSpec,
      fleet: MIXED_FLEET,
      windowRequests,
    },
  ];
}

/**
 * The workloads `--workloads KEY,KEY` names, in the bench's order; undefined keeps them all. Throws naming the flag
 * and the keys it takes when a key is unknown or none is given.
 */
export function selectWorkloads(all: readonly PeersWorkload[], keys: string | undefined): PeersWorkload[] {
  if (keys === undefined) return [...all];
  const known = all.map((w) => w.key);
  const wanted = keys.split(',').filter((k) => k !== '');
  const unknown = wanted.filter((k) => !known.includes(k));
  if (wanted.length === 0 || unknown.length > 0)
    throw new RangeError(
      `--workloads must be a comma-separated list of ${known.join(', ')} (got ${keys === '' ? 'nothing' : keys})`,
    );
  return all.filter((w) => wanted.includes(w.key));
}

function ms(x: number | null): string {
  return x === null ? '—' : `${x.toFixed(0)} ms`;
}
function pct(x: number | null): string {
  return x === null ? '—' : `${(x * 100).toFixed(1)} %`;
}
function ratio(a: number | null, b: number | null): number | null {
  return a === null || b === null || b === 0 ? null : a / b;
}
function byTtft(a: StrategySummary, b: StrategySummary): number {
  return (
    (a.ttftMs.p90 ?? Infinity) - (b.ttftMs.p90 ?? Infinity) || (a.ttftMs.p50 ?? Infinity) - (b.ttftMs.p50 ?? Infinity)
  );
}

async function compare(
  o: PeersBenchOptions,
  w: PeersWorkload,
  key: string,
  policies: readonly PolicyConfig[],
): Promise<StrategyComparison> {
  const t0 = Date.now();
  const mixed = new Set(w.fleet.map((p) => p.name)).size > 1;
  const comparison = await compareStrategiesInParallel(
    {
      workload: parseWorkloadSpec(w.spec),
      policies,
      instances: w.fleet.length,
      profile: w.fleet[0],
      ...(mixed ? { profiles: w.fleet } : {}),
      title: `${w.title} (${key})`,
    },
    { jobs: o.jobs },
  );
  if (o.reportDir !== undefined) await writeReport(comparison.report, join(o.reportDir, key));
  o.log?.(`${key}: ${policies.length} strategies in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return comparison;
}

const HEADER = [
  '| strategy | TTFT P50 | TTFT P90 | TTFT P99 | hit rate of fleet ceiling | throughput | max / mean request share |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
];

function tableRow(s: StrategySummary, label = s.label): string {
  const cells = [
    label,
    ms(s.ttftMs.p50),
    ms(s.ttftMs.p90),
    ms(s.ttftMs.p99),
    pct(s.cacheHitRate.ofFleetCeiling),
    s.throughput.requestsPerSecond === null ? '—' : `${s.throughput.requestsPerSecond.toFixed(2)} req/s`,
    s.balance.requestsMaxOverMean === null ? '—' : s.balance.requestsMaxOverMean.toFixed(2),
  ];
  return `| ${cells.join(' | ')} |`;
}

/** One workload's rows, in run order: cache-aware, the peers, oracle, the best PREFIX_AWARE setting, random. */
interface WorkloadOutcome {
  readonly workload: PeersWorkload;
  readonly rows: readonly StrategySummary[];
  readonly cacheAware: StrategySummary;
  /** The peers, oracle excluded: the target compares with the best of them on each percentile. */
  readonly peers: readonly StrategySummary[];
  readonly bestSageMaker: StrategySummary;
  /** With `windowRequests`: cache-aware's ratios to the best peer over windows of the run's requests. */
  readonly windows?: WindowSpread;
}

async function runWorkload(o: PeersBenchOptions, w: PeersWorkload): Promise<WorkloadOutcome> {
  const peers = registeredPeers();
  const main = await compare(o, w, w.key, [{ name: 'cache-aware' }, ...peers, { name: 'random' }]);
  const sweep = await compare(o, w, `${w.key}-sweep`, expandPolicySweep(o.sweep));
  const bestSageMaker = [...sweep.report.strategies].sort(byTtft)[0];
  const strategies = main.report.strategies;
  const cacheAware = strategies[0];
  const random = strategies[strategies.length - 1];
  const peerRows = strategies.slice(1, -1);
  const peerRecords = main.results.slice(1, -1).filter((r) => r.policy.name !== ORACLE);
  return {
    workload: w,
    rows: [cacheAware, ...peerRows, bestSageMaker, random],
    cacheAware,
    peers: peerRows.filter((s) => s.strategy.name !== ORACLE),
    bestSageMaker,
    ...(w.windowRequests === undefined
      ? {}
      : {
          windows: windowSpread(
            requestOrder(w.spec),
            main.results[0].records,
            peerRecords.map((r) => r.records),
            w.windowRequests,
            TARGET_RATIO,
          ),
        }),
  };
}

/** The workload's request ids in its own (arrival) order: the windows' order, the same for every strategy. */
function requestOrder(spec: string): string[] {
  const ids: string[] = [];
  for (const request of parseWorkloadSpec(spec).requests()) ids.push(request.id);
  return ids;
}

/** The peer with the lowest value of a percentile, and cache-aware's value over it. */
function againstBest(r: WorkloadOutcome, p: 'p50' | 'p90'): { label: string; ratio: number | null } {
  const best = [...r.peers].sort((a, b) => (a.ttftMs[p] ?? Infinity) - (b.ttftMs[p] ?? Infinity))[0];
  return { label: best.label, ratio: ratio(r.cacheAware.ttftMs[p], best.ttftMs[p]) };
}

/** The verdict line: cache-aware's P50 and P90 against the best peer's on each. */
function verdict(r: WorkloadOutcome): string {
  if (r.peers.length === 0) return '- No peer is registered.';
  const p50 = againstBest(r, 'p50');
  const p90 = againstBest(r, 'p90');
  const met = p50.ratio !== null && p90.ratio !== null && p50.ratio <= TARGET_RATIO && p90.ratio <= TARGET_RATIO;
  return `- cache-aware against the best peer on each: P50 ${p50.ratio?.toFixed(2)}× \`${p50.label}\`'s, P90 ${p90.ratio?.toFixed(2)}× \`${p90.label}\`'s (target ≤ ${TARGET_RATIO}× on both: ${met ? '**met**' : '**not met**'}).`;
}

function workloadLines(r: WorkloadOutcome, trace: string | undefined): string[] {
  const fleet = r.workload.title.split(', ').slice(1).join(', ');
  const spec = trace === undefined ? r.workload.spec : r.workload.spec.replace(trace, 'TRACE');
  return [
    `### ${r.workload.title.split(', ')[0]} on ${fleet} (\`${spec}\`)`,
    '',
    ...HEADER,
    ...r.rows.map((s) =>
      s === r.bestSageMaker ? tableRow(s, `best of the sweep: ${formatPolicySpec(configOf(s))}`) : tableRow(s),
    ),
    '',
    verdict(r),
    ...(r.windows === undefined ? [] : [windowSpreadLine(r.windows)]),
    '',
  ];
}

function configOf(s: StrategySummary): PolicyConfig {
  return { name: s.strategy.name, ...(s.strategy.options ?? {}) } as PolicyConfig;
}

/** One TTFT CDF chart per workload, every strategy of its table a series. */
export function peersHtml(outcomes: readonly WorkloadOutcome[], label: string): string {
  const cards = outcomes.map((r) => {
    const series = r.rows.map((s, i) => ({ label: s.label, color: seriesColor(i), points: s.ttftCdf }));
    const chart = cdfChart(series, {
      scale: 'log',
      title: `TTFT CDF (log x): ${r.workload.title}`,
      xLabel: 'time to first token',
      width: 760,
      height: 420,
    });
    return `<section id="${escapeXml(r.workload.key)}"><h2>${escapeXml(r.workload.title)}</h2>${chart}</section>`;
  });
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><title>bench:peers</title>',
    '<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:820px}</style></head><body>',
    `<h1>Peer routers side by side</h1><p>${escapeXml(label)}: one TTFT CDF per workload.</p>`,
    ...cards,
    '</body></html>',
    '',
  ].join('\n');
}

/** Runs every workload and returns the docs section and the HTML page (written to reportDir when given). */
export async function runPeersBench(o: PeersBenchOptions, trace?: string): Promise<PeersBenchResult> {
  const started = Date.now();
  const loadAtStart = loadavg()[0];
  const outcomes: WorkloadOutcome[] = [];
  for (const w of o.workloads) outcomes.push(await runWorkload(o, w));
  const html = peersHtml(outcomes, o.label);
  if (o.reportDir !== undefined) {
    mkdirSync(o.reportDir, { recursive: true });
    writeFileSync(join(o.reportDir, 'peers.html'), html);
  }
  const names = registeredPeers()
    .map((p) => `\`${p.name}\``)
    .join(', ');
  const section = [
    PEERS_START,
    '## 8. Peer routers side by side (`npm run bench:peers`)',
    '',
    `Produced by \`${o.label}\` on ${new Date().toISOString().slice(0, 10)} in ${((Date.now() - started) / 1000).toFixed(0)} s on the 2-core development machine (load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end; cold caches per strategy, seed 1). Rows: \`cache-aware\`, the registered peers (${names}), the best setting of the sweep \`${o.sweep}\` by P90 TTFT (run separately on the same workload), and \`random\`; every policy at its defaults. Hit rate: engine-reported, as a fraction of the fleet ceiling; throughput: completed requests per second; share: the busiest instance's request count over the mean. TTFT CDFs per workload: reports/bench-peers/peers.html.`,
    '',
    ...outcomes.flatMap((r) => workloadLines(r, trace)),
    PEERS_END,
  ].join('\n');
  return { section, html };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const jobsAt = args.indexOf('--jobs');
  const jobs = jobsAt >= 0 ? Number(args[jobsAt + 1]) : defaultJobs();
  if (!Number.isInteger(jobs) || jobs < JOBS_RANGE.min || jobs > JOBS_RANGE.max) {
    process.stderr.write(
      `--jobs must be an integer from ${JOBS_RANGE.min} to ${JOBS_RANGE.max} (got ${args[jobsAt + 1]})\n`,
    );
    process.exit(2);
  }
  const trace = join(__dirname, '..', '..', '..', 'router', 'traces', 'mooncake-synthetic.jsonl');
  const workloadsAt = args.indexOf('--workloads');
  const subset = workloadsAt >= 0 ? (args[workloadsAt + 1] ?? '') : undefined;
  const label = `npm run bench:peers${quick ? ' -- --quick' : ''}${subset === undefined ? '' : ` -- --workloads ${subset}`}`;
  let workloads: PeersWorkload[];
  try {
    workloads = selectWorkloads(peersWorkloads(trace, quick ? QUICK_SIZES : FULL_SIZES), subset);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  runPeersBench(
    {
      workloads,
      sweep: PEERS_SWEEP,
      jobs,
      reportDir: join('reports', 'bench-peers'),
      label,
      log: (l) => process.stderr.write(`${l}\n`),
    },
    trace,
  )
    .then(({ section }) => {
      if (subset === undefined)
        writeSection(join('docs', 'benchmarks.md'), section, { begin: PEERS_START, end: PEERS_END });
      process.stdout.write(`${section}\n`);
    })
    .catch((err: unknown) => {
      process.stderr.write(`${String((err as Error).stack ?? err)}\n`);
      process.exit(1);
    });
}
