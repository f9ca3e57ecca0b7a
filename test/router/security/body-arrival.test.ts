import { connect, type Socket } from 'node:net';
import { startFakeBackend, type FakeBackend } from '../../../router/bench/fake-openai-backend';
import { createRouterLogger, startRouter, type RunningRouter } from '../../../router/src/server';
import { chatBody, post } from '../server/helpers/router-fixture';

/**
 * Issue 41, finding 3: the body budget was reserved from the declared Content-Length, so a few headers-only
 * requests declaring a body near the limit locked every other client out with 503 for the whole body timeout, and
 * the 503 told them the budget's figures. Bodies are now charged as their bytes arrive, a body that stops coming is
 * cut after the idle-body timeout, and the 503 says only that the router is busy.
 */
const MiB = 1024 * 1024;

/** Sends a request's headers declaring `contentLength` body bytes, then `sent` of them, and stays silent. */
function declaredBody(port: number, contentLength: number, sent = ''): { socket: Socket; answer: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let text = '';
  const answer = new Promise<string>((resolve) => {
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('close', () => resolve(text));
  });
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n${sent}`,
  );
  return { socket, answer };
}

describe('when clients declare bodies they do not send', () => {
  let backend: FakeBackend;
  let router: RunningRouter;
  beforeAll(async () => {
    backend = await startFakeBackend({ name: 'b' });
    router = await startRouter(
      {
        backends: [backend.url],
        port: 0,
        healthCheck: { intervalMs: 0 },
        limits: { maxBodyBytes: 2 * MiB, maxBufferedBodyBytes: 3 * MiB, bodyIdleTimeoutMs: 400 },
      },
      { logger: createRouterLogger('silent') },
    );
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
  });

  it('GIVEN headers-only requests declaring twice the budget THEN another client is still served', async () => {
    const idle = [0, 1, 2, 3].map(() => declaredBody(router.port, 2 * MiB - 1));
    try {
      await new Promise((r) => setTimeout(r, 100));
      const answer = await post(`${router.url}/v1/chat/completions`, chatBody('an honest request'));
      expect(answer.status).toBe(200);
    } finally {
      for (const { socket } of idle) socket.destroy();
    }
  });

  it('GIVEN a body that stops arriving THEN 408 after the idle-body timeout, long before the body timeout', async () => {
    const started = Date.now();
    const { answer } = declaredBody(router.port, 1000, '{"model":');
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toContain('request_timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('when a body keeps arriving too slowly', () => {
  it('GIVEN a byte every 100 ms (never idle for 300 ms) THEN 408 once the 600 ms body timeout has passed', async () => {
    const backend = await startFakeBackend({ name: 'b' });
    const router = await startRouter(
      {
        backends: [backend.url],
        port: 0,
        healthCheck: { intervalMs: 0 },
        limits: { bodyTimeoutMs: 600, bodyIdleTimeoutMs: 300 },
      },
      { logger: createRouterLogger('silent') },
    );
    const started = Date.now();
    const { socket, answer } = declaredBody(router.port, 1000, '{');
    let sent = 0;
    // At most 40 bytes (4 s): far past the timeout, and the loop ends with the connection in any case.
    const trickle = setInterval(
      () => (++sent > 40 || socket.destroyed ? clearInterval(trickle) : socket.write(' ')),
      100,
    );
    try {
      const text = await answer;
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
      expect(text).toContain('request body not received within 600 ms');
      expect(Date.now() - started).toBeGreaterThanOrEqual(550);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      clearInterval(trickle);
      socket.destroy();
      await router.close();
      await backend.close();
    }
  });
});

describe('when the body budget is full', () => {
  it('GIVEN a body that does not fit THEN 503 says the router is busy, with no figure of its budget', async () => {
    // A silent engine holds the first body until the answer, so the second does not fit beside it.
    const backend = await startFakeBackend({ name: 'slow', behavior: { responseDelayMs: 1_000 } });
    const router = await startRouter(
      {
        backends: [backend.url],
        port: 0,
        healthCheck: { intervalMs: 0 },
        limits: { maxBodyBytes: 1.5 * MiB, maxBufferedBodyBytes: 2 * MiB },
      },
      { logger: createRouterLogger('silent') },
    );
    try {
      const held = post(`${router.url}/v1/chat/completions`, chatBody('a'.repeat(1.2 * MiB)));
      await new Promise((r) => setTimeout(r, 300));
      const refused = await post(`${router.url}/v1/chat/completions`, chatBody('b'.repeat(1.2 * MiB)));
      expect(refused.status).toBe(503);
      expect(refused.json()).toMatchObject({ error: { code: 'overloaded' } });
      expect(refused.text).not.toMatch(/\d{4,}/);
      expect((await held).status).toBe(200);
    } finally {
      await router.close();
      await backend.close();
    }
  });
});
