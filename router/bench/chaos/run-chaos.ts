/**
 * `npm run test:chaos` — the full reliability suite (docs/reliability.md): every scenario at full size, its
 * figures printed as markdown and written into docs/reliability.md between the chaos markers; exit status 1
 * if any invariant was violated. `npm test` runs each scenario at a small size (test/router/chaos).
 *
 *   npm run test:chaos                                   all scenarios, full size (about 15 minutes)
 *   npm run test:chaos -- --only soak --soak-seconds 60  one scenario (CI runs this 1-minute soak)
 *   --no-write                                           print only
 */
import { integerFlag } from '../../src/cli/flag-values';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { runClientAborts } from './client-aborts';
import { runErrorStatuses, runGrayFailure, runNeverAnswers } from './faulty-backends';
import { runFuzz } from './fuzz-requests';
import { runKillBackend } from './kill-backend';
import { runSigterm } from './sigterm';
import { runSlowClients } from './slow-clients';
import { mib, runSoak } from './soak';

interface ScenarioReport {
  /** Set by the runner: the --only name. */
  key?: string;
  readonly name: string;
  readonly figures: string;
  readonly violations: readonly string[];
}

type Scenario = (soakSeconds: number) => Promise<ScenarioReport>;

const json = (v: unknown): string => `\`${JSON.stringify(v)}\``;

export const SCENARIOS: Record<string, Scenario> = {
  'kill-backend': async () => {
    const r = await runKillBackend({
      rate: 200,
      durationMs: 60_000,
      downMs: 5000,
      seed: Date.now() % 1000,
      maxEjectMs: 2000,
      maxReadmitMs: 5000,
    });
    return {
      name: 'One of four backends killed under 200 req/s for 60 s (half streamed)',
      figures: `${r.requests} requests; outcomes ${json(r.outcomes)}; in flight on the victim when killed ${r.inFlightOnVictimAtKill}, client-visible failures ${r.clientVisibleFailures}; ejected after ${r.ejectedAfterMs?.toFixed(0)} ms, re-admitted ${r.readmittedAfterMs?.toFixed(0)} ms after it came back (health checks ${json(r.healthCheck)})`,
      violations: r.violations,
    };
  },
  'never-answers': async () => {
    const r = await runNeverAnswers({ requests: 100, upstreamHeadersTimeoutMs: 1000 });
    return {
      name: 'Backend that accepts and never answers (upstreamHeadersTimeoutMs 1000)',
      figures: json(r.figures),
      violations: r.violations,
    };
  },
  'gray-failure': async () => {
    const r = await runGrayFailure({ durationMs: 10_000, concurrency: 10, slowMs: 300, concurrencyThreshold: 4 });
    return {
      name: 'Gray failure: one of three backends 300 ms slow, passing health checks, 10 concurrent clients for 10 s (concurrencyThreshold 4)',
      figures: json(r.figures),
      violations: r.violations,
    };
  },
  'error-statuses': async () => {
    const r = await runErrorStatuses({ requestsPerStatus: 500 });
    return {
      name: 'Backends answering 429 / 500 / 503 (500 requests each)',
      figures: json(r.figures),
      violations: r.violations,
    };
  },
  'client-aborts': async () => {
    const r = await runClientAborts({ requests: 10_000, concurrency: 64, seed: Date.now() % 1000 });
    return {
      name: '10,000 requests, a random third aborted by the client',
      figures: `aborts ${json(r.aborted)}; reached a backend ${r.abortsSeenByBackends}, of which closed there ${r.closedAtBackends}; counted 499 ${r.counted499}; outcomes ${json(r.outcomes)}; load counters after ${json(r.countersAfter)}`,
      violations: r.violations,
    };
  },
  'slow-clients': async () => {
    const r = await runSlowClients({
      slowClients: 500,
      rate: 100,
      phaseMs: 5000,
      headersTimeoutMs: 2000,
      bodyTimeoutMs: 2000,
      slackMs: 5000,
    });
    const f = (s: { n: number; p50: number; p99: number }): string =>
      `n ${s.n}, p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms`;
    return {
      name: '500 slow clients trickling headers or bodies (timeouts 2000 ms) beside 100 req/s of normal traffic',
      figures: `cut off ${json(r.cutOff)}, worst ${json(r.worstCutMs)} ms after connecting; normal requests without slow clients: ${f(r.normal.without)}; with: ${f(r.normal.with)}; outcomes ${json(r.normalOutcomes)}`,
      violations: r.violations,
    };
  },
  soak: async (soakSeconds) => {
    const r = await runSoak({
      rate: 100,
      durationMs: soakSeconds * 1000,
      warmupMs: 10_000,
      settleMs: 6000,
      maxGrowthBytes: 32 * 1024 * 1024,
      maxExtraSockets: 16,
    });
    const s = (x: typeof r.start): string =>
      `RSS ${mib(x.rssBytes)} MiB, heap ${mib(x.heapUsedBytes)} MiB, TCP handles ${x.tcpHandles}, event-loop delay p99 ${x.eventLoopDelayP99Ms.toFixed(1)} ms`;
    return {
      name: `Soak: ${soakSeconds} s at 100 req/s (half streamed), router in its own process; bounds: RSS and heap +32 MiB, TCP handles +16`,
      figures: `${r.requests} requests, outcomes ${json(r.outcomes)}, latency p50 ${r.latencyMs.p50.toFixed(2)} ms p99 ${r.latencyMs.p99.toFixed(2)} ms; start (idle, after warm-up): ${s(r.start)}; end (idle): ${s(r.end)}; under load: event-loop delay p99 ${r.underLoad.eventLoopDelayP99Ms.toFixed(1)} ms, max ${r.underLoad.eventLoopDelayMaxMs.toFixed(1)} ms`,
      violations: r.violations,
    };
  },
  sigterm: async () => {
    const r = await runSigterm({ rate: 100, loadMs: 3000, shutdownGraceMs: 10_000, slackMs: 5000 });
    return {
      name: 'SIGTERM to prefix-router serve under 100 req/s (0.5 s streams), grace 10 s',
      figures: `before the signal ${json(r.beforeSignal)} (in flight at the signal ${r.inFlightAtSignal}); requests after it ${json(r.probesAfterSignal)}; exit code ${r.exitCode} after ${r.exitAfterMs} ms`,
      violations: r.violations,
    };
  },
  fuzz: async () => {
    const r = await runFuzz({ cases: 10_000, seed: Date.now() % 100_000, concurrency: 32 });
    return {
      name: `Fuzzer: ${r.cases.toLocaleString('en-US')} malformed requests to every route`,
      figures: `statuses ${json(r.byStatus)}; codes ${json(r.byCode)}`,
      violations: r.violations,
    };
  },
};

const BEGIN = '<!-- test:chaos:begin -->';
const END = '<!-- test:chaos:end -->';
const HEADER = ['| scenario | result | figures | measured |', '| --- | --- | --- | --- |'];

/** One table row per scenario, keyed by its --only name, so a partial run updates only its own rows. */
export function mergeRows(currentBlock: string, rows: ReadonlyMap<string, string>): string {
  const kept = new Map<string, string>();
  for (const line of currentBlock.split('\n')) {
    const key = /^\| `([a-z-]+)` /.exec(line)?.[1];
    if (key !== undefined && key in SCENARIOS) kept.set(key, line);
  }
  for (const [key, row] of rows) kept.set(key, row);
  const ordered = Object.keys(SCENARIOS)
    .filter((k) => kept.has(k))
    .map((k) => kept.get(k) as string);
  return [...HEADER, ...ordered].join('\n');
}

function writeIntoDocs(rows: ReadonlyMap<string, string>): string {
  const docs = join(
    __dirname,
    '..',
    '..',
    '..',
    ...(__filename.endsWith('.ts') ? [] : ['..']),
    'docs',
    'reliability.md',
  );
  const current = existsSync(docs) ? readFileSync(docs, 'utf8') : '';
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const inside = start !== -1 && end > start ? current.slice(start + BEGIN.length, end) : '';
  const block = `${BEGIN}\n${mergeRows(inside, rows)}\n${END}`;
  writeFileSync(
    docs,
    start !== -1 && end > start
      ? `${current.slice(0, start)}${block}${current.slice(end + END.length)}`
      : `${current}\n${block}\n`,
  );
  return docs;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i === -1 ? undefined : argv[i + 1];
  };
  const only = value('--only')?.split(',');
  const soakSeconds = integerFlag('soak-seconds', value('--soak-seconds') ?? '600', 1, 86_400);
  for (const name of only ?? [])
    if (!(name in SCENARIOS))
      throw new Error(`--only: unknown scenario ${name} (one of ${Object.keys(SCENARIOS).join(', ')})`);
  const names = only ?? Object.keys(SCENARIOS);
  const reports: ScenarioReport[] = [];
  const loadStart = loadavg()[0];
  for (const name of names) {
    process.stderr.write(`test:chaos: ${name}\n`);
    const r = await SCENARIOS[name](soakSeconds);
    r.key = name;
    reports.push(r);
    process.stderr.write(
      `test:chaos: ${name}: ${r.violations.length === 0 ? 'passed' : `FAILED: ${r.violations.join('; ')}`}\n`,
    );
  }
  const cpu = cpus();
  const command = `npm run test:chaos${argv.length > 0 ? ` -- ${argv.filter((a) => a !== '--no-write').join(' ')}` : ''}`;
  const measured = `${new Date().toISOString().slice(0, 10)}, \`${command}\`, ${cpu.length} × ${cpu[0]?.model ?? 'CPU'}, Node ${process.version}, load average ${loadStart.toFixed(1)} → ${loadavg()[0].toFixed(1)}`;
  const cell = (text: string): string => text.replace(/\|/g, '/');
  const rows = new Map(
    reports.map((r) => [
      r.key as string,
      `| \`${r.key}\` ${cell(r.name)} | ${r.violations.length === 0 ? 'passed' : `**failed**: ${cell(r.violations.join('; '))}`} | ${cell(r.figures)} | ${cell(measured)} |`,
    ]),
  );
  const markdown = [...HEADER, ...rows.values()].join('\n');
  process.stdout.write(`${markdown}\n`);
  if (!argv.includes('--no-write')) process.stderr.write(`test:chaos: written to ${writeIntoDocs(rows)}\n`);
  process.exit(reports.every((r) => r.violations.length === 0) ? 0 : 1);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`test:chaos failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(2);
  });
}
