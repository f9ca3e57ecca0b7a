import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { startFakeBackend, type FakeBackend } from '../../../router/bench/fake-openai-backend';
import { ROUTER_DEFAULTS } from '../../../router/src/config/router-config';
import { MAX_SSE_EVENT_BYTES, SseEventAligner, SseEventTooLargeError } from '../../../router/src/protocol/sse';
import { createRouterLogger, startRouter, type RouterOptions, type RunningRouter } from '../../../router/src/server';
import { chatBody, post } from '../server/helpers/router-fixture';

async function routerFor(url: string, options: Partial<RouterOptions>): Promise<RunningRouter> {
  return startRouter(
    { backends: [url], port: 0, healthCheck: { intervalMs: 0 }, ...options },
    { logger: createRouterLogger('silent') },
  );
}

describe('when every connection to a backend is in use (limits.poolWaitTimeoutMs)', () => {
  let engine: FakeBackend;
  beforeAll(async () => {
    engine = await startFakeBackend({ name: 'slow', behavior: { responseDelayMs: 1_500 } });
  });
  afterAll(() => engine.close());

  it('GIVEN the default THEN a request waits at most 10 s for a connection', () => {
    expect(ROUTER_DEFAULTS.limits.poolWaitTimeoutMs).toBe(10_000);
  });

  it('GIVEN a one-connection pool held by a slow answer THEN the next request gets 503 overloaded with Retry-After, OpenAI-style, before the first answer ends', async () => {
    const router = await routerFor(engine.url, { maxConnectionsPerBackend: 1, limits: { poolWaitTimeoutMs: 200 } });
    try {
      const holding = post(`${router.url}/v1/chat/completions`, chatBody('holds the only connection'));
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      const refused = await post(`${router.url}/v1/chat/completions`, chatBody('waits for it'));
      const waitedMs = Date.now() - started;
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(JSON.parse(refused.text).error).toMatchObject({
        code: 'overloaded',
        type: 'server_error',
        message: expect.stringContaining('no free connection in time'),
      });
      // Busy, without the instance's name or address or the pool's figures (routing headers are off).
      const message = JSON.parse(refused.text).error.message as string;
      for (const secret of ['127.0.0.1', 'backend-', '200 ms', 'in use']) expect(message).not.toContain(secret);
      expect(waitedMs).toBeLessThan(1_400);
      expect((await holding).status).toBe(200);
      // THEN the freed connection serves the next request
      expect((await post(`${router.url}/v1/chat/completions`, chatBody('after'))).status).toBe(200);
    } finally {
      await router.close();
    }
  }, 20_000);

  it('GIVEN poolWaitTimeoutMs 0 (no bound) THEN the waiting request is served once the connection frees', async () => {
    const router = await routerFor(engine.url, { maxConnectionsPerBackend: 1, limits: { poolWaitTimeoutMs: 0 } });
    try {
      const [a, b] = await Promise.all([
        post(`${router.url}/v1/chat/completions`, chatBody('first')),
        post(`${router.url}/v1/chat/completions`, chatBody('second')),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
    } finally {
      await router.close();
    }
  }, 20_000);
});

describe('when an engine streams SSE that never has an event boundary', () => {
  let server: Server;
  let url: string;
  let closedByRouter = 0;
  beforeAll(async () => {
    // data: aaaa… with no blank line, 64 KiB at a time, until the router goes away (bounded: 64 MiB at most).
    const chunk = Buffer.from('a'.repeat(64 * 1024));
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.method === 'GET') {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: ');
        let sent = 0;
        res.once('close', () => closedByRouter++);
        const pump = (): void => {
          while (!res.destroyed && sent < 1024 && res.write(chunk)) sent++;
          if (!res.destroyed && sent < 1024) res.once('drain', pump);
        };
        pump();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );

  it(`GIVEN more than ${MAX_SSE_EVENT_BYTES} bytes without a boundary THEN the client gets none of them, then an error event and [DONE], and the upstream is closed`, async () => {
    const router = await routerFor(url, {});
    try {
      const res = await request(`${router.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chatBody('stream', { stream: true }),
      });
      expect(res.statusCode).toBe(200);
      const text = await res.body.text();
      expect(text.length).toBeLessThan(1024);
      expect(text).toMatch(/^data: \{"error":\{.*\}\}\n\ndata: \[DONE\]\n\n$/);
      expect(JSON.parse(text.split('\n')[0].slice('data: '.length)).error).toMatchObject({
        code: 'upstream_stream_failed',
        message: expect.stringContaining('SSE_EVENT_TOO_LARGE'),
      });
      const deadline = Date.now() + 5_000;
      while (closedByRouter === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(closedByRouter).toBe(1);
    } finally {
      await router.close();
    }
  }, 20_000);

  it('GIVEN the aligner at its bound THEN one byte more without a boundary throws, and whole events still pass', () => {
    const aligner = new SseEventAligner(16);
    expect(aligner.push(Buffer.from('data: 1\n\ndata: 0123456789')).toString()).toBe('data: 1\n\n');
    expect(aligner.hasPartialEvent).toBe(true); // 16 bytes held: at the bound
    expect(() => aligner.push(Buffer.from('0'))).toThrow(SseEventTooLargeError);
    expect(aligner.hasPartialEvent).toBe(false);
    expect(aligner.push(Buffer.from('data: 2\n\n')).toString()).toBe('data: 2\n\n');
  });
});
