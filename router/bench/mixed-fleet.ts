/**
 * The mixed-fleet part of `npm run bench:policies` (issue 31): a fleet SageMaker `InstancePools` can create when
 * p5 capacity is short, 5 × ml.p5.48xlarge + 2 × the slowest fallback type the construct offers for Llama 3.1 70B
 * (ml.p4d.24xlarge, router/profiles/p4d-llama-3.1-70b.json), on the shipped trace and on long-context:
 *
 * - cache-aware with each instance's profile speed, with speeds learned from observed TTFTs (what the live router
 *   does), and blind to speed (for contrast), against the usual sagemaker-prefix-aware sweep on the same fleet;
 * - each instance's share of the prefill work (engine-reported prompt − cached tokens) over its share of the fleet's
 *   prefill capacity (prefillTokensPerSecond of its profile);
 * - what PREFIX_AWARE does there: its best setting on the mixed fleet against 7 × p5 and 5 × p5 alone.
 *
 * Writes the section between the bench:policies:mixed markers of docs/benchmarks.md; `npm run bench:policies --
 * --mixed-only` runs only this part.
 */
import { join } from 'node:path';
import { builtinProfile, fleetText, prefillTokensPerSecond, type EngineProfile } from '../src/emulator/engine-profile';
import { expandPolicySweep, formatPolicySpec, type PolicyConfig } from '../src/policy';
import { prefillWorkByInstance, workShareOverCapacityShare, writeReport, type StrategySummary } from '../src/report';
import { compareStrategies, type StrategyComparison } from '../src/sim/compare-strategies';
import type { SimulationConfig } from '../src/sim/simulator';
import { parseWorkloadSpec } from '../src/workload';

export const MIXED_START = '<!-- bench:policies:mixed -->';
export const MIXED_END = '<!-- /bench:policies:mixed -->';

const P5 = builtinProfile('p5-llama-3.1-70b');
/** The slowest fallback type for Llama 3.1 70B: A100 compute (as p4de) with the least bandwidth and KV cache. */
const SLOWEST = builtinProfile('p4d-llama-3.1-70b');
export const MIXED_FLEET: readonly EngineProfile[] = [P5, P5, P5, P5, P5, SLOWEST, SLOWEST];
const CACHE_AWARE: PolicyConfig = { name: 'cache-aware' };
/** Printed under the results: the mechanism the shares come from, and its price (issue 31). */
const HOW_SHARE =
  "How the shares follow capacity: a prompt that matches a cached prefix goes where it is predicted to start first — its uncached part × the instance's slowdown (fastest speed ÷ its speed), so a hit on a p4d usually beats recomputing the prompt on a p5 and a group stays where its prefix lives until queues say otherwise. A cold prompt (no instance holds any of it) is placed by where it would *start* instead: eligible are the instances whose work queued ahead, in fastest-instance time (× the slowdown), plus the prompt's own prefill at the fastest speed is within the slack of the least, and among them the fewest requests in flight per unit of speed wins, weighted rendezvous hashing breaking ties (score −w / ln u, weight w = speed ÷ fastest: Schindelhauer and Schomaker, \"Weighted distributed hash tables\", SPAA 2005; with `coldPlacement=rendezvous`, for replicas that see only their own requests, that order alone), so each instance gets a share of new prefix groups in proportion to its speed while the fleet is idle, and a slower instance, whose requests last longer, somewhat less once it is busy. A cold prompt's placement decides where its group's later requests hit, so this is what spreads the fleet's work in proportion to capacity (and uses every instance's KV cache); charging the cold prompt's own prefill × the slowdown, as before, kept an idle p4d from ever receiving a new prefix while any p5 was near idle, so it never got hits either. The price: a cold prompt placed on an idle p4d prefills about 3× slower there than on an idle p5. No constant was tuned to the target.";

export interface MixedFleetOptions {
  readonly traceSpec: string;
  /** The same trace compressed N× (its spec), for how shares follow load. */
  readonly compressedTrace: (speedup: number) => string;
  readonly longContext: string;
  readonly sweep: string;
  readonly reportDir?: string;
  readonly label: string;
  readonly log?: (line: string) => void;
}

function ms(x: number | null): string {
  return x === null ? '—' : `${x.toFixed(0)} ms`;
}
function pct(x: number | null): string {
  return x === null ? '—' : `${(x * 100).toFixed(1)} %`;
}
function ok(met: boolean): string {
  return met ? '**met**' : '**not met**';
}
function range(values: readonly number[]): string {
  return `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;
}

/** Per instance: its share of the prefill work ÷ its share of the fleet's prefill capacity. */
export function prefillShareRatios(
  comparison: StrategyComparison,
  label: string,
  fleet: readonly EngineProfile[],
): number[] {
  const index = comparison.report.strategies.findIndex((s) => s.label === label);
  const result = comparison.results[index];
  return workShareOverCapacityShare(
    prefillWorkByInstance(result.records, result.instanceIds),
    fleet.map(prefillTokensPerSecond),
  );
}

function bestSageMaker(c: StrategyComparison): StrategySummary {
  const sm = c.report.strategies.filter((s) => s.strategy.name === 'sagemaker-prefix-aware');
  return sm.sort(
    (a, b) =>
      (a.ttftMs.p90 ?? Infinity) - (b.ttftMs.p90 ?? Infinity) ||
      (a.ttftMs.p50 ?? Infinity) - (b.ttftMs.p50 ?? Infinity),
  )[0];
}

function configOf(s: StrategySummary): PolicyConfig {
  return { name: s.strategy.name, ...(s.strategy.options ?? {}) } as PolicyConfig;
}

async function run(
  o: MixedFleetOptions,
  key: string,
  workload: string,
  policies: readonly PolicyConfig[],
  fleet: readonly EngineProfile[],
  prefillSpeeds: SimulationConfig['prefillSpeeds'] = 'profile',
): Promise<StrategyComparison> {
  const t0 = Date.now();
  const mixed = new Set(fleet.map((p) => p.name)).size > 1;
  const comparison = compareStrategies({
    workload: parseWorkloadSpec(workload),
    policies,
    instances: fleet.length,
    profile: fleet[0],
    ...(mixed ? { profiles: fleet } : {}),
    prefillSpeeds,
  });
  if (o.reportDir !== undefined) await writeReport(comparison.report, join(o.reportDir, key));
  o.log?.(`${key}: ${policies.length} strategies in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return comparison;
}

/** One workload's table, targets and PREFIX_AWARE lines. */
async function scenario(o: MixedFleetOptions, key: string, title: string, workload: string): Promise<string[]> {
  const sweep = expandPolicySweep(o.sweep);
  const fleet = MIXED_FLEET;
  const slow = fleet.map((p, i) => (p === SLOWEST ? i : -1)).filter((i) => i >= 0);
  const fast = fleet.map((p, i) => (p === P5 ? i : -1)).filter((i) => i >= 0);
  const withSpeeds = await run(o, `mixed-${key}`, workload, [CACHE_AWARE, ...sweep], fleet, 'profile');
  const learned = await run(o, `mixed-${key}-learned`, workload, [CACHE_AWARE], fleet, 'learned');
  const blind = await run(o, `mixed-${key}-blind`, workload, [CACHE_AWARE], fleet, 'none');
  const best = bestSageMaker(withSpeeds);
  const rows: { label: string; s: StrategySummary; shares: number[] }[] = [
    {
      label: 'cache-aware, profile speeds',
      s: withSpeeds.report.strategies[0],
      shares: prefillShareRatios(withSpeeds, withSpeeds.report.strategies[0].label, fleet),
    },
    {
      label: 'cache-aware, speeds learned from TTFTs',
      s: learned.report.strategies[0],
      shares: prefillShareRatios(learned, learned.report.strategies[0].label, fleet),
    },
    {
      label: 'cache-aware, blind to speed',
      s: blind.report.strategies[0],
      shares: prefillShareRatios(blind, blind.report.strategies[0].label, fleet),
    },
    {
      label: `best sagemaker-prefix-aware: \`${formatPolicySpec(configOf(best))}\``,
      s: best,
      shares: prefillShareRatios(withSpeeds, best.label, fleet),
    },
  ];
  const lines: string[] = [
    `### ${title} (\`${workload.replace(/^trace:[^?]+/, 'trace:TRACE')}\`) on ${fleetText(fleet)}`,
    '',
  ];
  lines.push(
    '| strategy | TTFT P50 | TTFT P90 | hit rate | prefill share ÷ capacity share, p5 (min–max) | same, p4d (min–max) | request share of each p4d |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const r of rows) {
    const p4dRequests = r.s.instances.filter((_, i) => slow.includes(i)).map((i) => pct(i.share));
    lines.push(
      `| ${r.label} | ${ms(r.s.ttftMs.p50)} | ${ms(r.s.ttftMs.p90)} | ${pct(r.s.cacheHitRate.engineReported)} | ${range(fast.map((i) => r.shares[i]))} | ${range(slow.map((i) => r.shares[i]))} | ${p4dRequests.join(', ')} |`,
    );
  }
  lines.push('');
  for (const r of rows.slice(0, 2)) {
    const p90 = r.s.ttftMs.p90 !== null && best.ttftMs.p90 !== null ? r.s.ttftMs.p90 / best.ttftMs.p90 : null;
    const within = r.shares.every((x) => x >= 0.75 && x <= 1.25);
    lines.push(
      `- ${r.label}: P90 ${p90?.toFixed(2)}× the best SageMaker setting (target ≤ 0.7×: ${ok(p90 !== null && p90 <= 0.7)}); every instance's prefill share within ±25 % of its capacity share (target: ${ok(within)}; ${range(r.shares)}).`,
    );
  }
  // What PREFIX_AWARE does on the mixed fleet, against a fleet of one type: its best setting on each.
  const seven = bestSageMaker(await run(o, `p5x7-${key}`, workload, sweep, [P5, P5, P5, P5, P5, P5, P5]));
  const five = bestSageMaker(await run(o, `p5x5-${key}`, workload, sweep, [P5, P5, P5, P5, P5]));
  const ratio = (a: number | null, b: number | null) =>
    a === null || b === null || b === 0 ? '—' : `${(a / b).toFixed(2)}×`;
  lines.push(
    `- PREFIX_AWARE (the sweep's best setting on each fleet): P90 ${ms(best.ttftMs.p90)} on ${fleetText(fleet)}, ${ms(seven.ttftMs.p90)} on 7 × p5 (\`${formatPolicySpec(configOf(seven))}\`; the mixed fleet is ${ratio(best.ttftMs.p90, seven.ttftMs.p90)}), ${ms(five.ttftMs.p90)} on the 5 × p5 alone (\`${formatPolicySpec(configOf(five))}\`; adding the two p4d makes it ${ratio(best.ttftMs.p90, five.ttftMs.p90)}). Each p4d's prefill share is ${range(slow.map((i) => rows[3].shares[i]))}× its capacity share: the hash spreads prefixes evenly whatever an instance's speed.`,
    '',
  );
  return lines;
}

/** cache-aware's prefill shares on the trace compressed 2× and 4×: how the p4d's share follows the load. */
async function loadSweep(o: MixedFleetOptions): Promise<string[]> {
  const fleet = MIXED_FLEET;
  const slow = fleet.map((p, i) => (p === SLOWEST ? i : -1)).filter((i) => i >= 0);
  const fast = fleet.map((p, i) => (p === P5 ? i : -1)).filter((i) => i >= 0);
  const lines = ['### How the shares follow the load (the trace compressed)', ''];
  for (const speedup of [2, 4]) {
    for (const speeds of ['profile', 'learned'] as const) {
      const c = await run(
        o,
        `mixed-trace-${speedup}x-${speeds}`,
        o.compressedTrace(speedup),
        [CACHE_AWARE],
        fleet,
        speeds,
      );
      const s = c.report.strategies[0];
      const shares = prefillShareRatios(c, s.label, fleet);
      lines.push(
        `- ${speedup}× compression, cache-aware with ${speeds === 'profile' ? 'profile speeds' : 'speeds learned from TTFTs'}: P90 ${ms(s.ttftMs.p90)}; prefill share ÷ capacity share p5 ${range(fast.map((i) => shares[i]))}, p4d ${range(slow.map((i) => shares[i]))} (within ±25 %: ${ok(shares.every((x) => x >= 0.75 && x <= 1.25))}).`,
      );
    }
  }
  lines.push('');
  return lines;
}

/** Both scenarios; the section between the mixed markers. */
export async function runMixedFleet(o: MixedFleetOptions): Promise<string> {
  const started = Date.now();
  const capacity = MIXED_FLEET.map(prefillTokensPerSecond);
  const lines = [
    ...(await scenario(o, 'trace-1x', 'Mooncake trace at its own timestamps', o.traceSpec)),
    ...(await scenario(o, 'long-context', 'long-context', o.longContext)),
    ...(await loadSweep(o)),
  ];
  lines.push(HOW_SHARE, '');
  return [
    MIXED_START,
    '## 7. Mixed fleets: cache-aware and PREFIX_AWARE on 5 × p5 + 2 × p4d (`npm run bench:policies`)',
    '',
    `Produced by \`${o.label}\` on ${new Date().toISOString().slice(0, 10)} in ${((Date.now() - started) / 1000).toFixed(0)} s on the 2-core development machine (cold caches per strategy, seed 1; \`simulate --instances 5:p5-llama-3.1-70b,2:p4d-llama-3.1-70b\`). ml.p4d.24xlarge is the slowest of the fallback types the construct offers for Llama 3.1 70B (profiles derived from published figures: [emulator.md](emulator.md#profiles-for-instancepools-fallback-types)); its prefill capacity (full 8,192-token steps of uncached prompt) is ${capacity[5].toFixed(0)} tokens/s against the p5's ${capacity[0].toFixed(0)}, so each p4d is ${((capacity[5] / capacity.reduce((a, b) => a + b, 0)) * 100).toFixed(1)} % of the fleet's prefill capacity and each p5 ${((capacity[0] / capacity.reduce((a, b) => a + b, 0)) * 100).toFixed(1)} %. Prefill share: each instance's engine-reported prompt − cached tokens over the fleet's. The sweep is \`${o.sweep}\`; cache-aware runs with its defaults.`,
    '',
    ...lines,
    MIXED_END,
  ].join('\n');
}
