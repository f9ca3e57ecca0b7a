import { EngineKvIndex } from '../kv-events/engine-kv-index';
import type { KvEventBatch, KvEventSink } from '../kv-events/kv-event';
import type { PromptBlocks } from '../kv-events/prompt-blocks';
import type { WorthGoingOn } from '../kv-events/request-tokenizer';
import type { EngineCacheView } from '../policy/routing-policy';
import type { RoutingRequest } from '../protocol/routing-request';

/**
 * Blocks the index keeps per engine: a p5.48xlarge's Llama 3.1 70B holds ~84,000 16-token blocks; four times that
 * leaves room for larger GPUs and smaller blocks, and still bounds a publisher that never removes (~100 MB an engine).
 */
export const MAX_INDEXED_BLOCKS_PER_ENGINE = 1 << 19;

/**
 * A request's prompt as the engines' token ids, cut into blocks: only as far as `worthGoingOn` says some engine
 * holds it (undefined when the caller cannot reproduce the engine's tokens). Live: the request tokenizer over the
 * request's EnginePrompt; in simulation: the engine model's own blocks.
 */
export type PromptBlocksOf = (request: RoutingRequest, worthGoingOn: WorthGoingOn) => PromptBlocks | undefined;

/**
 * The engines' own account of their prefix caches, for the routing policy, wherever the events come from (serve's
 * ZeroMQ subscribers, server/engine-truth.ts; the simulator's engine models, sim/simulated-kv-events.ts): their
 * KV events applied to one engine index, and per engine a view (InstanceView.engineCache) that answers for a
 * request from its prompt blocks. A request's blocks are computed once (memoized for its decide and commit) and
 * only as far as some engine holds them: past the first block no engine holds, nothing can be a hit.
 */
export class EngineTruth implements KvEventSink {
  readonly index: EngineKvIndex;
  private readonly versions = new Map<string, number>();
  private readonly views = new Map<string, EngineCacheView>();
  private lastRequest: RoutingRequest | undefined;
  private lastBlocks: PromptBlocks | undefined;

  constructor(
    engines: readonly string[],
    private readonly promptBlocksOf: PromptBlocksOf,
    maxBlocksPerEngine = MAX_INDEXED_BLOCKS_PER_ENGINE,
  ) {
    this.index = new EngineKvIndex({ engines, maxBlocksPerEngine });
    for (const engine of engines) {
      this.versions.set(engine, 0);
      const versions = this.versions;
      this.views.set(engine, {
        cachedTokensOf: (request) => this.cachedTokensOf(engine, request),
        get version() {
          return versions.get(engine)!;
        },
      });
    }
  }

  /** The view for a backend whose engine's events are followed, else undefined (its prediction stays the router's). */
  viewOf(engine: string): EngineCacheView | undefined {
    return this.views.get(engine);
  }

  applyBatch(engine: string, batch: KvEventBatch): void {
    this.index.applyBatch(engine, batch);
    this.bump(engine);
  }

  markStale(engine: string, reason: string): void {
    this.index.markStale(engine, reason);
    this.bump(engine);
  }

  private bump(engine: string): void {
    const version = this.versions.get(engine);
    if (version !== undefined) this.versions.set(engine, version + 1);
  }

  private cachedTokensOf(engine: string, request: RoutingRequest): number | undefined {
    const blocks = this.blocksOf(request);
    if (blocks === undefined) return undefined;
    const account = this.index.accountOf(engine, blocks, request.model);
    return account.known ? account.cachedTokens : undefined;
  }

  /** The request's prompt blocks, computed once per request and only as far as some engine holds them. */
  private blocksOf(request: RoutingRequest): PromptBlocks | undefined {
    if (request !== this.lastRequest) {
      this.lastRequest = request;
      this.lastBlocks = this.promptBlocksOf(request, (soFar) => this.index.someEngineHoldsAll(soFar, request.model));
    }
    return this.lastBlocks;
  }
}
