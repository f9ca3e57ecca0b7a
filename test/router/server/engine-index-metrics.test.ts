import { request } from 'undici';
import { Registry } from 'prom-client';
import type { KvCacheEvent, KvEventSink } from '../../../router/src/kv-events/kv-event';
import type { KvEventSource, KvEventStream } from '../../../router/src/kv-events/kv-event-source';
import type { EngineIndexCounters } from '../../../router/src/kv-events/engine-kv-index';
import { startRouter, type RunningRouter } from '../../../router/src/server';
import { registerEngineIndexMetric } from '../../../router/src/server/engine-truth';

/** prefix_router_kv_index_events_total: what the engine index counts apart, as serve's /metrics shows it. */
class ScriptedSource implements KvEventSource {
  sink: KvEventSink | undefined;
  private seq = 0n;
  start(_streams: readonly KvEventStream[], sink: KvEventSink): void {
    this.sink = sink;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  send(engine: string, events: KvCacheEvent[]): void {
    this.sink!.applyBatch(engine, { topic: '', seq: this.seq++, timestampSeconds: 0, events });
  }
}

function countsIn(text: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^prefix_router_kv_index_events_total\{kind="([a-z_]+)"\} (\d+)$/gm))
    counts[m[1]] = Number(m[2]);
  return counts;
}

describe('when the router follows KV events and some are counted apart by the engine index', () => {
  const BACKEND = 'http://127.0.0.1:9';
  const source = new ScriptedSource();
  let router: RunningRouter;

  beforeAll(async () => {
    router = await startRouter(
      {
        backends: [BACKEND],
        policy: { name: 'cache-aware' },
        port: 0,
        logLevel: 'silent',
        healthCheck: { intervalMs: 0 },
        kvEvents: [`${BACKEND}=tcp://127.0.0.1:5557`],
        tokenizer: 'emulator',
      },
      { kvEventSource: source },
    );
  });

  afterAll(async () => {
    await router.close();
  });

  const metrics = async () => countsIn(await (await request(`${router.url}/metrics`)).body.text());

  it('GIVEN no events yet THEN every kind is exported at 0', async () => {
    expect(await metrics()).toEqual({
      overflow_drop: 0,
      orphan_store: 0,
      other_medium: 0,
      malformed: 0,
      unknown_engine: 0,
    });
  });

  it('GIVEN an orphan BlockStored, a CPU block, a malformed one and a batch for another engine THEN each is counted once', async () => {
    const ids = Array.from({ length: 16 }, (_, i) => i + 1);
    source.send(BACKEND, [
      { type: 'BlockStored', blockHashes: ['b1'], parentBlockHash: 'never-stored', tokenIds: ids, blockSize: 16 },
      { type: 'BlockStored', blockHashes: ['b2'], tokenIds: ids, blockSize: 16, medium: 'CPU' },
      { type: 'BlockStored', blockHashes: ['b3'], tokenIds: ids.slice(1), blockSize: 16 },
    ]);
    source.send('http://127.0.0.1:10', [{ type: 'AllBlocksCleared' }]);
    expect(await metrics()).toEqual({
      overflow_drop: 0,
      orphan_store: 1,
      other_medium: 1,
      malformed: 1,
      unknown_engine: 1,
    });
    // A scrape exports what happened since the last one, not the total again.
    source.send(BACKEND, [
      { type: 'BlockStored', blockHashes: ['b4'], parentBlockHash: 'also-unknown', tokenIds: ids, blockSize: 16 },
    ]);
    expect((await metrics()).orphan_store).toBe(2);
  });
});

describe("when the engine index's counters are exported", () => {
  it('GIVEN drops past the per-engine bound THEN overflow_drop follows the count, scrape after scrape', async () => {
    const counters: EngineIndexCounters = {
      overflowDrops: 0,
      orphanStores: 0,
      otherMediumEvents: 0,
      malformedEvents: 0,
      unknownEngineBatches: 0,
    };
    const registry = new Registry();
    registerEngineIndexMetric(registry, counters);
    counters.overflowDrops = 3;
    expect(countsIn(await registry.metrics()).overflow_drop).toBe(3);
    counters.overflowDrops = 5;
    expect(countsIn(await registry.metrics()).overflow_drop).toBe(5);
    expect(countsIn(await registry.metrics()).overflow_drop).toBe(5);
  });
});
