import { chatBody, get, post, startFixture } from './helpers/router-fixture';

describe('when metrics are scraped', () => {
  it('GIVEN routed requests THEN /metrics has requests, decisions, in-flight, decision time, upstream TTFT and health per instance', async () => {
    const fx = await startFixture({ backends: 2 });
    try {
      for (let i = 0; i < 6; i++)
        await post(`${fx.router.url}/v1/chat/completions`, chatBody(`p${i}`, { stream: i % 2 === 0 }));
      const res = await get(`${fx.router.url}/metrics`);
      expect(res.headers['content-type']).toContain('text/plain');
      const text = res.text;
      const ids = fx.backends.map((b) => b.url);
      expect(text).toMatch(
        new RegExp(
          `prefix_router_requests_total\\{policy="sagemaker-prefix-aware",reason="prefix-affinity",instance="(${ids.join('|')})",status="200"\\} \\d+`,
        ),
      );
      expect(text).toMatch(
        /prefix_router_decisions_total\{policy="sagemaker-prefix-aware",reason="prefix-affinity",instance="[^"]+"\} \d+/,
      );
      for (const id of ids) {
        expect(text).toContain(`prefix_router_in_flight_requests{instance="${id}"} 0`);
        expect(text).toContain(`prefix_router_backend_healthy{instance="${id}"} 1`);
      }
      expect(text).toContain(
        'prefix_router_decision_duration_seconds_bucket{le="0.000001",policy="sagemaker-prefix-aware"}',
      );
      expect(text).toContain('prefix_router_decision_duration_seconds_count{policy="sagemaker-prefix-aware"} 6');
      expect(text).toMatch(/prefix_router_upstream_ttft_seconds_count\{instance="[^"]+"\} \d+/);
    } finally {
      await fx.close();
    }
  });

  it('GIVEN two routers in one process THEN each serves only its own metrics', async () => {
    const a = await startFixture({ backends: 1 });
    const b = await startFixture({ backends: 1 });
    try {
      await post(`${a.router.url}/v1/chat/completions`, chatBody('x'));
      const textB = (await get(`${b.router.url}/metrics`)).text;
      expect(textB).not.toContain(a.backends[0].url);
      expect(textB).toContain(b.backends[0].url);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('when the router logs', () => {
  it('GIVEN debug logging THEN lines are JSON and never contain prompt text or the tenant header value', async () => {
    const fx = await startFixture({ backends: 2, captureLogs: true });
    try {
      const secret = 'TOP-SECRET-PROMPT-7f3a';
      const tenant = 'tenant-secret-91c2';
      await post(`${fx.router.url}/v1/chat/completions`, chatBody(secret), {
        'content-type': 'application/json',
        'x-amzn-sagemaker-prefix-aware-id': tenant,
      });
      await post(`${fx.router.url}/v1/completions`, JSON.stringify({ prompt: secret, stream: true }));
      await post(`${fx.router.url}/v1/chat/completions`, `{"messages": "${secret}"}`);
      await post(`${fx.router.url}/invocations`, JSON.stringify({ inputs: secret }));
      await post(`${fx.router.url}/v1/chat/completions`, chatBody(secret), {
        'content-type': 'application/json',
        'x-amzn-sagemaker-prefix-aware-id': `${tenant}${'!'.repeat(80)}`,
      });
      expect(fx.logs.filter((l) => l.includes('"request routed"'))).toHaveLength(3);
      expect(fx.logs.filter((l) => l.includes('"request rejected"'))).toHaveLength(2);
      for (const line of fx.logs) {
        expect(() => JSON.parse(line)).not.toThrow();
        expect(line).not.toContain(secret);
        expect(line).not.toContain(tenant);
      }
    } finally {
      await fx.close();
    }
  });
});
