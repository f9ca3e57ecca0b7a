/**
 * `npm run bench:sim`: reproduces AWS's published PREFIX_AWARE experiment in simulation and writes
 * docs/benchmarks.md (plus full reports under reports/bench-sim/).
 *
 * Scenarios, each on 7 × p5-llama-3.1-70b engine models with cold caches per strategy:
 *   1. long-context — AWS's shape: ~8,000-token prompts in groups sharing 7,000-token prefixes; closed loop of
 *      64 clients, one simulated hour of sending.
 *   2. short-chat — multi-turn conversations whose history grows, open loop, one simulated hour; shows how
 *      prefixLength decides whether a conversation keeps its instance.
 *   3. sensitivity — long-context at other loads and output lengths (random vs sagemaker-prefix-aware only).
 *
 *   npm run bench:sim [-- --quick]      (--quick: 10 simulated minutes instead of an hour, for a smoke run)
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { builtinProfile } from '../src/emulator/engine-profile';
import type { PolicyConfig } from '../src/policy';
import { compareStrategies, type StrategyComparison } from '../src/sim/compare-strategies';
import { writeReport, type BenchmarkReport, type StrategySummary } from '../src/sim/report';
import { parseWorkloadSpec } from '../src/sim/workload';

const INSTANCES = 7;
const PROFILE = builtinProfile('p5-llama-3.1-70b');
const SPA: PolicyConfig = { name: 'sagemaker-prefix-aware' };

/** AWS's published figures (DESIGN.md §5): PREFIX_AWARE vs RANDOM on 7 × ml.p5.48xlarge, Llama 3.1 70B. */
const AWS = {
  longContext: { ttftP50: '−71…77 %', ttftP90: '−33…37 %', hit: '≈25 % → ≈82 %', throughput: '+15…16 %', share: '13.3–15.4 %' },
  shortChat: { ttftP50: '−13…16 %', ttftP90: '−24…37 %' },
};

interface Scenario {
  readonly key: string;
  readonly title: string;
  readonly workload: string;
  readonly policies: readonly PolicyConfig[];
  readonly sendSeconds: number;
}

function scenarios(seconds: number): Scenario[] {
  // Closed-loop workloads are sized generously (rate × duration); the send window ends the run.
  const lc = (extra: string) => `long-context?outputTokens=1024&duration=${seconds * 3}&${extra}`;
  return [
    {
      key: 'long-context',
      title: 'long-context (AWS replica): 7 × p5, closed loop of 64, 1,024 output tokens',
      workload: lc('concurrency=64'),
      policies: [{ name: 'random' }, { name: 'least-outstanding-requests' }, SPA],
      sendSeconds: seconds,
    },
    {
      key: 'short-chat',
      title: 'short-chat: multi-turn conversations, open loop at 4 req/s',
      workload: `short-chat?duration=${seconds}`,
      policies: [{ name: 'random' }, { name: 'least-outstanding-requests' }, SPA, { name: 'sagemaker-prefix-aware', prefixLength: 1024 }],
      sendSeconds: seconds,
    },
  ];
}

function sensitivity(seconds: number): Scenario[] {
  const out: Scenario[] = [];
  for (const outputTokens of [256, 1024]) {
    for (const concurrency of [16, 64, 128]) {
      out.push({
        key: `sensitivity-o${outputTokens}-c${concurrency}`,
        title: `long-context, ${outputTokens} output tokens, closed loop of ${concurrency}`,
        workload: `long-context?outputTokens=${outputTokens}&duration=${seconds * 8}&concurrency=${concurrency}`,
        policies: [{ name: 'random' }, SPA],
        sendSeconds: seconds,
      });
    }
  }
  out.push({
    key: 'sensitivity-open-6',
    title: 'long-context, 256 output tokens, open loop at 6 req/s',
    workload: `long-context?outputTokens=256&duration=${seconds}&rate=6`,
    policies: [{ name: 'random' }, SPA],
    sendSeconds: seconds,
  });
  return out;
}

function run(scenario: Scenario): StrategyComparison {
  const started = Date.now();
  process.stderr.write(`${scenario.key}: ${scenario.workload}\n`);
  const comparison = compareStrategies({
    workload: parseWorkloadSpec(scenario.workload),
    policies: scenario.policies,
    instances: INSTANCES,
    profile: PROFILE,
    sendUntilMs: scenario.sendSeconds * 1000,
    title: scenario.title,
    baseline: 'random',
    onStrategyDone: (p, r) =>
      process.stderr.write(`  ${p.name}: ${r.records.length} requests, ${(r.simulatedMs / 1000).toFixed(0)} s simulated in ${(r.wallMs / 1000).toFixed(1)} s\n`),
  });
  process.stderr.write(`  done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return comparison;
}

const pct = (x: number | null, digits = 1) => (x === null ? '—' : `${x > 0 ? '+' : x < 0 ? '−' : '±'}${Math.abs(x).toFixed(digits)} %`);
const rate = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)} %`);
const ms = (x: number | null) => (x === null ? '—' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`);

function strategy(report: BenchmarkReport, label: string): StrategySummary {
  const s = report.strategies.find((x) => x.label === label);
  if (!s) throw new Error(`no strategy ${label} in report`);
  return s;
}

function comparison(report: BenchmarkReport, label: string) {
  const c = report.comparisons.find((x) => x.label === label);
  if (!c) throw new Error(`no comparison for ${label}`);
  return c;
}

function hit(s: StrategySummary): number | null {
  return s.cacheHitRate.engineReported;
}

function shareRange(s: StrategySummary): string {
  const shares = s.instances.map((i) => i.share * 100);
  return `${Math.min(...shares).toFixed(1)}–${Math.max(...shares).toFixed(1)} %`;
}

function resultsTable(report: BenchmarkReport): string {
  const rows = report.strategies.map((s) => {
    const c = report.comparisons.find((x) => x.label === s.label);
    return `| ${s.label} | ${s.requests.toLocaleString('en-US')} | ${ms(s.ttftMs.p50)} | ${ms(s.ttftMs.p90)} | ${ms(s.ttftMs.p99)} | ${rate(hit(s))} | ${rate(s.cacheHitRate.ofFleetCeiling)} | ${s.throughput.requestsPerSecond?.toFixed(2) ?? '—'} | ${s.throughput.outputTokensPerSecond?.toFixed(0) ?? '—'} | ${shareRange(s)} | ${c ? pct(c.ttftP50DeltaPct) : 'baseline'} | ${c ? pct(c.ttftP90DeltaPct) : ''} | ${c ? pct(c.outputTokensPerSecondDeltaPct) : ''} |`;
  });
  return [
    '| strategy | requests | TTFT P50 | TTFT P90 | TTFT P99 | hit rate | of fleet ceiling | req/s | output tok/s | per-instance share | Δ TTFT P50 | Δ TTFT P90 | Δ throughput |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const seconds = quick ? 600 : 3600;
  const outDir = join('reports', 'bench-sim');
  await mkdir(outDir, { recursive: true });

  const started = Date.now();
  const main = scenarios(seconds).map((s) => ({ scenario: s, result: run(s) }));
  const sens = sensitivity(seconds).map((s) => ({ scenario: s, result: run(s) }));
  const totalSeconds = (Date.now() - started) / 1000;
  for (const { scenario, result } of [...main, ...sens]) await writeReport(result.report, outDir, { baseName: scenario.key });

  const lc = main[0].result.report;
  const sc = main[1].result.report;
  const lcSpa = comparison(lc, 'sagemaker-prefix-aware');
  const lcRandom = strategy(lc, 'random');
  const lcSpaSummary = strategy(lc, 'sagemaker-prefix-aware');
  const scDefault = comparison(sc, 'sagemaker-prefix-aware');
  const scShortKey = sc.comparisons.find((c) => c.label.includes('1024'))!;
  const lcWall = main[0].result.results.map((r) => r.wallMs / 1000);
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const command = quick ? 'npm run bench:sim -- --quick' : 'npm run bench:sim';

  const sensRows = sens.map(({ scenario, result }) => {
    const c = comparison(result.report, 'sagemaker-prefix-aware');
    const r = strategy(result.report, 'random');
    const s = strategy(result.report, 'sagemaker-prefix-aware');
    return `| ${scenario.title.replace('long-context, ', '')} | ${pct(c.ttftP50DeltaPct)} | ${pct(c.ttftP90DeltaPct)} | ${rate(hit(r))} → ${rate(hit(s))} | ${pct(c.outputTokensPerSecondDeltaPct)} |`;
  });

  const doc = `# Benchmarks

All figures on this page were produced by \`${command}\` (router/bench/sim-aws-replica.ts) on ${new Date().toISOString().slice(0, 10)}
(${cpu}, ${cpus().length} cores, Node ${process.version}); the whole run took ${totalSeconds.toFixed(0)} s. Full reports (markdown, JSON,
and an HTML page with TTFT CDFs and per-instance load) are written to \`reports/bench-sim/\`. Rerun the command to
reproduce them: the simulation is deterministic for a seed.

What is simulated: the router's own policy objects (\`router/src/policy\`) in front of ${INSTANCES} engine models of one
vLLM instance each, calibrated as \`${PROFILE.name}\` (Llama 3.1 70B, TP8 on one ml.p5.48xlarge: ${(PROFILE.kvCapacityBlocks * PROFILE.blockTokens).toLocaleString('en-US')}
tokens of KV cache, ${PROFILE.maxNumBatchedTokens.toLocaleString('en-US')} batched tokens per step; see [emulator.md](emulator.md)), in
virtual time. Each strategy starts with cold caches. TTFT includes the profile's ${PROFILE.requestOverheadMs} ms per-request
overhead; it does not include network time between client and endpoint. \`sagemaker-prefix-aware\` uses our defaults
(prefixLength 8192 characters, concurrencyThreshold 32) unless the label says otherwise.

## 1. AWS's long-context experiment

AWS published PREFIX_AWARE against RANDOM for Llama 3.1 70B Instruct on 7 × ml.p5.48xlarge with vLLM prefix caching
and ~8,000-token prompts. Our replica: \`${main[0].scenario.workload}\`, sending for ${main[0].scenario.sendSeconds / 60} simulated
minutes. ${lc.workload.description}.

| metric | AWS (published) | this simulation |
| --- | --- | --- |
| TTFT P50 vs RANDOM | ${AWS.longContext.ttftP50} | ${pct(lcSpa.ttftP50DeltaPct)} (${ms(lcRandom.ttftMs.p50)} → ${ms(lcSpaSummary.ttftMs.p50)}) |
| TTFT P90 vs RANDOM | ${AWS.longContext.ttftP90} | ${pct(lcSpa.ttftP90DeltaPct)} (${ms(lcRandom.ttftMs.p90)} → ${ms(lcSpaSummary.ttftMs.p90)}) |
| cache hit rate | ${AWS.longContext.hit} | ${rate(hit(lcRandom))} → ${rate(hit(lcSpaSummary))} (fleet ceilings of each run's requests: ${rate(lcRandom.cacheHitRate.fleetCeiling)} and ${rate(lcSpaSummary.cacheHitRate.fleetCeiling)}) |
| throughput (output tok/s) | ${AWS.longContext.throughput} | ${pct(lcSpa.outputTokensPerSecondDeltaPct)} |
| per-instance request share | ${AWS.longContext.share} | ${shareRange(lcSpaSummary)} |

${resultsTable(lc)}

Simulating ${main[0].scenario.sendSeconds / 60} minutes of this traffic on seven instances took ${lcWall.map((w) => `${w.toFixed(1)} s`).join(', ')} of wall time per strategy.

Where ours differ, and why:
- **TTFT P90.** Ours moves by ${pct(lcSpa.ttftP90DeltaPct, 0)}, far more than AWS's ${AWS.longContext.ttftP90}. Our engine model is
  deterministic (no step-time jitter, no network or tokenizer variance, uniform group popularity), so once a group's
  prefix is cached every later request of that group is fast; a real fleet's tail also holds cold prefixes, skewed
  groups and spills. Read our P90 as an upper bound on the tail gain.
- **Throughput** depends on how much of the GPU time prefill takes, i.e. on output length and load. With 1,024 output
  tokens and 64 clients we land on AWS's +15–16 %; with 256 output tokens the saved prefill is a larger share of the
  work and the gain is much larger (section 3). AWS did not publish output length or client count.
- **Hit rate.** The 550-group default is sized so that RANDOM's hit rate lands near AWS's 25 % (see
  [workloads.md](workloads.md)); PREFIX_AWARE then reaches the fleet ceiling, because each group's prefix lives on
  exactly one instance and the fleet holds them all.
- **least-outstanding-requests** balances request counts, not prefill work, and is no better than RANDOM here
  (TTFT P50 ${pct(comparison(lc, 'least-outstanding-requests').ttftP50DeltaPct)}, P90 ${pct(comparison(lc, 'least-outstanding-requests').ttftP90DeltaPct)}). In a closed loop with a fixed output length, requests admitted
  together on an instance finish together, and LOR sends every replacement to the instance that just freed a slot,
  so replacements arrive in bursts and queue behind each other's prefill; RANDOM scatters them. Real output lengths
  vary, which weakens this synchronisation.
- **Load share.** Rendezvous hashing of 550 keys over 7 instances gives a share spread of ${shareRange(lcSpaSummary)}, a little
  wider than AWS's ${AWS.longContext.share}.

## 2. Short multi-turn chat

${sc.workload.description}: \`${main[1].scenario.workload}\`. AWS's short-chat figures: TTFT P50 ${AWS.shortChat.ttftP50},
P90 ${AWS.shortChat.ttftP90}.

${resultsTable(sc)}

- With the default prefixLength of 8192 characters, prefix-aware routing changes TTFT P50 by ${pct(scDefault.ttftP50DeltaPct)}: most
  conversations here are shorter than 8,192 characters, so the routing key is the whole conversation and changes at
  every turn; each turn lands on a new instance, exactly as with RANDOM.
- With prefixLength 1024 (about the length of the shared system prompts) the key is the system prompt, stable
  across turns: P50 ${pct(scShortKey.ttftP50DeltaPct)}, P90 ${pct(scShortKey.ttftP90DeltaPct)}, close to AWS's short-chat figures. Its price is
  imbalance: ${strategy(sc, scShortKey.label).balance.requestsMaxOverMean?.toFixed(2)}× max/mean requests per instance (shares ${shareRange(strategy(sc, scShortKey.label))}), since only 8 system
  prompts key 7 instances; the concurrencyThreshold spill is what keeps the busiest instance from saturating.
- **Set prefixLength to the length of the content your requests share, and no longer than the first request of a
  conversation**, or affinity breaks between turns. Simulate your own traffic before choosing:
  \`npx prefix-router simulate --workload 'short-chat?…' --policy 'sagemaker-prefix-aware?prefixLength=N' …\`.

## 3. Sensitivity: load and output length (long-context)

\`sagemaker-prefix-aware\` against \`random\`, ${seconds / 60} simulated minutes each.

| load | Δ TTFT P50 | Δ TTFT P90 | hit rate random → prefix-aware | Δ output tok/s |
| --- | ---: | ---: | --- | ---: |
${sensRows.join('\n')}

Open loop at a rate the fleet sustains, throughput is the offered load for every strategy (Δ ≈ 0): the gain shows
as latency. Closed loop, the saved prefill turns into more completed requests.

## Router overhead

See [router.md](router.md) (\`npm run bench:router\`): the decision and proxy overhead of the live router, against
AWS's reported 1.3–1.9 ms for its managed routing.
`;
  // Keep the section npm run bench:policies writes (between its markers).
  const previous = await readFile(join('docs', 'benchmarks.md'), 'utf8').catch(() => '');
  const kept = /<!-- bench:policies -->[\s\S]*<!-- \/bench:policies -->/.exec(previous)?.[0];
  await writeFile(join('docs', 'benchmarks.md'), kept === undefined ? doc : `${doc.trimEnd()}\n\n${kept}\n`);
  process.stdout.write(`wrote docs/benchmarks.md and reports/bench-sim/ in ${totalSeconds.toFixed(0)} s\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:sim failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
