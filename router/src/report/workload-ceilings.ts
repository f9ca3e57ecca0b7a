import { computeCeilings, type Ceilings } from './ceilings';
import { plainRender } from './long-context-sizing';
import type { Workload } from '../workload/workload';
import type { WorkloadRequest } from '../workload/workload-request';
import { parseWorkloadSpec } from '../workload/workload-spec';

/**
 * The cache-hit ceilings of a workload for a fleet of `instances` engines with `kvBlocksPerInstance` blocks
 * each (default: 7 × p5-llama-3.1-70b's 84,000). `render` defaults to the message contents joined (no chat
 * template); pass the engine model's renderer to match a simulation exactly. Run from a shell:
 *
 *   npx ts-node --transpile-only router/src/report/workload-ceilings.ts SPEC [INSTANCES] [KV_BLOCKS]
 */
export function workloadCeilings(
  workload: Workload,
  fleet: { readonly instances?: number; readonly kvBlocksPerInstance?: number } = {},
  render: (request: WorkloadRequest) => string = plainRender,
): Ceilings {
  const instances = fleet.instances ?? 7;
  const kvBlocks = fleet.kvBlocksPerInstance ?? 84_000;
  return computeCeilings(workload.requests(), render, { fleetCapacityBlocks: instances * kvBlocks });
}

if (require.main === module) {
  const [spec, instances, kvBlocks] = process.argv.slice(2);
  if (spec === undefined) {
    console.error('usage: workload-ceilings.ts SPEC [INSTANCES=7] [KV_BLOCKS_PER_INSTANCE=84000]');
    process.exit(2);
  }
  const fleet = {
    instances: instances === undefined ? 7 : Number(instances),
    kvBlocksPerInstance: kvBlocks === undefined ? 84_000 : Number(kvBlocks),
  };
  const started = Date.now();
  const c = workloadCeilings(parseWorkloadSpec(spec), fleet);
  const pct = (x: number | null): string => (x === null ? '—' : `${(x * 100).toFixed(1)} %`);
  console.log(
    `${spec}: ${c.requests} requests, ${c.promptTokens} prompt tokens; ideal ${pct(c.idealHitRate)}, ` +
      `fleet (${fleet.instances} × ${fleet.kvBlocksPerInstance} blocks) ${pct(c.fleetHitRate)}; ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}
