import { createServer, type Server } from 'node:http';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRouterLogger, startRouter, type RouterOptions, type RunningRouter } from '../../../router/src/server';
import { chatBody, post } from '../server/helpers/router-fixture';

/**
 * An engine that streams without end to `"stream":true` requests (as fast as its client reads) and answers others
 * after `delayMs`; it counts the requests it holds open at once.
 */
async function startEngine(delayMs = 0): Promise<{
  url: string;
  open: () => number;
  maxOpen: () => number;
  streamsClosed: () => number;
  close: () => Promise<void>;
}> {
  let open = 0;
  let maxOpen = 0;
  let streamsClosed = 0;
  // Whole SSE events, so the router forwards each as it comes (it holds back only a partial event).
  const chunk = Buffer.from(`data: ${'a'.repeat(256 * 1024)}\n\n`);
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      open++;
      maxOpen = Math.max(maxOpen, open);
      res.once('close', () => open--);
      if (Buffer.concat(parts).toString().includes('"stream":true')) {
        res.once('close', () => streamsClosed++);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const pump = (): void => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
        return;
      }
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices":[]}'), delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: () => open,
    maxOpen: () => maxOpen,
    streamsClosed: () => streamsClosed,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function routerFor(url: string, options: Partial<RouterOptions>): Promise<RunningRouter> {
  return startRouter(
    { backends: [url], port: 0, healthCheck: { intervalMs: 0 }, ...options },
    { logger: createRouterLogger('silent') },
  );
}

/** Sends a streamed chat request and never reads the answer. */
function unreadStream(port: number): Socket {
  const body = chatBody('stream me', { stream: true });
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.pause();
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return socket;
}

describe('when clients never read their streams (--client-drain-timeout-ms)', () => {
  it('GIVEN more unread streams than the backend pool has connections THEN they are cut and a normal request is still served', async () => {
    // GIVEN a pool of 2 connections and 4 clients that never read
    const engine = await startEngine();
    const router = await routerFor(engine.url, {
      maxConnectionsPerBackend: 2,
      limits: { clientDrainTimeoutMs: 300, upstreamHeadersTimeoutMs: 5_000 },
    });
    const sockets = Array.from({ length: 4 }, () => unreadStream(router.port));
    try {
      // WHEN a normal client asks meanwhile
      const started = Date.now();
      const answer = await post(`${router.url}/v1/chat/completions`, chatBody('a normal question'));
      // THEN it is answered, the unread streams were cut and their upstream requests released
      expect(answer.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(4_000);
      const deadline = Date.now() + 4_000;
      while (engine.streamsClosed() < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(engine.streamsClosed()).toBe(4);
      expect(router.backends[0].inFlight).toBe(0);
    } finally {
      for (const s of sockets) s.destroy();
      await router.close();
      await engine.close();
    }
  });
});

describe('when a bounded flood exceeds the in-flight caps', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'router-budget-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('GIVEN --max-in-flight 4 and 20 concurrent requests THEN the engine never holds more than 4 and the rest get 503 overloaded with Retry-After', async () => {
    const engine = await startEngine(200);
    const router = await routerFor(engine.url, { limits: { maxInFlight: 4 } });
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => post(`${router.url}/v1/chat/completions`, chatBody(`flood ${i}`))),
      );
      const ok = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 503);
      expect(ok.length).toBeGreaterThanOrEqual(4);
      expect(ok.length + refused.length).toBe(20);
      expect(refused.length).toBeGreaterThan(0);
      for (const r of refused) {
        expect(r.json()).toMatchObject({ error: { code: 'overloaded' } });
        expect(r.headers['retry-after']).toBe('1');
      }
      expect(engine.maxOpen()).toBeLessThanOrEqual(4);
      // AND once the flood is over, the cap is free again
      expect((await post(`${router.url}/v1/chat/completions`, chatBody('after'))).status).toBe(200);
    } finally {
      await router.close();
      await engine.close();
    }
  });

  it('GIVEN --max-in-flight-per-client 2 THEN one key flooding gets 429 and another key is still served', async () => {
    const engine = await startEngine(1_000);
    const keys = join(dir, 'keys');
    writeFileSync(keys, 'sk-flooder\nsk-neighbour\n');
    const router = await routerFor(engine.url, { apiKeyFile: keys, limits: { maxInFlightPerClient: 2 } });
    const as = (key: string, text: string) =>
      post(`${router.url}/v1/chat/completions`, chatBody(text), {
        'content-type': 'application/json',
        authorization: `Bearer ${key}`,
      });
    try {
      const flood = Array.from({ length: 6 }, (_, i) => as('sk-flooder', `f${i}`));
      const neighbour = as('sk-neighbour', 'n');
      const [answers, other] = await Promise.all([Promise.all(flood), neighbour]);
      expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
      const limited = answers.filter((a) => a.status === 429);
      expect(limited).toHaveLength(4);
      expect(limited[0].headers['retry-after']).toBe('1');
      expect(limited[0].json()).toMatchObject({ error: { code: 'too_many_requests' } });
      expect(other.status).toBe(200);
    } finally {
      await router.close();
      await engine.close();
    }
  });
});

describe('when large bodies wait on a slow engine (--max-buffered-body-bytes)', () => {
  const MiB = 1024 * 1024;
  /** A chat body of about `bytes` bytes. */
  const bodyOf = (bytes: number, tag: string): string => chatBody(`${tag} ${'x'.repeat(bytes)}`);

  it('GIVEN two held bodies filling the budget THEN a third is refused with 503 as it arrives, and once they end the budget is free again', async () => {
    const engine = await startEngine(1_500);
    const router = await routerFor(engine.url, { limits: { maxBodyBytes: 2 * MiB, maxBufferedBodyBytes: 3 * MiB } });
    try {
      const held = [
        post(`${router.url}/v1/chat/completions`, bodyOf(1.4 * MiB, 'a')),
        post(`${router.url}/v1/chat/completions`, bodyOf(1.4 * MiB, 'b')),
      ];
      const deadline = Date.now() + 5_000;
      while (engine.open() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(engine.open()).toBe(2);

      const refused = await post(`${router.url}/v1/chat/completions`, bodyOf(1.4 * MiB, 'c'));
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.json()).toMatchObject({
        error: { code: 'overloaded', message: expect.stringContaining('busy') },
      });
      // A small request still fits beside them.
      expect((await post(`${router.url}/v1/chat/completions`, chatBody('small'))).status).toBe(200);

      expect((await Promise.all(held)).map((a) => a.status)).toEqual([200, 200]);
      expect((await post(`${router.url}/v1/chat/completions`, bodyOf(1.4 * MiB, 'd'))).status).toBe(200);
    } finally {
      await router.close();
      await engine.close();
    }
  });

  it('GIVEN a body sent without Content-Length THEN it is counted as it arrives and refused once it passes the budget', async () => {
    // The engine holds the first body for 5 s: on a loaded machine the chunked upload must still find it held.
    const engine = await startEngine(5_000);
    const router = await routerFor(engine.url, { limits: { maxBodyBytes: 2 * MiB, maxBufferedBodyBytes: 2 * MiB } });
    try {
      const held = post(`${router.url}/v1/chat/completions`, bodyOf(1.4 * MiB, 'a'));
      const deadline = Date.now() + 5_000;
      while (engine.open() < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(engine.open()).toBe(1);
      // undici sends a stream body chunked, with no Content-Length.
      const chunks = [Buffer.from(bodyOf(1.4 * MiB, 'chunked'))];
      const res = await request(`${router.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Readable.from(chunks),
      });
      expect(res.statusCode).toBe(503);
      expect(JSON.parse(await res.body.text())).toMatchObject({ error: { code: 'overloaded' } });
      expect((await held).status).toBe(200);
    } finally {
      await router.close();
      await engine.close();
    }
  });

  it('GIVEN a budget smaller than the largest body THEN the configuration is refused, naming both limits', async () => {
    await expect(
      routerFor('http://127.0.0.1:9', { limits: { maxBodyBytes: 2 * MiB, maxBufferedBodyBytes: MiB } }),
    ).rejects.toThrow(/limits\.maxBufferedBodyBytes.*limits\.maxBodyBytes/);
  });
});
