import type { RequestRecord } from './request-record';

/**
 * Prefill work per instance, from what the engines reported: each answered request's prompt tokens less its cached
 * tokens, summed by the instance that computed them (requests without usage add nothing). `instanceIds` gives
 * the order of the result.
 */
export function prefillWorkByInstance(records: readonly RequestRecord[], instanceIds: readonly string[]): number[] {
  const index = new Map(instanceIds.map((id, i) => [id, i]));
  const work = instanceIds.map(() => 0);
  for (const r of records) {
    const i = r.instance === null ? undefined : index.get(r.instance);
    if (i === undefined || r.promptTokens === undefined) continue;
    work[i] += Math.max(0, r.promptTokens - (r.cachedPromptTokens ?? 0));
  }
  return work;
}

/**
 * Each instance's share of `work` over its share of `capacity` (both per instance, same order): 1 means the instance
 * did work in proportion to what it can do; a mixed fleet's balance reads from it. NaN when there is no work or no
 * capacity at all.
 */
export function workShareOverCapacityShare(work: readonly number[], capacity: readonly number[]): number[] {
  if (work.length !== capacity.length)
    throw new RangeError(`work and capacity must list the same instances (got ${work.length} and ${capacity.length})`);
  const totalWork = work.reduce((a, b) => a + b, 0);
  const totalCapacity = capacity.reduce((a, b) => a + b, 0);
  return work.map((w, i) => w / totalWork / (capacity[i] / totalCapacity));
}
