import { blockHashes, cacheableHitTokens, DEFAULT_BLOCK_TOKENS, tokenCount } from '../state/block-hash';
import { BlockLru } from './block-lru';

/**
 * A cache-only model of a fleet: each instance is one LRU cache of blocks, requests are placed by a caller's
 * rule and processed in arrival order, with no queueing, batching or pinning. It answers "what hit rate does
 * this placement allow?" in seconds, which is how the workload defaults were sized (docs/workloads.md); the
 * simulator, with the engine model, is what measures latency.
 */
export interface PlacementModelOptions<T> {
  readonly instances: number;
  readonly capacityBlocksPerInstance: number;
  readonly blockTokens?: number;
  /** Instance index in [0, instances) for the request at `index` (arrival order). */
  readonly place: (request: T, index: number) => number;
}

export interface PlacementHitRate {
  readonly requests: number;
  readonly promptTokens: number;
  readonly hitTokens: number;
  readonly hitRate: number | null;
  /** Requests placed on each instance. */
  readonly requestsPerInstance: readonly number[];
}

export function placementHitRate<T>(
  requests: Iterable<T>,
  render: (request: T) => string,
  options: PlacementModelOptions<T>,
): PlacementHitRate {
  const blockTokens = options.blockTokens ?? DEFAULT_BLOCK_TOKENS;
  const caches = Array.from({ length: options.instances }, () => new BlockLru(options.capacityBlocksPerInstance));
  const perInstance = new Array<number>(options.instances).fill(0);
  let index = 0;
  let promptTokens = 0;
  let hitTokens = 0;
  for (const request of requests) {
    const instance = options.place(request, index);
    const cache = caches[instance];
    if (cache === undefined)
      throw new RangeError(`place() returned instance ${instance}, outside 0..${options.instances - 1}`);
    const text = render(request);
    const hashes = blockHashes(text, { blockTokens });
    const tokens = tokenCount(text);
    let matched = 0;
    while (matched < hashes.length && cache.has(hashes[matched])) matched++;
    for (const h of hashes) cache.touch(h);
    promptTokens += tokens;
    hitTokens += cacheableHitTokens(matched, tokens, blockTokens);
    perInstance[instance]++;
    index++;
  }
  return {
    requests: index,
    promptTokens,
    hitTokens,
    hitRate: promptTokens > 0 ? hitTokens / promptTokens : null,
    requestsPerInstance: perInstance,
  };
}
