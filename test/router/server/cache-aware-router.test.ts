import { request } from 'undici';
import { startEmulatorFleet, type RunningEmulatorFleet } from '../../../router/src/emulator/emulator-server';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { serve } from '../../../router/src/cli/serve-command';
import { INSTANCE_HEADER, startRouter, type RunningRouter } from '../../../router/src/server';
import { kvCapacityFromMetrics } from '../../../router/src/server/cache-config';

const tiny = builtinProfile('tiny');

function chatBody(model: string, system: string, user: string, stream: boolean): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    max_tokens: 4,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  });
}

function metricValue(text: string, name: string, instance: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`instance="${instance}"`));
  return line === undefined ? NaN : Number(line.split(' ').pop());
}

describe('when the router runs the cache-aware policy in front of emulated engines', () => {
  let fleet: RunningEmulatorFleet;
  let router: RunningRouter;

  beforeAll(async () => {
    fleet = await startEmulatorFleet(3, { profile: tiny, timeScale: 50 });
    router = await startRouter({
      backends: fleet.urls,
      policy: { name: 'cache-aware', blockChars: 64 },
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 60_000 },
      routingHeaders: 'all',
    });
  });

  afterAll(async () => {
    await router.close();
    await fleet.close();
  });

  test('GIVEN the engines expose vllm:cache_config_info THEN the router sizes the index from their KV capacity', () => {
    for (const b of router.backends) expect(b.kvCapacityTokens).toBe(tiny.kvCapacityBlocks * tiny.blockTokens);
  });

  test.each([true, false])(
    'GIVEN requests sharing a system prompt (stream %s) THEN they stay on one instance, the prediction is sent and compared with the engine in /metrics',
    async (stream) => {
      const system = `${stream ? 'streamed' : 'plain'} shared system prompt `.repeat(20);
      const instances: string[] = [];
      const predicted: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await request(`${router.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: chatBody(fleet.instances[0].modelName, system, `question ${i}`, stream),
        });
        await res.body.text();
        expect(res.statusCode).toBe(200);
        instances.push(router.backends.find((b) => b.name === res.headers[INSTANCE_HEADER])!.id);
        predicted.push(Number(res.headers['x-prefix-router-predicted-cached-tokens']));
      }
      expect(new Set(instances).size).toBe(1);
      expect(predicted[0]).toBe(0);
      expect(predicted[3]).toBeGreaterThan(0);
      const metrics = await (await request(`${router.url}/metrics`)).body.text();
      expect(metricValue(metrics, 'prefix_router_predicted_cached_tokens_total', instances[0])).toBeGreaterThan(0);
      expect(metricValue(metrics, 'prefix_router_delivered_cached_tokens_total', instances[0])).toBeGreaterThan(0);
      expect(metricValue(metrics, 'prefix_router_usage_prompt_tokens_total', instances[0])).toBeGreaterThan(0);
      // Every request ended: the load bookkeeping is back to zero.
      for (const b of router.backends)
        expect([b.inFlight, b.queuedPrefillTokens, b.decodeSequences]).toEqual([0, 0, 0]);
      expect(metrics).toMatch(/prefix_router_queued_prefill_tokens\{instance="[^"]+"\} 0/);
      expect(metrics).toMatch(/prefix_router_decisions_total\{policy="cache-aware",reason="cache-match"/);
    },
  );

  test('GIVEN an X-Session-Id THEN the session stays on its instance whatever the content', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const res = await request(`${router.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-id': 'conversation-7' },
        body: chatBody(fleet.instances[0].modelName, `unrelated prompt number ${i} `.repeat(10), 'hi', false),
      });
      await res.body.text();
      seen.add(String(res.headers[INSTANCE_HEADER]));
      if (i > 0) expect(res.headers['x-prefix-router-decision']).toBe('session-affinity');
    }
    expect(seen.size).toBe(1);
  });
});

describe('when serve is given a policy spec string', () => {
  test('GIVEN --policy cache-aware?blockChars=128 THEN the router runs cache-aware with that option', async () => {
    const before = { SIGTERM: process.listeners('SIGTERM'), SIGINT: process.listeners('SIGINT') };
    const running = await serve(
      {
        backend: ['http://127.0.0.1:9'],
        policy: 'cache-aware?blockChars=128&sessionHeader=x-conv',
        port: '0',
        healthIntervalMs: '0',
        logLevel: 'silent',
      },
      {},
    );
    try {
      expect(running.policy.name).toBe('cache-aware');
      expect(running.config.policy).toEqual({ name: 'cache-aware', blockChars: 128, sessionHeader: 'x-conv' });
    } finally {
      // serve() installs drain-on-signal handlers: remove only those.
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        for (const l of process.listeners(signal)) if (!before[signal].includes(l)) process.off(signal, l);
      }
      await running.close();
    }
  });
});

describe('when vllm:cache_config_info is read', () => {
  test.each([
    ['vllm:cache_config_info{block_size="16",cache_dtype="auto",num_gpu_blocks="84000",engine="0"} 1.0', 1_344_000],
    ['vllm:cache_config_info{num_gpu_blocks="10",block_size="32"} 1', 320],
    ['vllm:num_requests_running{engine="0"} 0', undefined],
    ['vllm:cache_config_info{block_size="16"} 1', undefined],
  ])('GIVEN %s THEN the capacity is %s tokens', (text, expected) => {
    expect(kvCapacityFromMetrics(`# HELP x\n${text}\n`)).toBe(expected);
  });
});
