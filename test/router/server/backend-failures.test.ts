import OpenAI from 'openai';
import { request } from 'undici';
import { rendezvousRanking, type SageMakerPrefixAwarePolicy } from '../../../router/src/policy';
import { INSTANCE_HEADER } from '../../../router/src/server';
import { chatBody, closedPortUrl, get, post, startFixture, waitFor, type Fixture } from './helpers/router-fixture';

function chatRouting(text: string) {
  return {
    model: 'fake-model',
    api: 'chat' as const,
    keyBasis: 'message-text' as const,
    routingText: `${text}question`,
    stream: false,
  };
}

/** A system text whose rendezvous ranking over `ids` starts with `first`. */
function textRankedFirstOn(
  policy: SageMakerPrefixAwarePolicy,
  ids: string[],
  first: string,
): { text: string; ranking: string[] } {
  const views = ids.map((id) => ({ id, healthy: true, inFlight: 0 }));
  for (let i = 0; i < 1000; i++) {
    const text = `prompt number ${i}`;
    const ranking = rendezvousRanking(policy.routingKey(chatRouting(text)), views).map((v) => v.id);
    if (ranking[0] === first) return { text, ranking };
  }
  throw new Error('no prompt found');
}

function expectAllReleased(fx: Fixture): void {
  expect(fx.router.backends.map((b) => b.inFlight)).toEqual(fx.router.backends.map(() => 0));
}

describe('when a backend refuses the connection', () => {
  it('GIVEN the affinity instance is down THEN the request is retried once on the next rendezvous choice and succeeds', async () => {
    const dead = await closedPortUrl();
    const fx = await startFixture({ backends: 2, extraBackendUrls: [dead] });
    try {
      const ids = fx.router.backends.map((b) => b.id);
      const { text, ranking } = textRankedFirstOn(fx.router.policy as SageMakerPrefixAwarePolicy, ids, dead);
      const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody(text));
      expect(res.status).toBe(200);
      expect(res.headers[INSTANCE_HEADER]).toBe(fx.router.backends.find((b) => b.id === ranking[1])!.name);
      const deadStats = fx.router.backends.find((b) => b.id === dead)!;
      expect(deadStats).toMatchObject({ decisions: 1, failed: 1, completed: 0, inFlight: 0 });
      const metrics = (await get(`${fx.router.url}/metrics`)).text;
      expect(metrics).toContain(`prefix_router_retries_total{instance="${dead}"} 1`);
      expectAllReleased(fx);
    } finally {
      await fx.close();
    }
  });

  it('GIVEN every backend is down THEN 502 upstream_connect_failed after one retry', async () => {
    const fx = await startFixture({ backends: 0, extraBackendUrls: [await closedPortUrl(), await closedPortUrl()] });
    try {
      const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody('x'));
      expect(res.status).toBe(502);
      expect(res.json()).toMatchObject({ error: { code: 'upstream_connect_failed', type: 'upstream_error' } });
      expect(fx.router.backends.map((b) => b.decisions)).toEqual([1, 1]);
      expectAllReleased(fx);
    } finally {
      await fx.close();
    }
  });

  it('GIVEN the only backend is down THEN 502 saying no other instance was available', async () => {
    const dead = await closedPortUrl();
    const fx = await startFixture({ backends: 0, extraBackendUrls: [dead] });
    try {
      const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody('x'));
      expect(res.status).toBe(502);
      expect(res.json()).toMatchObject({
        error: {
          code: 'upstream_connect_failed',
          message: 'the model instance backend-1 refused the connection and no other healthy instance is available',
        },
      });
      expect(res.headers['retry-after']).toBe('1');
    } finally {
      await fx.close();
    }
  });
});

describe('when a backend fails after accepting the request', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await startFixture({ backends: 2, router: { limits: { upstreamHeadersTimeoutMs: 300 } } });
  });
  afterEach(async () => {
    expectAllReleased(fx);
    await fx.close();
  });

  it('GIVEN a stream cut after two chunks THEN the openai client receives them and then a terminal error event', async () => {
    for (const b of fx.backends) b.behavior.failAfterChunks = 2;
    const client = new OpenAI({ baseURL: `${fx.router.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const parts: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) parts.push(chunk.choices[0]?.delta?.content ?? '');
    })().catch((e: unknown) => e);
    expect(parts.join('')).toMatch(/^hello from b\d 1$/);
    expect(error).toMatchObject({ code: 'upstream_stream_failed', type: 'upstream_error' });
    const metrics = (await get(`${fx.router.url}/metrics`)).text;
    expect(metrics).toMatch(/prefix_router_requests_total\{[^}]*status="stream_error"\} 1/);
  });

  it('GIVEN a non-streamed body cut in half THEN the client connection is cut instead of a silent short body', async () => {
    for (const b of fx.backends) b.behavior.truncateBody = true;
    const res = await request(`${fx.router.url}/v1/chat/completions`, {
      method: 'POST',
      body: chatBody('x'),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(200);
    await expect(res.body.text()).rejects.toThrow('other side closed');
  });

  it('GIVEN a backend that never answers THEN 504 upstream_timeout and the upstream request is abandoned', async () => {
    for (const b of fx.backends) b.behavior.hang = true;
    const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody('x'));
    expect(res.status).toBe(504);
    expect(res.json()).toMatchObject({ error: { code: 'upstream_timeout' } });
    // Routing headers are never on error answers, whatever --routing-headers says.
    expect(res.headers[INSTANCE_HEADER]).toBeUndefined();
    await waitFor('the backend to see the abandoned request', () => fx.backends.some((b) => b.abortedResponses === 1));
  });

  it('GIVEN a connection reset after the request was sent THEN 502 upstream_error, not retried', async () => {
    for (const b of fx.backends) b.behavior.resetOnRequest = true;
    const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody('x'));
    expect(res.status).toBe(502);
    expect(res.json()).toMatchObject({ error: { code: 'upstream_error' } });
    expect(fx.router.backends.reduce((n, b) => n + b.decisions, 0)).toBe(1);
  });

  it('GIVEN a backend error status on an OpenAI path THEN it is passed through unchanged', async () => {
    for (const b of fx.backends) b.behavior.errorStatus = 429;
    const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody('x'));
    expect(res.status).toBe(429);
    expect(res.json()).toMatchObject({ error: { code: 'fake' } });
  });
});

describe('when the client goes away mid-stream', () => {
  it('GIVEN an aborted streaming request THEN in-flight is released and the upstream request is aborted', async () => {
    const fx = await startFixture({ backends: 1, behavior: { streamChunks: 200, chunkDelayMs: 20 } });
    try {
      const abort = new AbortController();
      const res = await request(`${fx.router.url}/v1/chat/completions`, {
        method: 'POST',
        body: chatBody('x', { stream: true }),
        headers: { 'content-type': 'application/json' },
        signal: abort.signal,
      });
      const reader = res.body[Symbol.asyncIterator]();
      await reader.next();
      expect(fx.router.backends[0].inFlight).toBe(1);
      abort.abort();
      await waitFor('in-flight release', () => fx.router.backends[0].inFlight === 0);
      await waitFor('upstream abort', () => fx.backends[0].abortedResponses === 1);
      const metrics = (await get(`${fx.router.url}/metrics`)).text;
      expect(metrics).toMatch(/prefix_router_requests_total\{[^}]*status="499"\} 1/);
    } finally {
      await fx.close();
    }
  });

  it('GIVEN concurrent streams THEN in-flight counts them while open and returns to zero', async () => {
    const fx = await startFixture({ backends: 1, behavior: { streamChunks: 5, chunkDelayMs: 40 } });
    try {
      const all = Array.from({ length: 5 }, (_, i) =>
        post(`${fx.router.url}/v1/chat/completions`, chatBody(`c${i}`, { stream: true })),
      );
      await waitFor('five in flight', () => fx.router.backends[0].inFlight === 5);
      const results = await Promise.all(all);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(fx.router.backends[0]).toMatchObject({ inFlight: 0, completed: 5 });
    } finally {
      await fx.close();
    }
  });
});

describe('when health checks run', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await startFixture({
      backends: 2,
      router: { healthCheck: { intervalMs: 50, timeoutMs: 200, failureThreshold: 2, recoveryThreshold: 2 } },
    });
  });
  afterEach(() => fx.close());

  async function instancesFor(n: number): Promise<Set<string>> {
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) {
      const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody(`distinct ${i} ${Math.random()}`));
      expect(res.status).toBe(200);
      seen.add(res.headers[INSTANCE_HEADER] as string);
    }
    return seen;
  }

  it('GIVEN a backend failing its checks THEN it is ejected, gets no traffic, and is re-admitted when it recovers', async () => {
    expect(fx.router.backends.map((b) => b.health)).toEqual(['healthy', 'healthy']);
    fx.backends[0].behavior.healthStatus = 503;
    await waitFor('ejection', () => fx.router.backends[0].health === 'ejected');
    expect(await instancesFor(12)).toEqual(new Set([fx.router.backends[1].name]));
    const metrics = (await get(`${fx.router.url}/metrics`)).text;
    expect(metrics).toContain(`prefix_router_backend_healthy{instance="${fx.backends[0].url}"} 0`);
    expect((await get(`${fx.router.url}/ping`)).status).toBe(200);
    fx.backends[0].behavior.healthStatus = 200;
    await waitFor('re-admission', () => fx.router.backends[0].health === 'healthy');
    expect((await instancesFor(20)).size).toBe(2);
  });

  it('GIVEN every backend ejected THEN 503 no_healthy_backend with Retry-After, and /ping is 503', async () => {
    for (const b of fx.backends) b.behavior.healthStatus = 500;
    await waitFor('ejection of all', () => fx.router.backends.every((b) => b.health === 'ejected'));
    const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody('x'));
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toMatchObject({ error: { code: 'no_healthy_backend', type: 'server_error' } });
    expect((await get(`${fx.router.url}/ping`)).status).toBe(503);
    expect((await get(`${fx.router.url}/v1/models`)).status).toBe(503);
  });
});
