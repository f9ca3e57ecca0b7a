import { request } from 'undici';
import { startEmulatorFleet, type RunningEmulatorFleet } from '../../../router/src/emulator/emulator-server';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { EmulatorRequestTokenizer } from '../../../router/src/emulator/emulator-request-tokenizer';
import type { KvCacheEvent, KvEventSink } from '../../../router/src/kv-events/kv-event';
import type { KvEventSource, KvEventStream } from '../../../router/src/kv-events/kv-event-source';
import { loadRouterConfig } from '../../../router/src/config';
import { INSTANCE_HEADER, startRouter, type RunningRouter } from '../../../router/src/server';

const tiny = builtinProfile('tiny');
const BS = tiny.blockTokens;

/** A source the test drives: it hands the router's sink to the test, as the ZeroMQ subscriber would feed it. */
class ScriptedSource implements KvEventSource {
  sink: KvEventSink | undefined;
  streams: readonly KvEventStream[] = [];
  closed = false;
  private seq = 0n;
  start(streams: readonly KvEventStream[], sink: KvEventSink): void {
    this.streams = streams;
    this.sink = sink;
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
  send(engine: string, events: KvCacheEvent[]): void {
    this.sink!.applyBatch(engine, { topic: '', seq: this.seq++, timestampSeconds: 0, events });
  }
}

function chatBody(model: string, user: string): string {
  return JSON.stringify({ model, messages: [{ role: 'user', content: user }], max_tokens: 2 });
}

function promptIdsOf(user: string): ArrayLike<number> {
  return new EmulatorRequestTokenizer().promptBlocksOf({
    kind: 'chat',
    messages: [{ role: 'user', content: user }],
    addGenerationPrompt: true,
    addSpecialTokens: false,
  })!.tokenIds;
}

/** BlockStored for every full block of `user`'s chat as the emulator tokenizes it. */
function storedFor(user: string, tag: string): KvCacheEvent & { type: 'BlockStored' } {
  const ids = promptIdsOf(user);
  const full = Math.floor(ids.length / BS);
  return {
    type: 'BlockStored',
    blockHashes: Array.from({ length: full }, (_, i) => `${tag}-${i}`),
    tokenIds: Array.from(ids).slice(0, full * BS),
    blockSize: BS,
  };
}

describe('when the router follows the engines KV events (--kv-events, --tokenizer emulator)', () => {
  let fleet: RunningEmulatorFleet;
  let router: RunningRouter;
  const source = new ScriptedSource();

  beforeAll(async () => {
    fleet = await startEmulatorFleet(2, { profile: tiny, timeScale: 50 });
    router = await startRouter(
      {
        backends: fleet.urls,
        policy: { name: 'cache-aware', blockChars: 64 },
        port: 0,
        logLevel: 'silent',
        healthCheck: { intervalMs: 60_000 },
        routingHeaders: 'all',
        kvEvents: fleet.urls.map((url, i) => `${url}=tcp://127.0.0.1:${5557 + i}`),
        tokenizer: 'emulator',
      },
      { kvEventSource: source },
    );
  });

  afterAll(async () => {
    await router.close();
    await fleet.close();
    expect(source.closed).toBe(true);
  });

  async function ask(user: string): Promise<{ instance: string; predicted: number }> {
    const res = await request(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chatBody(fleet.instances[0].modelName, user),
    });
    await res.body.text();
    expect(res.statusCode).toBe(200);
    return {
      instance: router.backends.find((b) => b.name === res.headers[INSTANCE_HEADER])!.id,
      predicted: Number(res.headers['x-prefix-router-predicted-cached-tokens']),
    };
  }

  test('GIVEN the backends THEN the source is started with each backend and its endpoint', () => {
    expect(source.streams).toEqual(
      fleet.urls.map((url, i) => ({ engine: url, endpoint: `tcp://127.0.0.1:${5557 + i}` })),
    );
  });

  test('GIVEN an engine says it holds a prompt this router never sent THEN the prompt goes there, predicted as the engine said', async () => {
    const user = 'a prompt another router sent to the second engine, long enough for several blocks. '.repeat(4);
    source.send(fleet.urls[0], [{ type: 'AllBlocksCleared' }]);
    source.send(fleet.urls[1], [{ type: 'AllBlocksCleared' }, storedFor(user, 'b')]);
    const answer = await ask(user);
    expect(answer.instance).toBe(fleet.urls[1]);
    // Every full block but the one holding the last prompt token, which the engine recomputes.
    expect(answer.predicted).toBe(Math.floor((promptIdsOf(user).length - 1) / BS) * BS);
    expect(answer.predicted).toBeGreaterThan(0);
  });

  test('GIVEN the engine that was sent a prompt cleared its cache THEN the prediction is 0 (the router alone would predict a hit)', async () => {
    const user = 'a prompt this router sends twice, the engine clearing its cache in between. '.repeat(4);
    const first = await ask(user);
    source.send(first.instance, [storedFor(user, 'c')]);
    source.send(first.instance, [{ type: 'AllBlocksCleared' }]);
    const again = await ask(user);
    expect(again.predicted).toBe(0);
  });

  test('GIVEN an engine whose events were lost THEN its prediction is the router estimate again, until AllBlocksCleared', async () => {
    const user = 'a prompt sent while the engine stream is stale, the router estimate stands. '.repeat(4);
    for (const url of fleet.urls) source.sink!.markStale(url, 'test: batches lost');
    const first = await ask(user);
    const again = await ask(user);
    expect(again.instance).toBe(first.instance);
    expect(again.predicted).toBeGreaterThan(0);
    for (const url of fleet.urls) source.send(url, [{ type: 'AllBlocksCleared' }]);
    expect((await ask(user)).predicted).toBe(0);
  });
});

describe('when --kv-events or --tokenizer is set wrong', () => {
  const load = (flags: Record<string, unknown>) => () =>
    loadRouterConfig({ flags: { backend: ['http://127.0.0.1:8001'], ...flags }, env: {} });
  test.each([
    [
      { kvEvents: ['http://127.0.0.1:9999=tcp://127.0.0.1:5557'], tokenizer: 'emulator' },
      '--kv-events must name one of the backends',
    ],
    [
      { kvEvents: ['http://127.0.0.1:8001=udp://x'], tokenizer: 'emulator' },
      '--kv-events its endpoint must be tcp://HOST:PORT or ipc://PATH',
    ],
    [
      { kvEvents: ['http://127.0.0.1:8001=tcp://127.0.0.1:70000'], tokenizer: 'emulator' },
      'port 70000 is not between 0 and 65535',
    ],
    [
      { kvEvents: ['http://127.0.0.1:8001=tcp://10.0.0.1:5557'], tokenizer: 'emulator' },
      'tcp://10.0.0.1:5557 is not a loopback address; KV events carry token ids (prompts)',
    ],
    [{ kvEvents: ['tcp://127.0.0.1:5557'], tokenizer: 'emulator' }, 'must be BACKEND_URL=ZMQ_ENDPOINT'],
    [
      { kvEvents: ['http://127.0.0.1:8001=tcp://127.0.0.1:5557'] },
      '--tokenizer (or PREFIX_ROUTER_TOKENIZER) is needed with --kv-events',
    ],
    [{ tokenizer: 'emulator' }, '--tokenizer is used only with --kv-events'],
    [
      { kvEvents: ['http://127.0.0.1:8001=tcp://127.0.0.1:5557'], tokenizer: '/nonexistent/tokenizer.json' },
      '--tokenizer must be a readable tokenizer.json file',
    ],
  ])('GIVEN %j THEN the error says %s', (flags, message) => {
    expect(load(flags)).toThrow(message);
  });
  test('GIVEN a backend and its endpoint THEN the configuration names the engine by its backend id', () => {
    const config = load({ kvEvents: ['http://127.0.0.1:8001/=tcp://127.0.0.1:5557'], tokenizer: 'emulator' })();
    expect(config.kvEvents).toEqual([{ engine: 'http://127.0.0.1:8001', endpoint: 'tcp://127.0.0.1:5557' }]);
  });
});
