import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { createRouterLogger, startRouter, type RunningRouter } from '../../../router/src/server';
import { chatBody, post } from '../server/helpers/router-fixture';

/**
 * Issue 41, lesser findings: an SSE answer forwarded with the backend's Content-Length though the router re-cuts it;
 * a backend's 103 Early Hints leaving the client with nothing; backend Set-Cookie and x-prefix-router-* headers passed
 * to clients; /metrics naming backend URLs to any client key; a key accepted with U+00A0 around it.
 */
const KEY = 'sk-tenant-alpha-0123456789';
const SSE = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n';

/** An engine whose answer shape the request's user message picks. */
async function startOddEngine(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString();
      if (body.includes('sse-with-length')) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': Buffer.byteLength(SSE) });
        res.end(SSE);
      } else if (body.includes('early-hints')) {
        res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices":[]}');
      } else {
        res.writeHead(200, {
          'content-type': 'application/json',
          'set-cookie': 'session=engine-secret; Path=/',
          'x-prefix-router-instance': 'backend-7',
          'x-prefix-router-predicted-cached-tokens': '4096',
        });
        res.end('{"choices":[]}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('when a backend answers in ways a client must not see', () => {
  let dir: string;
  let engine: { server: Server; url: string };
  let router: RunningRouter;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'backend-answers-'));
    writeFileSync(join(dir, 'keys'), `${KEY}\n`);
    engine = await startOddEngine();
    router = await startRouter(
      { backends: [engine.url], port: 0, healthCheck: { intervalMs: 0 }, apiKeyFile: join(dir, 'keys') },
      { logger: createRouterLogger('silent') },
    );
  });
  afterAll(async () => {
    await router.close();
    engine.server.closeAllConnections();
    await new Promise<void>((r) => engine.server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('GIVEN an SSE answer with Content-Length THEN it is re-framed without it, whole, and the connection reused', async () => {
    for (let i = 0; i < 2; i++) {
      const answer = await post(`${router.url}/v1/chat/completions`, chatBody('sse-with-length'), headers);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-length']).toBeUndefined();
      expect(answer.text).toBe(SSE);
    }
  });

  it('GIVEN a 103 Early Hints before the answer THEN the client gets the final answer', async () => {
    const answer = await post(`${router.url}/v1/chat/completions`, chatBody('early-hints'), headers);
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('{"choices":[]}');
  });

  it("GIVEN a backend's Set-Cookie and x-prefix-router-* headers THEN neither reaches the client", async () => {
    const answer = await post(`${router.url}/v1/chat/completions`, chatBody('plain'), headers);
    expect(answer.status).toBe(200);
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(Object.keys(answer.headers).filter((h) => h.startsWith('x-prefix-router-'))).toEqual([]);
  });

  it('GIVEN /metrics on the main port THEN it needs a key, and names backends only as backend-N', async () => {
    expect((await request(`${router.url}/metrics`)).statusCode).toBe(401);
    const metrics = await request(`${router.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(metrics.statusCode).toBe(200);
    const text = await metrics.body.text();
    expect(text).toContain('instance="backend-1"');
    expect(text).not.toContain(new URL(engine.url).host);
  });

  it.each([
    ['U+00A0 after the key', 401, Buffer.from([0xa0])],
    ['a space and a tab after the key', 200, Buffer.from(' \t')],
  ])('GIVEN x-prefix-router-api-key with %s THEN %i', async (_what, status, tail) => {
    const body = chatBody('whitespace');
    const socket = connect(router.port, '127.0.0.1');
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      socket.on('data', (d) => {
        text += d.toString('latin1');
        if (text.includes('\r\n\r\n')) socket.end();
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.write(
        Buffer.concat([
          Buffer.from(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nx-prefix-router-api-key: ${KEY}`),
          tail,
          Buffer.from(
            `\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
          ),
        ]),
      );
    });
    expect(answer.slice(0, 12)).toBe(`HTTP/1.1 ${status}`);
  });
});
