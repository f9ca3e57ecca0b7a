import { SeededRng } from '../common/seeded-rng';
import { computeCeilings } from './ceilings';
import { placementHitRate } from './placement-cache-model';
import { longContextWorkload, type LongContextOptions } from '../workload/long-context';
import type { WorkloadRequest } from '../workload/workload-request';

/**
 * Why long-context's defaults are what they are: for a range of group counts, the hit rate a cache-only fleet
 * model gives with random placement and with group-affine placement (every request of a group on one
 * instance, as a prefix-keyed router does), next to the ideal and fleet ceilings. Run:
 *
 *   npx ts-node --transpile-only router/src/report/long-context-sizing.ts [groups …]
 *
 * Prints one markdown row per group count. Uses the p5-llama-3.1-70b KV size (84,000 blocks of 16 tokens)
 * and 7 instances, like AWS's experiment.
 */
export interface SizingRow {
  readonly groups: number;
  readonly requests: number;
  readonly randomHitRate: number | null;
  readonly affineHitRate: number | null;
  readonly idealHitRate: number | null;
  readonly fleetHitRate: number | null;
}

/** Message contents joined: close to the rendered prompt (a chat template adds a few fixed tokens per message). */
export function plainRender(request: WorkloadRequest): string {
  return request.kind === 'completion' ? request.prompt : request.messages.map((m) => m.content).join('');
}

export function sizeLongContext(
  groups: number,
  options: Partial<LongContextOptions> = {},
  fleet = { instances: 7, capacityBlocksPerInstance: 84_000 },
): SizingRow {
  const workload = longContextWorkload({ ...options, groups });
  const randomRng = new SeededRng(12345);
  const random = placementHitRate(workload.requests(), plainRender, {
    ...fleet,
    place: () => randomRng.nextInt(fleet.instances),
  });
  // Groups are drawn i.i.d., so "group mod instances" is as even as any consistent hash of the prefix.
  const affine = placementHitRate(workload.requests(), plainRender, {
    ...fleet,
    place: (r) => (r.group ?? 0) % fleet.instances,
  });
  const ceilings = computeCeilings(workload.requests(), plainRender, {
    fleetCapacityBlocks: fleet.instances * fleet.capacityBlocksPerInstance,
  });
  return {
    groups,
    requests: random.requests,
    randomHitRate: random.hitRate,
    affineHitRate: affine.hitRate,
    idealHitRate: ceilings.idealHitRate,
    fleetHitRate: ceilings.fleetHitRate,
  };
}

if (require.main === module) {
  const groupCounts = process.argv.slice(2).map(Number);
  const pct = (x: number | null): string => (x === null ? '—' : `${(x * 100).toFixed(1)} %`);
  console.log('| groups | requests | random | group-affine | fleet ceiling | ideal |');
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const groups of groupCounts.length > 0 ? groupCounts : [200, 400, 500, 550, 600, 650, 700, 900, 1400]) {
    const row = sizeLongContext(groups);
    console.log(
      `| ${groups} | ${row.requests} | ${pct(row.randomHitRate)} | ${pct(row.affineHitRate)} | ${pct(row.fleetHitRate)} | ${pct(row.idealHitRate)} |`,
    );
  }
}
