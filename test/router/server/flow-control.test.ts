import { applyEngineArgs } from '../../../router/src/emulator/engine-args';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { startEmulator } from '../../../router/src/emulator/emulator-server';
import { startRouter, type RouterOptions, type RunningRouter } from '../../../router/src/server';

/**
 * Flow control by priority class in the live router (server/flow-gate.ts over core/flow-control.ts) and the
 * x-prefix-router-priority header, on real servers on loopback. The emulator runs 50× slower than its tiny profile's
 * hardware, so an 875-token prefill stays queued for long enough (about a second) to hold a lower class behind it.
 */
describe('when requests carry priority classes through the live router', () => {
  const started: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const s of started.reverse()) await s.close();
  });

  async function routerBefore(
    policy: 'fcfs' | 'priority',
    options: Partial<RouterOptions> = {},
  ): Promise<RunningRouter> {
    const engine = await startEmulator({
      profile: applyEngineArgs(builtinProfile('tiny'), { 'scheduling-policy': policy }),
      timeScale: 0.02,
      port: 0,
    });
    started.push(engine);
    const router = await startRouter({
      backends: [engine.url],
      policy: { name: 'round-robin' },
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 60_000 },
      ...options,
    });
    started.push(router);
    return router;
  }

  const send = (url: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    fetch(`${url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ max_tokens: 2, ...body }),
    });

  const metric = async (url: string, name: string): Promise<number> => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? NaN : Number(line.split(' ')[1]);
  };

  /** An urgent request with a long prompt, sent once the router counts its prefill as queued on the engine. */
  async function longUrgentQueued(router: RunningRouter): Promise<{ urgent: Promise<Response> }> {
    const urgent = send(router.url, { prompt: 'word '.repeat(700) });
    for (let i = 0; i < 200 && router.backends[0].queuedPrefillTokens === 0; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(router.backends[0].queuedPrefillTokens).toBeGreaterThan(0);
    return { urgent }; // wrapped: an async function returning the promise itself would wait for the answer
  }

  test('GIVEN bound 0 and an urgent prefill queued WHEN priority 1 arrives THEN it waits at the router, then is served after the urgent one', async () => {
    const router = await routerBefore('priority', { flowControlBound: 0 });
    const { urgent } = await longUrgentQueued(router);
    let lowerDoneAt = 0;
    const lower = send(router.url, { prompt: 'a short one' }, { 'x-prefix-router-priority': '1' }).then((r) => {
      lowerDoneAt = performance.now();
      return r;
    });
    for (let i = 0; i < 200 && (await metric(router.url, 'prefix_router_flow_control_waiting')) !== 1; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(await metric(router.url, 'prefix_router_flow_control_waiting')).toBe(1);
    const urgentRes = await urgent;
    const urgentDoneAt = performance.now();
    expect(urgentRes.status).toBe(200);
    expect((await lower).status).toBe(200);
    expect(lowerDoneAt).toBeGreaterThan(urgentDoneAt - 50);
    expect(await metric(router.url, 'prefix_router_flow_control_held_total')).toBe(1);
    expect(await metric(router.url, 'prefix_router_flow_control_waiting')).toBe(0);
  });

  test('GIVEN a held request WHEN its client goes away THEN it leaves the queue and nothing is sent for it', async () => {
    const router = await routerBefore('priority', { flowControlBound: 0 });
    const { urgent } = await longUrgentQueued(router);
    const abort = new AbortController();
    const lower = fetch(`${router.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-prefix-router-priority': '1' },
      body: JSON.stringify({ prompt: 'a short one', max_tokens: 2 }),
      signal: abort.signal,
    }).catch((err: Error) => err.name);
    for (let i = 0; i < 200 && (await metric(router.url, 'prefix_router_flow_control_waiting')) !== 1; i++)
      await new Promise((r) => setTimeout(r, 5));
    abort.abort();
    expect(await lower).toBe('AbortError');
    for (let i = 0; i < 200 && (await metric(router.url, 'prefix_router_flow_control_waiting')) !== 0; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(await metric(router.url, 'prefix_router_flow_control_waiting')).toBe(0);
    expect((await urgent).status).toBe(200);
    expect(router.backends[0].decisions).toBe(1);
  });

  test('GIVEN a full queue (max waiting 0) WHEN priority 1 would wait THEN 429 flow_control_full with Retry-After, counted', async () => {
    const router = await routerBefore('priority', { flowControlBound: 0, flowControlMaxWaiting: 0 });
    const { urgent } = await longUrgentQueued(router);
    const res = await send(router.url, { prompt: 'a short one', priority: 1 });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    const body = (await res.json()) as { error: { code: string; type: string } };
    expect(body.error).toMatchObject({ code: 'flow_control_full', type: 'invalid_request_error' });
    const text = await (await fetch(`${router.url}/metrics`)).text();
    expect(text).toContain('prefix_router_rejected_requests_total{code="flow_control_full"} 1');
    expect((await urgent).status).toBe(200);
  });

  test('GIVEN flow control off WHEN priority 1 arrives behind a queued prefill THEN it is routed at once', async () => {
    const router = await routerBefore('priority', { flowControlBound: 0, flowControl: 'off' });
    const { urgent } = await longUrgentQueued(router);
    expect((await send(router.url, { prompt: 'a short one', priority: 1 })).status).toBe(200);
    expect(await metric(router.url, 'prefix_router_flow_control_held_total')).toBe(0);
    expect((await urgent).status).toBe(200);
  });

  test('GIVEN an FCFS engine WHEN the header says priority 2 THEN the engine sees priority 2 in the body (its own refusal)', async () => {
    const router = await routerBefore('fcfs');
    const res = await send(router.url, { prompt: 'Hello there' }, { 'x-prefix-router-priority': '2' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      'Got priority 2 but Priority scheduling is not enabled.',
    );
  });

  test('GIVEN a body priority 0 and the header 2 THEN the body wins (an FCFS engine serves it)', async () => {
    const router = await routerBefore('fcfs');
    const res = await send(router.url, { prompt: 'Hello there', priority: 0 }, { 'x-prefix-router-priority': '2' });
    expect(res.status).toBe(200);
  });

  test.each(['abc', '1.5', '', '2000000', '0x1'])(
    'GIVEN the header %j THEN 400 invalid_priority naming the header and its range',
    async (value) => {
      const router = await routerBefore('fcfs');
      const res = await send(router.url, { prompt: 'Hello there' }, { 'x-prefix-router-priority': value });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('invalid_priority');
      expect(body.error.message).toContain('x-prefix-router-priority must be an integer in -1000000..1000000');
    },
  );
});
