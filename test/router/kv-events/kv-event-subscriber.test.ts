import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Registry } from 'prom-client';
import { Router } from 'zeromq';
import { KvEventPublisher, REPLAY_END_SEQ, sequenceBytes } from '../../../router/src/kv-events/kv-event-publisher';
import { encodeKvEventPayload } from '../../../router/src/kv-events/kv-event-codec';
import { KvEventSubscriber, type KvEventSubscriberOptions } from '../../../router/src/kv-events/kv-event-subscriber';
import { capturingLogger, RecordingSink, stored, TestEngine, waitFor } from './kv-event-stream';
import { compiledDist } from '../../compiled-dist';

const ROOT = join(__dirname, '..', '..', '..');

describe('KV event subscriber', () => {
  let engine: TestEngine;
  let sink: RecordingSink;
  let registry: Registry;
  let logLines: string[];
  const open: { close(): unknown }[] = [];

  beforeEach(async () => {
    engine = new TestEngine();
    await engine.bind();
    open.push(engine);
    sink = new RecordingSink();
    registry = new Registry();
    logLines = [];
  });
  afterEach(async () => {
    for (const socket of open.splice(0).reverse()) await socket.close();
  });

  async function subscribe(options: Partial<KvEventSubscriberOptions> = {}): Promise<KvEventSubscriber> {
    const subscriber = await KvEventSubscriber.connect({
      engine: 'engine-a',
      endpoint: engine.endpoint,
      sink,
      registry,
      logger: capturingLogger(logLines),
      logIntervalMs: 1,
      ...options,
    });
    open.push(subscriber);
    await engine.joined();
    return subscriber;
  }

  async function counter(name: string, labels: Record<string, string>): Promise<number> {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
    const value = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
    return value?.value ?? 0;
  }

  /** A replay socket that answers as vLLM's `_service_replay`, from `batches`; records each request's frames. */
  async function replayServer(
    batches: Map<number, Uint8Array>,
    answer = true,
  ): Promise<{ url: string; requests: Buffer[][] }> {
    const router = new Router({ linger: 0 });
    await router.bind('tcp://127.0.0.1:0');
    open.push(router);
    const requests: Buffer[][] = [];
    void (async () => {
      try {
        for await (const frames of router) {
          requests.push(frames.slice(1));
          if (!answer) continue;
          const start = Number(frames[2].readBigUInt64BE());
          for (const [seq, payload] of [...batches].sort((a, b) => a[0] - b[0]))
            if (seq >= start) await router.send([frames[0], '', sequenceBytes(BigInt(seq)), payload]);
          await router.send([frames[0], '', REPLAY_END_SEQ, '']);
        }
      } catch {
        // closed by afterEach
      }
    })();
    return { url: router.lastEndpoint as string, requests };
  }

  const payloadOf = (seq: number): Uint8Array =>
    encodeKvEventPayload(
      { timestampSeconds: 1, events: [stored(String(seq), [seq])] },
      { batch: 'map', events: 'map' },
    );

  test('GIVEN batches 0, 1, 2 THEN the sink gets them in order with their events, topic and sequence', async () => {
    await subscribe();
    for (let seq = 0; seq < 3; seq++) await engine.sendBatch(seq, [stored(`${100 + seq}`, [seq, seq])]);
    await waitFor('3 batches', () => sink.batches.length === 3);
    expect(sink.sequences).toEqual([0, 1, 2]);
    expect(sink.batches[2]).toMatchObject({
      topic: '',
      seq: 2n,
      events: [{ type: 'BlockStored', blockHashes: ['102'] }],
    });
    expect(sink.stale).toEqual([]);
    expect(await counter('prefix_router_kv_event_batches_total', { engine: 'engine-a' })).toBe(3);
  });

  describe('when a batch is lost', () => {
    test('GIVEN no replay endpoint WHEN seq 2 is skipped THEN the sink is marked stale, later batches still apply, and AllBlocksCleared resyncs', async () => {
      const subscriber = await subscribe();
      for (const seq of [0, 1, 3]) await engine.sendBatch(seq, [stored(String(seq), [seq])]);
      await waitFor('batch 3', () => sink.sequences.includes(3));
      expect(sink.stale).toEqual(['lost batches 2..2']);
      expect(sink.sequences).toEqual([0, 1, 3]);
      expect(subscriber.isStale).toBe(true);
      expect(await counter('prefix_router_kv_events_gaps_total', { outcome: 'stale' })).toBe(1);
      await engine.sendBatch(4, [{ type: 'AllBlocksCleared' }]);
      await waitFor('batch 4', () => sink.sequences.includes(4));
      expect(subscriber.isStale).toBe(false);
    });

    test('GIVEN a replay endpoint WHEN seq 2 is skipped THEN it is replayed with vLLM request frames, and each batch applies once, in order', async () => {
      const replay = await replayServer(new Map([0, 1, 2, 3].map((seq) => [seq, payloadOf(seq)])));
      await subscribe({ replayEndpoint: replay.url });
      for (const seq of [0, 1, 3, 4]) await engine.sendBatch(seq, [stored(String(seq), [seq])]);
      await waitFor('batch 4', () => sink.sequences.includes(4));
      expect(sink.sequences).toEqual([0, 1, 2, 3, 4]);
      expect(sink.batches[2].events).toEqual([stored('2', [2])]);
      expect(sink.stale).toEqual([]);
      // [identity] stripped: "", then the first missing sequence as 8 big-endian bytes (vLLM reads 3 frames).
      expect(replay.requests).toEqual([[Buffer.alloc(0), sequenceBytes(2n)]]);
      expect(await counter('prefix_router_kv_events_gaps_total', { outcome: 'replayed' })).toBe(1);
    });

    test('GIVEN a replay buffer that no longer holds the missing batch THEN the sink is marked stale and the rest applies', async () => {
      const replay = await replayServer(new Map([3].map((seq) => [seq, payloadOf(seq)])));
      await subscribe({ replayEndpoint: replay.url });
      for (const seq of [0, 1, 4]) await engine.sendBatch(seq, [stored(String(seq), [seq])]);
      await waitFor('batch 4', () => sink.sequences.includes(4));
      expect(sink.sequences).toEqual([0, 1, 3, 4]);
      expect(sink.stale).toEqual(['lost batches 2..2']);
    });

    test('GIVEN a replay socket that never answers THEN after the bounded timeout the sink is marked stale', async () => {
      const replay = await replayServer(new Map(), false);
      await subscribe({ replayEndpoint: replay.url, replayTimeoutMs: 100 });
      for (const seq of [0, 2]) await engine.sendBatch(seq, [stored(String(seq), [seq])]);
      await waitFor('batch 2', () => sink.sequences.includes(2));
      expect(sink.stale).toEqual(['lost batches 1..1']);
      expect(await counter('prefix_router_kv_events_dropped_total', { reason: 'replay-failed' })).toBe(1);
    });
  });

  test('GIVEN more live batches arrive during a replay than maxHeldBatches THEN the replay is given up at once and the held batches apply', async () => {
    const replay = await replayServer(new Map(), false);
    await subscribe({ replayEndpoint: replay.url, replayTimeoutMs: 60_000, maxHeldBatches: 2 });
    for (const seq of [0, 2, 3, 4]) await engine.sendBatch(seq, [stored(String(seq), [seq])]);
    await waitFor('batch 4', () => sink.sequences.includes(4), 5000);
    expect(sink.sequences).toEqual([0, 2, 3, 4]);
    expect(sink.stale).toEqual(['lost batches 1..1']);
  });

  test('GIVEN the sequence restarts at 0 (a new engine process) THEN the batch arrives with a leading AllBlocksCleared', async () => {
    await subscribe();
    for (const seq of [0, 1, 0]) await engine.sendBatch(seq, [stored(String(seq), [seq])]);
    await waitFor('3 batches', () => sink.batches.length === 3);
    expect(sink.batches[2].events).toEqual([{ type: 'AllBlocksCleared' }, stored('0', [0])]);
    expect(sink.stale).toEqual([]);
  });

  test('GIVEN garbage frames THEN each is counted by reason, logged naming the engine without its bytes, and skipped', async () => {
    const subscriber = await subscribe();
    await engine.socket.send(['', 'not-eight', 'x']);
    await engine.socket.send(['only one frame']);
    await engine.sendBatch(0, [stored('0', [0])]);
    await engine.socket.send(['', sequenceBytes(1n), Buffer.from('c1 secret-prompt-bytes', 'latin1')]);
    await engine.sendBatch(2, [{ type: 'AllBlocksCleared' }]);
    await waitFor('batch 2', () => sink.sequences.includes(2));
    expect(sink.sequences).toEqual([0, 2]);
    expect(await counter('prefix_router_kv_events_dropped_total', { reason: 'malformed-frame' })).toBe(2);
    expect(await counter('prefix_router_kv_events_dropped_total', { reason: 'undecodable' })).toBe(1);
    expect(sink.stale).toEqual(['batch 1 could not be decoded']);
    expect(subscriber.isStale).toBe(false);
    const warnings = logLines.map((line) => JSON.parse(line) as { engine: string; msg: string });
    expect(warnings.length).toBeGreaterThan(0);
    for (const warning of warnings) expect(warning.engine).toBe('engine-a');
    expect(logLines.join('\n')).not.toMatch(/secret|c1/);
  });

  test("GIVEN llm-d's topic kv@pod-1@m THEN a message on kv@pod-1@m2 (ZeroMQ's prefix match) is not applied", async () => {
    await subscribe({ topic: 'kv@pod-1@m' });
    await engine.sendBatch(0, [stored('9', [1])], 'kv@pod-1@m2');
    await engine.sendBatch(0, [stored('0', [0])], 'kv@pod-1@m');
    await waitFor('batch 0', () => sink.batches.length === 1);
    expect(sink.batches[0]).toMatchObject({ topic: 'kv@pod-1@m', events: [stored('0', [0])] });
    expect(await counter('prefix_router_kv_events_dropped_total', { reason: 'topic' })).toBe(1);
  });

  test.each([
    ['tcp://10.0.0.5:5557', /not a loopback address/],
    ['tcp://*:5557', /not a loopback address/],
    ['http://127.0.0.1:5557', /must be tcp:\/\/HOST:PORT/],
  ])('GIVEN endpoint %s THEN connect refuses it before opening a socket', async (endpoint, message) => {
    await expect(subscribe({ endpoint })).rejects.toThrow(message);
  });

  test('GIVEN a replay timeout of 0 THEN connect refuses it naming the option', async () => {
    await expect(subscribe({ replayTimeoutMs: 0 })).rejects.toThrow(/replayTimeoutMs must be an integer >= 1/);
  });
});

describe('KV event publisher and subscriber', () => {
  test('GIVEN a subscriber that joins after the first batches THEN replay fills them in and every batch applies once, in order', async () => {
    const publisher = await KvEventPublisher.bind({
      endpoint: 'tcp://127.0.0.1:0',
      replayEndpoint: 'tcp://127.0.0.1:0',
    });
    const sink = new RecordingSink();
    for (let seq = 0; seq < 3; seq++) publisher.publish([stored(String(seq), [seq])]);
    const subscriber = await KvEventSubscriber.connect({
      engine: 'engine-a',
      endpoint: publisher.endpoint,
      replayEndpoint: publisher.replayEndpoint,
      sink,
      registry: new Registry(),
      logger: capturingLogger([]),
    });
    try {
      // PUB drops what it sends before the subscription arrives: keep publishing until the subscriber has caught up.
      for (let i = 0; i < 200 && !sink.sequences.includes(Number(publisher.sequence) - 1); i++) {
        publisher.publish([stored(String(publisher.sequence), [1])]);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const last = Number(publisher.sequence) - 1;
      await waitFor('the last batch', () => sink.sequences.includes(last));
      expect(sink.sequences).toEqual(Array.from({ length: last + 1 }, (_, seq) => seq));
      expect(sink.stale).toEqual([]);
      expect(sink.batches[1].events).toEqual([stored('1', [1])]);
      expect(sink.batches[0].dataParallelRank).toBe(0);
    } finally {
      await subscriber.close();
      await publisher.close();
    }
  });

  test('GIVEN a publisher with bufferSteps 2 THEN replay serves only the last 2 batches', async () => {
    const publisher = await KvEventPublisher.bind({
      endpoint: 'tcp://127.0.0.1:0',
      replayEndpoint: 'tcp://127.0.0.1:0',
      bufferSteps: 2,
    });
    const dealer = new (await import('zeromq')).Dealer({ linger: 0, receiveTimeout: 2000 });
    try {
      for (let seq = 0; seq < 5; seq++) publisher.publish([stored(String(seq), [seq])]);
      dealer.connect(publisher.replayEndpoint as string);
      await dealer.send(['', sequenceBytes(0n)]);
      const seqs: bigint[] = [];
      for (let i = 0; i < 10; i++) {
        const [, seq] = await dealer.receive();
        if (seq.equals(REPLAY_END_SEQ)) break;
        seqs.push(seq.readBigUInt64BE());
      }
      expect(seqs).toEqual([3n, 4n]);
    } finally {
      dealer.close();
      await publisher.close();
    }
  });

  test.each([
    [{ bufferSteps: 0 }, /bufferSteps must be an integer >= 1/],
    [{ endpoint: 'tcp://0.0.0.0:0' }, /not a loopback address/],
  ])('GIVEN %j THEN bind refuses it', async (options, message) => {
    await expect(KvEventPublisher.bind({ endpoint: 'tcp://127.0.0.1:0', ...options })).rejects.toThrow(message);
  });

  test('GIVEN a non-loopback endpoint and allowNonLoopback THEN the check lets it through', async () => {
    const publisher = await KvEventPublisher.bind({ endpoint: 'tcp://0.0.0.0:0', allowNonLoopback: true });
    expect(publisher.endpoint).toMatch(/^tcp:\/\/0\.0\.0\.0:\d+$/);
    await publisher.close();
  });

  // Both children run the compiled modules (dist/): under ts-node each would compile them first (seconds of CPU).
  test('GIVEN the emulator, the subscriber and the emulate command loaded THEN the native zeromq addon is not (it loads on first use)', async () => {
    const dist = compiledDist();
    const probe = [
      ...['emulator/emulator-server', 'kv-events/kv-event-subscriber', 'cli/emulate-command'].map(
        (m) => `require(${JSON.stringify(join(dist, 'router', 'src', `${m}.js`))});`,
      ),
      "process.stdout.write(String(Object.keys(require.cache).some((k) => k.includes('/node_modules/zeromq/'))));",
    ].join('');
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', probe], { cwd: ROOT, timeout: 20_000 });
    expect(stdout).toBe('false');
  }, 30_000);

  test('GIVEN a publisher and a subscriber that exchanged a batch WHEN both close THEN no handle keeps the process alive', async () => {
    const child = join(compiledDist(), 'test', 'router', 'kv-events', 'close-child.js');
    const { stdout } = await promisify(execFile)(process.execPath, [child], {
      cwd: ROOT,
      timeout: 20_000,
    });
    expect(stdout.trim()).toBe('closed after 1 batch');
  }, 30_000);
});
