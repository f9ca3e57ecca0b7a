import { connect } from 'node:net';
import { startFakeBackend, type FakeBackend } from '../../../router/bench/fake-openai-backend';
import { createRouterLogger, startRouter, type RouterOptions, type RunningRouter } from '../../../router/src/server';
import { chatBody, post } from '../server/helpers/router-fixture';

/**
 * What a client learns from the router's answers about other users' prompts and the fleet's layout: routing
 * headers off by default, never on errors, opaque backend names, and content types never rewritten.
 */
const SECRET_PREFIX = 'Customer Jane Roe, account 4417-1234-5678-9113, asked about '.repeat(6);

async function routerWith(backends: FakeBackend[], options: Partial<RouterOptions> = {}): Promise<RunningRouter> {
  return startRouter(
    {
      backends: backends.map((b) => b.url),
      port: 0,
      healthCheck: { intervalMs: 0 },
      policy: { name: 'cache-aware', blockChars: 64 },
      ...options,
    },
    { logger: createRouterLogger('silent') },
  );
}

describe('when a client probes whether another tenant sent a prefix', () => {
  let backends: FakeBackend[];
  beforeAll(async () => {
    backends = await Promise.all([0, 1].map((i) => startFakeBackend({ name: `b${i}` })));
  });
  afterAll(() => Promise.all(backends.map((b) => b.close())));

  it('GIVEN the default (--routing-headers off) THEN no answer carries any x-prefix-router-* header, cached prefix or not', async () => {
    const router = await routerWith(backends);
    try {
      // GIVEN a victim's request was routed (its blocks are in the index)
      expect((await post(`${router.url}/v1/chat/completions`, chatBody(SECRET_PREFIX))).status).toBe(200);
      // WHEN an attacker sends the guessed prefix and an unrelated one
      const hit = await post(`${router.url}/v1/chat/completions`, chatBody(SECRET_PREFIX));
      const miss = await post(`${router.url}/v1/chat/completions`, chatBody('an unrelated guess '.repeat(20)));
      // THEN neither answer says anything about routing or the cache
      for (const answer of [hit, miss])
        expect(Object.keys(answer.headers).filter((h) => h.startsWith('x-prefix-router-'))).toEqual([]);
    } finally {
      await router.close();
    }
  });

  it('GIVEN --routing-headers all THEN a cheap request the engine rejects still carries no routing header', async () => {
    // GIVEN an engine that rejects every request (as vLLM does a bad max_tokens, before any prefill)
    const rejecting = await startFakeBackend({ name: 'rejecting', behavior: { errorStatus: 400 } });
    const router = await routerWith([rejecting], { routingHeaders: 'all' });
    try {
      await post(`${router.url}/v1/chat/completions`, chatBody(SECRET_PREFIX, { max_tokens: -1 }));
      const probe = await post(`${router.url}/v1/chat/completions`, chatBody(SECRET_PREFIX, { max_tokens: -1 }));
      // THEN the error passes through, with no predicted-cached count, instance or decision
      expect(probe.status).toBe(400);
      expect(Object.keys(probe.headers).filter((h) => h.startsWith('x-prefix-router-'))).toEqual([]);
    } finally {
      await router.close();
      await rejecting.close();
    }
  });

  it('GIVEN --routing-headers instance THEN only the opaque backend name is sent, never the URL or the prediction', async () => {
    const router = await routerWith(backends, { routingHeaders: 'instance' });
    try {
      await post(`${router.url}/v1/chat/completions`, chatBody(SECRET_PREFIX));
      const answer = await post(`${router.url}/v1/chat/completions`, chatBody(SECRET_PREFIX));
      expect(answer.headers['x-prefix-router-instance']).toMatch(/^backend-[12]$/);
      expect(answer.headers['x-prefix-router-predicted-cached-tokens']).toBeUndefined();
      expect(answer.headers['x-prefix-router-decision']).toBeUndefined();
      expect(JSON.stringify(answer.headers)).not.toContain('127.0.0.1');
    } finally {
      await router.close();
    }
  });

  it('GIVEN a backend that refuses connections THEN the error names it by neither name nor address', async () => {
    const dead = await startFakeBackend({ name: 'dead' });
    const url = dead.url;
    await dead.close();
    const router = await startRouter(
      { backends: [url], port: 0, healthCheck: { intervalMs: 0 } },
      { logger: createRouterLogger('silent') },
    );
    try {
      const answer = await post(`${router.url}/v1/chat/completions`, chatBody('x'));
      expect(answer.status).toBe(502);
      expect(answer.text).not.toContain('backend-1');
      expect(answer.text).not.toContain(new URL(url).port);
    } finally {
      await router.close();
    }
  });
});

describe('when a request declares a content type', () => {
  let backend: FakeBackend;
  let router: RunningRouter;
  beforeAll(async () => {
    backend = await startFakeBackend({ name: 'ct' });
    router = await startRouter(
      { backends: [backend.url], port: 0, healthCheck: { intervalMs: 0 } },
      { logger: createRouterLogger('silent') },
    );
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
    'GIVEN %s (what a web page can post without a preflight) on an OpenAI route THEN 415, and nothing reaches the engine',
    async (type) => {
      const before = backend.requests.length;
      const answer = await post(`${router.url}/v1/chat/completions`, chatBody('csrf'), { 'content-type': type });
      expect(answer.status).toBe(415);
      expect(answer.json()).toMatchObject({ error: { code: 'unsupported_media_type' } });
      expect(backend.requests.length).toBe(before);
    },
  );

  it('GIVEN no content type on an OpenAI route THEN 415', async () => {
    const answer = await post(`${router.url}/v1/completions`, JSON.stringify({ model: 'm', prompt: 'x' }), {});
    expect(answer.status).toBe(415);
  });

  it.each(['application/json', 'application/json; charset=utf-8', 'application/vnd.api+json'])(
    'GIVEN %s THEN it is served and forwarded as sent',
    async (type) => {
      const answer = await post(`${router.url}/v1/chat/completions`, chatBody('ok'), { 'content-type': type });
      expect(answer.status).toBe(200);
      expect(backend.requests.at(-1)!.headers['content-type']).toBe(type);
    },
  );

  it('GIVEN a header named in Connection THEN the engine never sees it (RFC 9110 §7.6.1)', async () => {
    // undici refuses to send a Connection header itself; a raw socket does.
    const body = chatBody('hop');
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
        `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, X-Internal-Secret\r\nX-Internal-Secret: s3cret\r\nX-Kept: yes\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    const seen = backend.requests.at(-1)!.headers;
    expect(seen['x-internal-secret']).toBeUndefined();
    expect(seen['x-kept']).toBe('yes');
  });
});
