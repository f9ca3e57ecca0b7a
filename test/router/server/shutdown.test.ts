import { connect } from 'node:net';
import { request } from 'undici';
import { createRouterLogger, startRouter } from '../../../router/src/server';
import { chatBody, post, startFixture, waitFor } from './helpers/router-fixture';

describe('when the router shuts down gracefully', () => {
  it('GIVEN a stream in flight THEN new requests get 503 shutting_down with Retry-After, the stream finishes, and close() resolves after it', async () => {
    const fx = await startFixture({ backends: 1, behavior: { streamChunks: 10, chunkDelayMs: 30 } });
    const streaming = post(`${fx.router.url}/v1/chat/completions`, chatBody('x', { stream: true }));
    await waitFor('the stream to start', () => fx.router.backends[0].inFlight === 1);
    let completedWhenClosed = -1;
    const closing = fx.router.close().then(() => (completedWhenClosed = fx.router.backends[0].completed));
    const ping = await request(`${fx.router.url}/ping`);
    expect(ping.statusCode).toBe(503);
    await ping.body.dump();
    const refused = await post(`${fx.router.url}/v1/chat/completions`, chatBody('new'));
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.headers.connection).toBe('close');
    expect((refused.json() as { error: { code: string } }).error.code).toBe('shutting_down');
    const res = await streaming;
    expect(res.status).toBe(200);
    expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
    await closing;
    expect(completedWhenClosed).toBe(1);
    expect(fx.router.backends[0].inFlight).toBe(0);
    await expect(request(`${fx.router.url}/ping`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await Promise.all(fx.backends.map((b) => b.close()));
  });

  it('GIVEN a stream longer than the grace period THEN it is cut at the deadline and the upstream request aborted', async () => {
    const fx = await startFixture({
      backends: 1,
      behavior: { streamChunks: 200, chunkDelayMs: 20 },
      router: { shutdownGraceMs: 150 },
    });
    const res = await request(`${fx.router.url}/v1/chat/completions`, {
      method: 'POST',
      body: chatBody('x', { stream: true }),
      headers: { 'content-type': 'application/json' },
    });
    const reading = res.body.text();
    await fx.router.close();
    // Order, not a timing bound: close() resolved while the 4-second stream was still unfinished, so the grace
    // period ended it, not the stream's own end.
    expect(fx.router.backends[0].completed).toBe(0);
    await expect(reading).rejects.toThrow('other side closed');
    await waitFor('upstream abort', () => fx.backends[0].abortedResponses === 1);
    expect(fx.router.backends[0].inFlight).toBe(0);
    await Promise.all(fx.backends.map((b) => b.close()));
  });

  it('GIVEN a request pipelined behind a stream on the same connection THEN it gets 503 shutting_down with Connection: close', async () => {
    const fx = await startFixture({ backends: 1, behavior: { streamChunks: 5, chunkDelayMs: 40 } });
    const body = chatBody('x', { stream: true });
    const one = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const socket = connect(fx.router.port, '127.0.0.1');
    let data = '';
    socket.on('data', (d) => (data += d.toString()));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(one);
    await waitFor('the stream to start', () => fx.router.backends[0].inFlight === 1);
    const closing = fx.router.close();
    socket.write(one);
    await ended;
    await closing;
    expect(data).toMatch(/^HTTP\/1\.1 200/);
    expect(data).toContain('data: [DONE]');
    const second = data.slice(data.indexOf('HTTP/1.1 503'));
    expect(second).toMatch(/^HTTP\/1\.1 503/);
    expect(second.toLowerCase()).toContain('connection: close');
    expect(second).toContain('"code":"shutting_down"');
    await Promise.all(fx.backends.map((b) => b.close()));
  });
});

describe('when the router cannot listen', () => {
  it('GIVEN a port already in use THEN startRouter rejects with EADDRINUSE', async () => {
    const fx = await startFixture({ backends: 1 });
    try {
      await expect(
        startRouter(
          { backends: [fx.backends[0].url], port: fx.router.port, healthCheck: { intervalMs: 1000 } },
          { logger: createRouterLogger('silent') },
        ),
      ).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await fx.close();
    }
  });
});
