import { EmulatorRequestTokenizer } from '../emulator/emulator-request-tokenizer';
import { Counter, type Registry } from 'prom-client';
import { EngineKvIndex, type EngineIndexCounters } from '../kv-events/engine-kv-index';
import type { KvEventBatch, KvEventSink } from '../kv-events/kv-event';
import type { KvEventSource, KvEventStream } from '../kv-events/kv-event-source';
import type { PromptBlocks } from '../kv-events/prompt-blocks';
import { ModelRequestTokenizer, type RequestTokenizer } from '../kv-events/request-tokenizer';
import { loadModelTokenizer } from '../state/tokenizer-file';
import type { EngineCacheView } from '../policy/routing-policy';
import type { RoutingRequest } from '../protocol/routing-request';

/**
 * Blocks the index keeps per engine: a p5.48xlarge's Llama 3.1 70B holds ~84,000 16-token blocks; four times that
 * leaves room for larger GPUs and smaller blocks, and still bounds a publisher that never removes (~100 MB an engine).
 */
export const MAX_INDEXED_BLOCKS_PER_ENGINE = 1 << 19;

/**
 * The engines' own account of their prefix caches, for the routing policy: their KV events applied to one engine
 * index, and per backend a view (InstanceView.engineCache) that answers for a request from its prompt tokenized as
 * the engine does. A request is tokenized once (memoized for its decide and commit) and only as far as some engine
 * holds it: past the first block no engine holds, nothing can be a hit.
 */
export class EngineTruth implements KvEventSink {
  readonly index: EngineKvIndex;
  private readonly versions = new Map<string, number>();
  private readonly views = new Map<string, EngineCacheView>();
  private lastRequest: RoutingRequest | undefined;
  private lastBlocks: PromptBlocks | undefined;

  constructor(
    private readonly streams: readonly KvEventStream[],
    private readonly tokenizer: RequestTokenizer,
    private readonly source: KvEventSource,
  ) {
    this.index = new EngineKvIndex({
      engines: streams.map((s) => s.engine),
      maxBlocksPerEngine: MAX_INDEXED_BLOCKS_PER_ENGINE,
    });
    for (const { engine } of streams) {
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

  start(): void {
    this.source.start(this.streams, this);
  }

  close(): Promise<void> {
    return this.source.close();
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

  /** The request's prompt blocks, tokenized once per request and only as far as some engine holds them. */
  private blocksOf(request: RoutingRequest): PromptBlocks | undefined {
    if (request !== this.lastRequest) {
      this.lastRequest = request;
      const prompt = request.enginePrompt;
      this.lastBlocks =
        prompt === undefined
          ? undefined
          : this.tokenizer.promptBlocksOf(prompt, (soFar) => this.index.someEngineHoldsAll(soFar, request.model));
    }
    return this.lastBlocks;
  }
}

/** The request tokenizer `--tokenizer` names: `emulator`, or a model's tokenizer.json (errors name the flag and file). */
export function requestTokenizerOf(spec: string): RequestTokenizer {
  return spec === 'emulator' ? new EmulatorRequestTokenizer() : new ModelRequestTokenizer(loadModelTokenizer(spec));
}

/** The engines' truth a router follows (`kvEvents`), or undefined without any; `source` delivers the events. */
export function engineTruthOf(
  streams: readonly KvEventStream[],
  tokenizer: string | undefined,
  source: () => KvEventSource,
): EngineTruth | undefined {
  if (streams.length === 0 || tokenizer === undefined) return undefined;
  return new EngineTruth(streams, requestTokenizerOf(tokenizer), source());
}

/** The engine index's counts, as `prefix_router_kv_index_events_total`'s `kind` label values. */
const INDEX_EVENT_KINDS: Readonly<Record<keyof EngineIndexCounters, string>> = {
  overflowDrops: 'overflow_drop',
  orphanStores: 'orphan_store',
  otherMediumEvents: 'other_medium',
  malformedEvents: 'malformed',
  unknownEngineBatches: 'unknown_engine',
};

/**
 * Exports the engine index's own counts (EngineKvIndex.counters) as one Prometheus counter, brought up to date at
 * each scrape: the index counts on the hot path without touching prom-client.
 */
export function registerEngineIndexMetric(registry: Registry, counters: Readonly<EngineIndexCounters>): void {
  const kinds = Object.keys(INDEX_EVENT_KINDS) as (keyof EngineIndexCounters)[];
  const exported = new Map(kinds.map((k) => [k, 0]));
  const metric = new Counter({
    name: 'prefix_router_kv_index_events_total',
    help: 'KV events the engine index counted apart, by kind: overflow_drop (a block dropped past the per-engine bound), orphan_store (BlockStored whose parent is unknown), other_medium (not GPU), malformed, unknown_engine',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      for (const k of kinds) {
        const delta = counters[k] - exported.get(k)!;
        if (delta > 0) this.inc({ kind: INDEX_EVENT_KINDS[k] }, delta);
        exported.set(k, counters[k]);
      }
    },
  });
  for (const k of kinds) metric.inc({ kind: INDEX_EVENT_KINDS[k] }, 0);
}
