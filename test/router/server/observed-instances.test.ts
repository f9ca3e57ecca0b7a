import { Writable } from 'node:stream';
import { startFakeBackend, type FakeBackend } from '../../../router/bench/fake-openai-backend';
import {
  createRouterLogger,
  INSTANCE_HEADER,
  startRouter,
  type RouterOptions,
  type RunningRouter,
} from '../../../router/src/server';
import { PREDICTED_CACHED_HEADER } from '../../../router/src/server/proxy';
import { get, post, sharedStateHashKeyFile, waitFor } from './helpers/router-fixture';

const BLOCK_CHARS = 64;

function chat(system: string, user: string): string {
  return JSON.stringify({
    model: 'fake-model',
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
  });
}

/** Two instances, each a fake engine behind a publishing router (the sidecar), and routers in front of them. */
describe('when router replicas observe the instances they share', () => {
  let engines: FakeBackend[];
  let sidecars: RunningRouter[];
  const fronts: RunningRouter[] = [];
  const logs: string[] = [];

  async function front(options: Partial<RouterOptions> = {}, capture = false): Promise<RunningRouter> {
    const destination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        logs.push(
          ...chunk
            .toString('utf8')
            .split('\n')
            .filter((l) => l.length > 0),
        );
        cb();
      },
    });
    const router = await startRouter(
      {
        backends: sidecars.map((s) => s.url),
        policy: { name: 'cache-aware', blockChars: BLOCK_CHARS },
        observeInstances: 'on',
        port: 0,
        healthCheck: { intervalMs: 0 },
        routingHeaders: 'all',
        stateHashKeyFile: sharedStateHashKeyFile(),
        ...options,
      },
      { logger: createRouterLogger(capture ? 'info' : 'silent', destination) },
    );
    fronts.push(router);
    return router;
  }

  beforeAll(async () => {
    engines = await Promise.all(
      [0, 1].map((i) => startFakeBackend({ name: `engine-${i}`, behavior: { responseDelayMs: 400 } })),
    );
    sidecars = await Promise.all(
      engines.map((e) =>
        startRouter(
          {
            backends: [e.url],
            policy: { name: 'round-robin' },
            publishStateMs: 5,
            publishStateBlockChars: BLOCK_CHARS,
            port: 0,
            healthCheck: { intervalMs: 0 },
            stateHashKeyFile: sharedStateHashKeyFile(),
          },
          { logger: createRouterLogger('silent') },
        ),
      ),
    );
  });

  afterAll(async () => {
    await Promise.all(fronts.map((f) => f.close()));
    await Promise.all(sidecars.map((s) => s.close()));
    await Promise.all(engines.map((e) => e.close()));
  });

  test('GIVEN a prompt one replica sent THEN another replica predicts its cached prefix on that instance, which a replica that does not observe cannot', async () => {
    const [a, b] = [await front(), await front()];
    const blind = await front({ observeInstances: 'off' });
    const system = 'a long shared system prompt that several replicas will see '.repeat(12);
    const first = await post(`${a.url}/v1/chat/completions`, chat(system, 'first question'));
    expect(first.status).toBe(200);
    const name = String(first.headers[INSTANCE_HEADER]);
    const instance = a.backends.find((x) => x.name === name)!.id;
    await waitFor(
      'replica b to observe the first request',
      () => (b.backends.find((x) => x.id === instance)?.observed?.seq ?? 0) >= 1,
    );

    const followUp = chat(system, 'second question');
    const seen = await post(`${b.url}/v1/chat/completions`, followUp);
    expect(seen.status).toBe(200);
    expect(seen.headers[INSTANCE_HEADER]).toBe(name);
    expect(Number(seen.headers[PREDICTED_CACHED_HEADER])).toBeGreaterThanOrEqual(
      Math.floor(system.length / BLOCK_CHARS) * (BLOCK_CHARS / 4) - BLOCK_CHARS,
    );
    const metrics = await get(`${b.url}/metrics`);
    expect(metrics.text).toMatch(
      new RegExp(`prefix_router_instance_state_age_seconds\\{instance="${instance.replace(/[.]/g, '\\.')}"\\} \\d`),
    );
    const unseen = await post(`${blind.url}/v1/chat/completions`, followUp);
    expect(Number(unseen.headers[PREDICTED_CACHED_HEADER])).toBe(0);
    expect(blind.backends.every((x) => x.observed === undefined)).toBe(true);
  });

  test('GIVEN a request in flight through one replica THEN the other sees it in the instance load, and the count returns to zero', async () => {
    const [a, b] = [await front(), await front()];
    const pending = post(`${a.url}/v1/chat/completions`, chat('load probe '.repeat(40), 'q'));
    await waitFor('replica b to see the request in flight', () =>
      b.backends.some((x) => (x.observed?.inFlight ?? 0) === 1),
    );
    const loaded = b.backends.find((x) => (x.observed?.inFlight ?? 0) === 1)!;
    expect(loaded.inFlight).toBe(0); // b's own count: it sent nothing
    expect(loaded.observed!.queuedPrefillTokens).toBeGreaterThan(0);
    expect((await pending).status).toBe(200);
    await waitFor('the instance load to return to zero', () =>
      b.backends.every(
        (x) =>
          x.observed !== undefined &&
          x.observed.inFlight === 0 &&
          x.observed.queuedPrefillTokens === 0 &&
          x.observed.decodeSequences === 0,
      ),
    );
  });

  test('GIVEN GET /router/v1/instance-state THEN a router that does not publish answers 404 and a bad query parameter 400, both OpenAI-style', async () => {
    const a = await front();
    const notPublished = await get(`${a.url}/router/v1/instance-state`);
    expect(notPublished.status).toBe(404);
    expect(JSON.parse(notPublished.text).error).toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('--publish-state-ms'),
    });
    const bad = await get(`${sidecars[0].url}/router/v1/instance-state?waitMs=soon`);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error).toMatchObject({
      code: 'invalid_field',
      message: expect.stringContaining('waitMs'),
    });
    const once = await get(`${sidecars[0].url}/router/v1/instance-state`);
    expect(once.status).toBe(200);
    expect(JSON.parse(once.text)).toMatchObject({
      format: 'prefix-router/instance-state/v2',
      blockChars: BLOCK_CHARS,
      snapshot: expect.anything(),
    });
  });

  test('GIVEN backends that do not publish THEN the replica warns once per backend and routes on its own view', async () => {
    const a = await front({ backends: engines.map((e) => e.url) }, true);
    for (let i = 0; i < 3; i++)
      expect((await post(`${a.url}/v1/chat/completions`, chat(`plain ${i}`, 'q'))).status).toBe(200);
    await waitFor('a warning per backend', () => logs.filter((l) => l.includes('cannot observe')).length >= 2);
    expect(a.backends.every((x) => x.observed === undefined)).toBe(true);
    const warnings = logs
      .filter((l) => l.includes('cannot observe'))
      .map((l) => JSON.parse(l) as { backend: string; error: string });
    expect(new Set(warnings.map((w) => w.backend)).size).toBe(warnings.length);
    expect(warnings[0].error).toContain('HTTP 404');
  });

  test('GIVEN an instance whose router restarts THEN the replica drops the observation while it is down and resyncs from the new router', async () => {
    const engine = await startFakeBackend({ name: 'engine-restarting' });
    const publishing = {
      backends: [engine.url],
      policy: { name: 'round-robin' as const },
      publishStateMs: 5,
      publishStateBlockChars: BLOCK_CHARS,
      healthCheck: { intervalMs: 0 },
      stateHashKeyFile: sharedStateHashKeyFile(),
    };
    let sidecar = await startRouter({ ...publishing, port: 0 }, { logger: createRouterLogger('silent') });
    const port = sidecar.port;
    const a = await front({ backends: [sidecar.url] }, true);
    try {
      await waitFor('the first observation', () => a.backends[0].observed !== undefined);
      const system = 'a prompt sent before the restart '.repeat(10);
      expect((await post(`${a.url}/v1/chat/completions`, chat(system, 'q'))).status).toBe(200);
      await waitFor('the request to be observed', () => (a.backends[0].observed?.seq ?? 0) === 1);
      await sidecar.close();
      await waitFor('the replica to notice', () => a.backends[0].observed === undefined);
      // Meanwhile the replica itself keeps answering (its only backend is down: a clear 502).
      const during = await post(`${a.url}/v1/chat/completions`, chat('while down', 'q'));
      expect(during.status).toBe(502);
      sidecar = await startRouter({ ...publishing, port }, { logger: createRouterLogger('silent') });
      await waitFor('the replica to observe the new epoch', () => a.backends[0].observed?.seq === 0, 10_000);
      expect(logs.some((l) => l.includes('observing instance state again'))).toBe(true);
      // The new router's index starts empty (the replica's own index still remembers what it sent there: the
      // engine behind may well still hold it), and it is followed from there.
      expect(a.backends[0].observed?.indexedBlocks).toBe(0);
      expect((await post(`${a.url}/v1/chat/completions`, chat(system, 'q2'))).status).toBe(200);
      await waitFor('the new request to be observed', () => a.backends[0].observed?.seq === 1);
      expect(a.backends[0].observed!.indexedBlocks).toBeGreaterThanOrEqual(Math.floor(system.length / BLOCK_CHARS));
    } finally {
      await sidecar.close();
      await engine.close();
    }
  });

  test('GIVEN an observer waiting on a publisher with nothing new THEN it is answered when something changes, and at once when the publisher shuts down', async () => {
    const engine = await startFakeBackend({ name: 'engine-own' });
    const publisher = await startRouter(
      {
        backends: [engine.url],
        policy: { name: 'round-robin' },
        publishStateMs: 5,
        port: 0,
        healthCheck: { intervalMs: 0 },
      },
      { logger: createRouterLogger('silent') },
    );
    try {
      const current = JSON.parse((await get(`${publisher.url}/router/v1/instance-state`)).text) as {
        epoch: string;
        seq: number;
        version: number;
      };
      const wait = (q: string) =>
        get(
          `${publisher.url}/router/v1/instance-state?epoch=${current.epoch}&since=${current.seq}&version=${current.version}&waitMs=30000${q}`,
        );
      // A change (a request through it) answers the waiting observer. The request's load changes first, and its
      // blocks are published once the engine has accepted it, so the record may come in a second answer.
      const changed = wait('');
      await new Promise((r) => setTimeout(r, 50));
      expect((await post(`${publisher.url}/v1/chat/completions`, chat('something new '.repeat(20), 'q'))).status).toBe(
        200,
      );
      let update = JSON.parse((await changed).text) as { seq: number; version: number; events: string[] };
      expect([current.seq, current.seq + 1]).toContain(update.seq);
      for (let i = 0; i < 5 && update.seq === current.seq; i++) {
        const next = `${publisher.url}/router/v1/instance-state?epoch=${current.epoch}&since=${current.seq}&version=${update.version}&waitMs=5000`;
        update = JSON.parse((await get(next)).text) as typeof update;
      }
      expect(update.seq).toBe(current.seq + 1);
      expect(update.events).toHaveLength(1);
      // Nothing changes now: the observer would wait 30 s, but shutting down answers it and the drain ends.
      const after = JSON.parse((await get(`${publisher.url}/router/v1/instance-state`)).text) as {
        seq: number;
        version: number;
      };
      const waiting = get(
        `${publisher.url}/router/v1/instance-state?epoch=${current.epoch}&since=${after.seq}&version=${after.version}&waitMs=30000`,
      );
      await new Promise((r) => setTimeout(r, 50));
      const started = Date.now();
      await publisher.close();
      expect((await waiting).status).toBe(200);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await publisher.close();
      await engine.close();
    }
  });
});
