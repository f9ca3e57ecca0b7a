import { request } from 'undici';
import { startEmulatorFleet, type RunningEmulatorFleet } from '../../../router/src/emulator/emulator-server';
import { builtinProfile, type EngineProfile } from '../../../router/src/emulator/engine-profile';
import { startRouter, type RunningRouter } from '../../../router/src/server';

/**
 * A live fleet of two engines, one three times slower in every step (a mixed fleet in miniature): with
 * --learn-prefill-speeds on, the router learns from the TTFTs it observes that the second prefills slower.
 */
const tiny = builtinProfile('tiny');
// Room for 3,000-token prompts (the estimator ignores samples under 2,048 tokens).
const fast: EngineProfile = { ...tiny, name: 'tiny-roomy', kvCapacityBlocks: 1024, maxModelLen: 8192 };
const slow: EngineProfile = {
  ...fast,
  name: 'tiny-roomy-slow',
  stepTime: {
    ...fast.stepTime,
    usPerScheduledToken: fast.stepTime.usPerScheduledToken * 3,
    attentionNsPerTokenPair: fast.stepTime.attentionNsPerTokenPair * 3,
    baseMs: fast.stepTime.baseMs * 3,
  },
};

async function send(router: RunningRouter, model: string, i: number): Promise<void> {
  const res = await request(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    // ~3,000 tokens (4 characters each), different on every request.
    body: JSON.stringify({
      model,
      stream: true,
      max_tokens: 2,
      messages: [{ role: 'user', content: `${i} `.padEnd(12_000, `w${i} `) }],
    }),
  });
  await res.body.text();
  expect(res.statusCode).toBe(200);
}

describe('when the live router learns prefill speeds', () => {
  let fleet: RunningEmulatorFleet;
  beforeAll(async () => {
    fleet = await startEmulatorFleet(2, { profiles: [fast, slow], timeScale: 1 });
  });
  afterAll(async () => {
    await fleet.close();
  });

  test('GIVEN --learn-prefill-speeds on and alternating requests THEN the slower engine is estimated slower', async () => {
    const router = await startRouter({
      backends: fleet.urls,
      policy: { name: 'round-robin' },
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 60_000 },
      learnPrefillSpeeds: 'on',
    });
    try {
      for (let i = 0; i < 8; i++) await send(router, fleet.instances[0].modelName, i);
      const [a, b] = router.backends;
      expect(a.prefillTokensPerSecond).toBeDefined();
      expect(b.prefillTokensPerSecond).toBeDefined();
      // Three times slower per token; the fixed parts of a TTFT (HTTP, loopback) pull the ratio towards 1, never past it.
      expect(b.prefillTokensPerSecond! / a.prefillTokensPerSecond!).toBeLessThan(0.75);
    } finally {
      await router.close();
    }
  }, 60_000);

  test('GIVEN the default (off) THEN nothing is learned', async () => {
    const router = await startRouter({
      backends: fleet.urls,
      policy: { name: 'round-robin' },
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 60_000 },
    });
    try {
      for (let i = 0; i < 2; i++) await send(router, fleet.instances[0].modelName, i);
      expect(router.backends.map((b) => b.prefillTokensPerSecond)).toEqual([undefined, undefined]);
    } finally {
      await router.close();
    }
  }, 60_000);
});
