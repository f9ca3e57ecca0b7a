import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGzip, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { createRouterLogger, startRouter } from '../../../router/src/server';
import { chatBody, startFixture } from './helpers/router-fixture';

describe('when responses stream through the router', () => {
  it('GIVEN a slow SSE stream THEN each event reaches the client while the backend is still streaming', async () => {
    const fx = await startFixture({ backends: 1, behavior: { streamChunks: 4, chunkDelayMs: 150 } });
    try {
      const res = await request(`${fx.router.url}/v1/chat/completions`, {
        method: 'POST',
        body: chatBody('x', { stream: true }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.headers['content-type']).toBe('text/event-stream');
      const events: Array<{ text: string; backendStillOpen: boolean }> = [];
      for await (const chunk of res.body)
        events.push({ text: chunk.toString(), backendStillOpen: fx.backends[0].openResponses === 1 });
      expect(events.length).toBeGreaterThanOrEqual(4);
      expect(events.slice(0, 3).every((e) => e.backendStillOpen)).toBe(true);
      expect(events.slice(0, 3).every((e) => e.text.startsWith('data: ') && e.text.endsWith('\n\n'))).toBe(true);
    } finally {
      await fx.close();
    }
  });

  it('GIVEN a client that reads slowly THEN the upstream is paused and resumed and no event is lost', async () => {
    // ~9 MB of events: more than the socket buffers between router and client hold, so the router must pause.
    const fx = await startFixture({ backends: 1, behavior: { streamChunks: 60_000 } });
    try {
      const res = await request(`${fx.router.url}/v1/chat/completions`, {
        method: 'POST',
        body: chatBody('x', { stream: true }),
        headers: { 'content-type': 'application/json' },
      });
      await new Promise((r) => setTimeout(r, 300)); // buffers fill up while nobody reads
      const text = await res.body.text();
      expect(text.split('\n\n').filter((e) => e.startsWith('data: {')).length).toBe(60_001);
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(fx.router.backends[0]).toMatchObject({ inFlight: 0, completed: 1 });
    } finally {
      await fx.close();
    }
  });

  it('GIVEN a gzip-compressed SSE stream THEN compressed bytes are passed on as they come, not held for event boundaries', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const backend: Server = createServer((req, res: ServerResponse) => {
      req.resume();
      if (req.url === '/health') {
        res.end('{}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      const gzip = createGzip();
      gzip.pipe(res);
      gzip.write('data: {"first":true}\n\n');
      gzip.flush();
      void released.then(() => gzip.end('data: [DONE]\n\n'));
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const router = await startRouter(
      {
        backends: [`http://127.0.0.1:${(backend.address() as AddressInfo).port}`],
        port: 0,
        healthCheck: { intervalMs: 0 },
      },
      { logger: createRouterLogger('silent') },
    );
    try {
      const res = await request(`${router.url}/v1/chat/completions`, {
        method: 'POST',
        body: chatBody('x', { stream: true }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.headers['content-encoding']).toBe('gzip');
      const chunks: Buffer[] = [];
      const iterator = res.body[Symbol.asyncIterator]();
      chunks.push((await iterator.next()).value as Buffer); // arrives before the backend is released
      release();
      for (let next = await iterator.next(); !next.done; next = await iterator.next())
        chunks.push(next.value as Buffer);
      expect(gunzipSync(Buffer.concat(chunks)).toString()).toBe('data: {"first":true}\n\ndata: [DONE]\n\n');
    } finally {
      await router.close();
      await new Promise<void>((resolve) => backend.close(() => resolve()));
    }
  });
});
