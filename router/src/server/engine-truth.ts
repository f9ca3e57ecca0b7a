import { EmulatorRequestTokenizer } from '../emulator/emulator-request-tokenizer';
import { Counter, type Registry } from 'prom-client';
import type { EngineIndexCounters } from '../kv-events/engine-kv-index';
import type { KvEventSource, KvEventStream } from '../kv-events/kv-event-source';
import { ModelRequestTokenizer, type RequestTokenizer } from '../kv-events/request-tokenizer';
import { loadModelTokenizer } from '../state/tokenizer-file';
import { EngineTruth } from '../core/engine-truth';

/**
 * The engines' truth serve follows (core/engine-truth.ts): each backend's events from `source` (the ZeroMQ
 * subscribers), and each request tokenized as its engine does by `tokenizer`.
 */
export class LiveEngineTruth extends EngineTruth {
  constructor(
    private readonly streams: readonly KvEventStream[],
    tokenizer: RequestTokenizer,
    private readonly source: KvEventSource,
  ) {
    super(
      streams.map((s) => s.engine),
      (request, worthGoingOn) =>
        request.enginePrompt === undefined ? undefined : tokenizer.promptBlocksOf(request.enginePrompt, worthGoingOn),
    );
  }

  start(): void {
    this.source.start(this.streams, this);
  }

  close(): Promise<void> {
    return this.source.close();
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
): LiveEngineTruth | undefined {
  if (streams.length === 0 || tokenizer === undefined) return undefined;
  return new LiveEngineTruth(streams, requestTokenizerOf(tokenizer), source());
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
