import { request } from 'undici';
import { startFakeBackend, type FakeBackend } from '../../../router/bench/fake-openai-backend';
import { createRouterLogger, startRouter, type RouterOptions, type RunningRouter } from '../../../router/src/server';
import { decodeInstanceState } from '../../../router/src/server/instance-state-wire';
import { chatBody, post } from '../server/helpers/router-fixture';

/** What a sidecar's GET /router/v1/instance-state publishes about the prompts it was sent. */
async function indexedBlocks(router: RunningRouter): Promise<number> {
  const res = await request(`${router.url}/router/v1/instance-state`);
  const update = decodeInstanceState(await res.body.json());
  return update.snapshot?.hashes.length ?? 0;
}

async function sidecar(backend: FakeBackend, options: Partial<RouterOptions> = {}): Promise<RunningRouter> {
  return startRouter(
    {
      backends: [backend.url],
      port: 0,
      healthCheck: { intervalMs: 0 },
      publishStateMs: 1,
      publishStateBlockChars: 64,
      policy: { name: 'round-robin' },
      ...options,
    },
    { logger: createRouterLogger('silent') },
  );
}

const PROMPT = 'a long prompt whose blocks would be published once the engine accepts it. '.repeat(8);

describe('when a publishing sidecar (--publish-state-ms) forwards requests', () => {
  it('GIVEN the engine rejects the request (4xx) THEN none of its blocks are published', async () => {
    const engine = await startFakeBackend({ name: 'rejects', behavior: { errorStatus: 400 } });
    const router = await sidecar(engine);
    try {
      expect((await post(`${router.url}/v1/chat/completions`, chatBody(PROMPT))).status).toBe(400);
      expect(await indexedBlocks(router)).toBe(0);
    } finally {
      await router.close();
      await engine.close();
    }
  });

  it('GIVEN the engine accepts it (2xx) THEN its blocks are published', async () => {
    const engine = await startFakeBackend({ name: 'accepts' });
    const router = await sidecar(engine);
    try {
      expect((await post(`${router.url}/v1/chat/completions`, chatBody(PROMPT))).status).toBe(200);
      expect(await indexedBlocks(router)).toBeGreaterThan(0);
    } finally {
      await router.close();
      await engine.close();
    }
  });

  it('GIVEN --publish-state-blocks off THEN load is published and no block ever is', async () => {
    const engine = await startFakeBackend({ name: 'load-only' });
    const router = await sidecar(engine, { publishStateBlocks: 'off' });
    try {
      for (let i = 0; i < 3; i++)
        expect((await post(`${router.url}/v1/chat/completions`, chatBody(`${PROMPT} ${i}`))).status).toBe(200);
      const res = await request(`${router.url}/router/v1/instance-state`);
      const update = decodeInstanceState(await res.body.json());
      expect(update.snapshot?.hashes.length ?? 0).toBe(0);
      expect(update.load).toEqual({ inFlight: 0, queuedPrefillTokens: 0, decodeSequences: 0 });
      expect(update.version).toBeGreaterThan(0);
    } finally {
      await router.close();
      await engine.close();
    }
  });
});
