import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BODY_BYTES_PER_CONTEXT_TOKEN,
  BODY_LIMIT_HEADROOM_BYTES,
  bodyLimitForContext,
} from '../../../router/src/server/body-budget';
import { maxModelLenFromModels } from '../../../router/src/server/cache-config';
import { ROUTER_DEFAULTS } from '../../../router/src/config/router-config';
import { createRouterLogger, startRouter, type RouterOptions, type RunningRouter } from '../../../router/src/server';
import { chatBody, post } from '../server/helpers/router-fixture';

/** An engine whose GET /v1/models states `maxModelLen` (none when undefined) and that answers every completion. */
async function engineWithContext(
  maxModelLen: number | undefined,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            object: 'list',
            data: [
              {
                id: 'fake-model',
                object: 'model',
                ...(maxModelLen !== undefined ? { max_model_len: maxModelLen } : {}),
              },
            ],
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices":[]}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function routerFor(url: string, options: Partial<RouterOptions> = {}): Promise<RunningRouter> {
  return startRouter(
    { backends: [url], port: 0, healthCheck: { intervalMs: 0 }, ...options },
    { logger: createRouterLogger('silent') },
  );
}

/** A chat body of exactly `bytes` bytes. */
function bodyOf(bytes: number): string {
  const empty = chatBody('');
  return chatBody('x'.repeat(bytes - empty.length));
}

describe('when the default body limit comes from the model context', () => {
  it('GIVEN a context length THEN the limit is 24 bytes a token (4 characters of up to 6 bytes) plus 1 MiB, at most 1 GiB', () => {
    expect(BODY_BYTES_PER_CONTEXT_TOKEN).toBe(24);
    expect(bodyLimitForContext(1_000)).toBe(24_000 + BODY_LIMIT_HEADROOM_BYTES);
    expect(bodyLimitForContext(131_072)).toBe(131_072 * 24 + 1024 * 1024);
    expect(bodyLimitForContext(100_000_000)).toBe(1024 * 1024 * 1024);
  });

  it.each([
    ['one model', { data: [{ id: 'a', max_model_len: 8192 }] }, 8192],
    [
      'several models (the longest counts)',
      {
        data: [
          { id: 'a', max_model_len: 8192 },
          { id: 'b', max_model_len: 32768 },
        ],
      },
      32768,
    ],
    ['no max_model_len', { data: [{ id: 'a' }] }, undefined],
    [
      'a nonsense value',
      {
        data: [
          { id: 'a', max_model_len: -1 },
          { id: 'b', max_model_len: '9' },
        ],
      },
      undefined,
    ],
    ['not a model list', { error: 'x' }, undefined],
  ])('GIVEN /v1/models with %s THEN the context read is the longest one stated, or none', (_what, json, expected) => {
    expect(maxModelLenFromModels(json)).toBe(expected);
  });

  describe('GIVEN a backend serving a 1,000-token context', () => {
    let engine: { url: string; close: () => Promise<void> };
    const limit = bodyLimitForContext(1_000);
    beforeAll(async () => {
      engine = await engineWithContext(1_000);
    });
    afterAll(() => engine.close());

    it(`THEN a body of ${limit} bytes is routed and one byte more is refused with 413`, async () => {
      const router = await routerFor(engine.url);
      try {
        expect((await post(`${router.url}/v1/chat/completions`, bodyOf(limit))).status).toBe(200);
        const refused = await post(`${router.url}/v1/chat/completions`, bodyOf(limit + 1));
        expect(refused.status).toBe(413);
        expect(JSON.parse(refused.text).error.code).toBe('payload_too_large');
      } finally {
        await router.close();
      }
    });

    it('THEN an explicit limits.maxBodyBytes still wins', async () => {
      const router = await routerFor(engine.url, { limits: { maxBodyBytes: 2 * limit } });
      try {
        expect((await post(`${router.url}/v1/chat/completions`, bodyOf(limit + 1))).status).toBe(200);
      } finally {
        await router.close();
      }
    });
  });

  it('GIVEN a backend whose /v1/models streams without end THEN the router still starts within its health-check timeout, on the fixed default', async () => {
    const endless = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      const pump = (): void => {
        while (!res.destroyed && res.write(Buffer.alloc(64 * 1024, 0x20)));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    await new Promise<void>((r) => endless.listen(0, '127.0.0.1', r));
    const started = Date.now();
    const router = await routerFor(`http://127.0.0.1:${(endless.address() as AddressInfo).port}`, {
      healthCheck: { intervalMs: 0, timeoutMs: 500 },
    });
    try {
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await router.close();
      await new Promise<void>((r) => {
        endless.closeAllConnections();
        endless.close(() => r());
      });
    }
  });

  it(`GIVEN a backend that states no context THEN the fixed default (${ROUTER_DEFAULTS.limits.maxBodyBytes} bytes) applies`, async () => {
    const engine = await engineWithContext(undefined);
    const router = await routerFor(engine.url);
    try {
      expect((await post(`${router.url}/v1/chat/completions`, bodyOf(bodyLimitForContext(1_000) + 1))).status).toBe(
        200,
      );
    } finally {
      await router.close();
      await engine.close();
    }
  });
});
