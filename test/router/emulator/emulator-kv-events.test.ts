import pino from 'pino';
import { Registry } from 'prom-client';
import { startEmulator, type RunningEmulator } from '../../../router/src/emulator/emulator-server';
import type { KvEventBatch, KvEventSink } from '../../../router/src/kv-events/kv-event';
import { EngineKvIndex } from '../../../router/src/kv-events/engine-kv-index';
import { PromptBlocks } from '../../../router/src/kv-events/prompt-blocks';
import { KvEventSubscriber } from '../../../router/src/kv-events/kv-event-subscriber';
import { blockHashes } from '../../../router/src/state/block-hash';
import { textOf } from './engine-text';

/** What a subscriber believes the engine caches: hash → token ids, from the events alone. */
class CacheMirror implements KvEventSink {
  readonly blocks = new Map<string, number[]>();
  readonly stale: string[] = [];
  batches = 0;
  removed = 0;
  cleared = 0;
  loraNames = new Set<string>();

  applyBatch(_engine: string, batch: KvEventBatch): void {
    this.batches++;
    for (const event of batch.events) {
      if (event.type === 'AllBlocksCleared') {
        this.cleared++;
        this.blocks.clear();
      } else if (event.type === 'BlockRemoved') {
        this.removed += event.blockHashes.length;
        for (const hash of event.blockHashes) this.blocks.delete(hash);
      } else {
        expect(event.tokenIds).toHaveLength(event.blockHashes.length * event.blockSize);
        if (event.loraName !== undefined) this.loraNames.add(event.loraName);
        event.blockHashes.forEach((hash, i) =>
          this.blocks.set(hash, event.tokenIds.slice(i * event.blockSize, (i + 1) * event.blockSize)),
        );
      }
    }
  }

  markStale(_engine: string, reason: string): void {
    this.stale.push(reason);
  }
}

async function waitFor(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function post(emulator: RunningEmulator, path: string, body: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${emulator.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe.each(['map', 'positional'] as const)('emulator KV events, %s encoding', (encoding) => {
  let emulator: RunningEmulator;
  let subscriber: KvEventSubscriber;
  let mirror: CacheMirror;
  let index: EngineKvIndex;

  beforeEach(async () => {
    emulator = await startEmulator({
      profile: 'tiny',
      timeScale: 20,
      loraModules: [{ name: 'sql', path: '/adapters/sql' }],
      serverDevMode: true,
      kvEvents: { port: 0, replayPort: 0, encoding },
    });
    mirror = new CacheMirror();
    index = new EngineKvIndex({ engines: ['emulator'], maxBlocksPerEngine: 1024 });
    subscriber = await KvEventSubscriber.connect({
      engine: 'emulator',
      endpoint: emulator.kvEvents!.endpoint,
      replayEndpoint: emulator.kvEvents!.replayEndpoint,
      // The events feed both a plain mirror (what the test reads) and the router's engine index (what routing reads).
      sink: {
        applyBatch: (engine, batch) => {
          mirror.applyBatch(engine, batch);
          index.applyBatch(engine, batch);
        },
        markStale: (engine, reason) => {
          mirror.markStale(engine, reason);
          index.markStale(engine, reason);
        },
      },
      registry: new Registry(),
      logger: pino({ level: 'silent' }),
    });
    // The PUB socket drops what it sends before the subscription arrives: one-block requests until a batch is heard
    // (the start's AllBlocksCleared then comes by replay).
    for (let i = 0; i < 100 && mirror.batches === 0; i++)
      await post(emulator, '/v1/completions', { prompt: textOf(`warm${i}`, 20), max_tokens: 1 });
  });
  afterEach(async () => {
    await subscriber.close();
    await emulator.close();
  });

  test('GIVEN requests that overflow the KV cache THEN the events mirror exactly the blocks the engine caches, with its token ids', async () => {
    const prompts = Array.from({ length: 7 }, (_, i) => textOf(`prompt-${i}`, 400));
    for (const prompt of prompts) await post(emulator, '/v1/completions', { prompt, max_tokens: 16 });
    await post(emulator, '/v1/completions', { model: 'sql', prompt: prompts[6], max_tokens: 1 });
    // Each prompt's cached prefix, as the engine answers it and as the mirror reads it from the events alone.
    const lookups = [
      ...prompts.map((promptText) => ({ promptText, seed: undefined, loraName: undefined })),
      { promptText: prompts[6], seed: '\u0000lora:sql', loraName: 'sql' },
    ];
    const agree = (): boolean => {
      const stats = emulator.engine.stats();
      if (stats.running !== 0 || mirror.blocks.size !== stats.cachedBlocks) return false;
      return lookups.every(({ promptText, seed, loraName }) => {
        const hashes = blockHashes(promptText, { seed }).map(String);
        let mirrored = 0;
        while (mirrored < hashes.length && mirror.blocks.has(hashes[mirrored])) mirrored++;
        return Math.min(mirrored, 24) * 16 === emulator.engine.cachedTokensFor({ promptText, loraName });
      });
    };
    await waitFor('the mirror to hold what the engine caches', agree);
    expect(mirror.stale).toEqual([]);
    expect(mirror.cleared).toBe(1);
    expect(mirror.removed).toBeGreaterThan(0);
    expect(mirror.loraNames).toEqual(new Set(['sql']));
    expect(emulator.engine.cachedTokensFor({ promptText: prompts[6], loraName: 'sql' })).toBe(24 * 16);
    // The router's engine index, fed the same events and given the prompt as the emulator tokenizes it, agrees.
    for (const { promptText, loraName } of lookups) {
      const { tokens } = (await post(emulator, '/tokenize', { prompt: promptText })) as { tokens: number[] };
      expect(index.accountOf('emulator', new PromptBlocks(tokens, true), loraName ?? emulator.modelName)).toEqual({
        known: true,
        cachedTokens: emulator.engine.cachedTokensFor({ promptText, loraName }),
      });
    }
    const last = blockHashes(prompts[6]).map(String);
    const { tokens } = (await post(emulator, '/tokenize', { prompt: prompts[6] })) as { tokens: number[] };
    expect(mirror.blocks.get(last[3])).toEqual(tokens.slice(48, 64));
  });
  test('GIVEN a cached prompt WHEN POST /reset_prefix_cache THEN the engine forgets it and the subscriber hears AllBlocksCleared', async () => {
    const prompt = textOf('reset', 100);
    await post(emulator, '/v1/completions', { prompt, max_tokens: 1 });
    expect(emulator.engine.cachedTokensFor({ promptText: prompt })).toBe(96);
    const res = await fetch(`${emulator.url}/reset_prefix_cache`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(emulator.engine.cachedTokensFor({ promptText: prompt })).toBe(0);
    expect(emulator.engine.stats().cachedBlocks).toBe(0);
    await waitFor('the reset to reach the mirror', () => mirror.cleared === 2);
    expect(mirror.blocks.size).toBe(0);
  });
});

describe('emulator KV events options', () => {
  test('GIVEN no serverDevMode THEN POST /reset_prefix_cache is 404, as vLLM without VLLM_SERVER_DEV_MODE', async () => {
    const emulator = await startEmulator({ profile: 'tiny' });
    try {
      expect((await fetch(`${emulator.url}/reset_prefix_cache`, { method: 'POST' })).status).toBe(404);
    } finally {
      await emulator.close();
    }
  });

  test.each([
    [{ port: 70000 }, /kvEvents.port must be an integer in \[0, 65535\]/],
    [{ port: 0, replayPort: -1 }, /kvEvents.replayPort must be an integer/],
    [{ port: 0, encoding: 'json' }, /kvEvents.encoding must be one of map, positional/],
    [{ port: 0, bufferSteps: 0 }, /kvEvents.bufferSteps must be an integer in \[1, 1000000\]/],
  ])('GIVEN %j THEN startEmulator refuses it', async (kvEvents, message) => {
    await expect(startEmulator({ profile: 'tiny', kvEvents: kvEvents as never })).rejects.toThrow(message);
  });

  test('GIVEN no kvEvents THEN the emulator reports no endpoints', async () => {
    const emulator = await startEmulator({ profile: 'tiny' });
    expect(emulator.kvEvents).toBeUndefined();
    await emulator.close();
  });
});
