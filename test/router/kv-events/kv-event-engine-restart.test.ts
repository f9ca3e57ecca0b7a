import { Registry } from 'prom-client';
import { KvEventSubscriber } from '../../../router/src/kv-events/kv-event-subscriber';
import { capturingLogger, RecordingSink, stored, TestEngine, waitFor } from './kv-event-stream';

/**
 * An engine that stops and comes back on the same endpoint (the container restarts it): its cache went with it, and
 * its new stream starts at 0 again, perhaps before this subscriber has reconnected.
 */
describe('when the engine behind a KV event stream stops and restarts', () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const socket of open.splice(0).reverse()) await socket.close();
  });

  async function started(): Promise<{ first: TestEngine; sink: RecordingSink; stale: string[] }> {
    const first = new TestEngine();
    await first.bind();
    const sink = new RecordingSink();
    const subscriber = await KvEventSubscriber.connect({
      engine: 'engine-a',
      endpoint: first.endpoint,
      sink,
      registry: new Registry(),
      logger: capturingLogger([]),
      logIntervalMs: 1,
    });
    open.push(subscriber);
    await first.joined();
    for (let seq = 0; seq < 3; seq++) await first.sendBatch(seq, [stored(String(100 + seq), [seq + 1, seq + 2])]);
    await waitFor('three batches', () => sink.batches.length === 3);
    first.close();
    return { first, sink, stale: sink.stale };
  }

  it('GIVEN its socket disconnects THEN its account is emptied (one AllBlocksCleared) before anything is routed to its restart', async () => {
    const { sink } = await started();
    await waitFor('the clear', () => sink.batches.length === 4);
    expect(sink.batches[3].events).toEqual([{ type: 'AllBlocksCleared' }]);
    expect(sink.stale).toEqual([]);
  });

  it('GIVEN the restarted engine published batch 0 before the subscriber reconnected THEN batch 1 starts a new account, stale, instead of being skipped as old', async () => {
    const { first, sink } = await started();
    await waitFor('the clear', () => sink.batches.length === 4);
    const second = new TestEngine();
    await second.socket.bind(first.endpoint);
    second.endpoint = first.endpoint;
    open.push(second);
    await second.joined();
    await second.sendBatch(1, [stored('201', [7, 8])]);
    await waitFor('the new stream', () => sink.batches.length === 5);
    expect(sink.batches[4].seq).toBe(1n);
    expect(sink.batches[4].events).toEqual([{ type: 'AllBlocksCleared' }, stored('201', [7, 8])]);
    expect(sink.stale).toEqual([
      'the engine restarted: its batches 0..0 were published before this router reconnected',
    ]);
  });
});
