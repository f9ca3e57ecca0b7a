import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeBackend, type FakeBackend } from '../../../router/bench/fake-openai-backend';
import { startEmulator, type RunningEmulator } from '../../../router/src/emulator/emulator-server';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { withCacheSalt } from '../../../router/src/server/engine-cache-salt';
import { createRouterLogger, startRouter, type RouterOptions, type RunningRouter } from '../../../router/src/server';
import { chatBody, post } from '../server/helpers/router-fixture';

/**
 * Issue 41, finding 1: a client steered cheap rejected probes to each instance by the name errors gave, then read
 * another key's cached prompt from the engine's own `cached_tokens`. Errors no longer name instances (unless routing
 * headers are on), and with API keys each key's requests are salted in the engine (vLLM `cache_salt`).
 */
const VICTIM_PROMPT = 'Customer Jane Roe, account 4417-1234-5678-9113, asked about her mortgage. '.repeat(12);
const KEY_A = 'sk-tenant-alpha-0123456789';
const KEY_B = 'sk-tenant-bravo-9876543210';
const INSTANCE_NAME = /backend-\d/;

function quiet(options: RouterOptions): Promise<RunningRouter> {
  return startRouter(options, { logger: createRouterLogger('silent') });
}

describe('when an upstream request fails and routing headers are off', () => {
  const cases: Array<[string, Partial<FakeBackend['behavior']>, string, number]> = [
    ['the engine rejects it (model error, runtime API)', { errorStatus: 400 }, '/endpoints/ep/invocations', 424],
    ['the engine resets the connection', { resetOnRequest: true }, '/v1/chat/completions', 502],
    ['the engine does not answer in time', { hang: true }, '/v1/chat/completions', 504],
  ];
  it.each(cases)('GIVEN %s THEN neither body nor headers name the instance', async (_what, behavior, path, status) => {
    const backend = await startFakeBackend({ name: 'b', behavior });
    const router = await quiet({
      backends: [backend.url],
      port: 0,
      healthCheck: { intervalMs: 0 },
      limits: { upstreamHeadersTimeoutMs: 300 },
    });
    try {
      const answer = await post(`${router.url}${path}`, chatBody(VICTIM_PROMPT, { max_tokens: -1 }));
      expect(answer.status).toBe(status);
      expect(answer.text).not.toMatch(INSTANCE_NAME);
      expect(JSON.stringify(answer.headers)).not.toMatch(INSTANCE_NAME);
    } finally {
      await router.close();
      await backend.close();
    }
  });

  it('GIVEN the only engine refuses connections THEN the error does not name it; with --routing-headers instance it does', async () => {
    const dead = await startFakeBackend({ name: 'dead' });
    const url = dead.url;
    await dead.close();
    for (const routingHeaders of ['off', 'instance'] as const) {
      const router = await quiet({ backends: [url], port: 0, healthCheck: { intervalMs: 0 }, routingHeaders });
      try {
        const answer = await post(`${router.url}/v1/chat/completions`, chatBody('x'));
        expect(answer.status).toBe(502);
        if (routingHeaders === 'off') expect(answer.text).not.toMatch(INSTANCE_NAME);
        else expect(answer.text).toContain('backend-1');
        expect(answer.text).not.toContain(new URL(url).port);
      } finally {
        await router.close();
      }
    }
  });
});

describe('when two API keys send the same prompt to one engine', () => {
  let dir: string;
  let engine: RunningEmulator;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engine-isolation-'));
    writeFileSync(join(dir, 'keys'), `${KEY_A}\n${KEY_B}\n`);
    engine = await startEmulator({ profile: builtinProfile('tiny'), timeScale: 50, port: 0, seed: 1 });
  });
  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function cachedTokens(router: RunningRouter, key: string, extra: Record<string, unknown> = {}) {
    const answer = await post(
      `${router.url}/v1/chat/completions`,
      JSON.stringify({
        model: engine.modelName,
        messages: [{ role: 'system', content: VICTIM_PROMPT }],
        max_tokens: 1,
        ...extra,
      }),
      { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    );
    expect(answer.status).toBe(200);
    return (answer.json() as { usage: { prompt_tokens_details?: { cached_tokens?: number } } }).usage
      .prompt_tokens_details?.cached_tokens;
  }

  async function probe(sharedEngineCache: 'on' | 'off', extra: Record<string, unknown> = {}) {
    const router = await quiet({
      backends: [engine.url],
      port: 0,
      healthCheck: { intervalMs: 0 },
      apiKeyFile: join(dir, 'keys'),
      sharedEngineCache,
    });
    try {
      const victim = await cachedTokens(router, KEY_A, extra);
      const victimAgain = await cachedTokens(router, KEY_A, extra);
      const attacker = await cachedTokens(router, KEY_B, extra);
      return { victim, victimAgain, attacker };
    } finally {
      await router.close();
    }
  }

  it("GIVEN the default THEN key B's guess of key A's prompt finds nothing cached, and A's repeat still does", async () => {
    const { victimAgain, attacker } = await probe('off', {
      messages: [{ role: 'system', content: `1 ${VICTIM_PROMPT}` }],
    });
    expect(victimAgain).toBeGreaterThan(0);
    expect(attacker ?? 0).toBe(0);
  });

  it('GIVEN --shared-engine-cache on THEN the keys share the cache (the documented cost)', async () => {
    const { attacker } = await probe('on', { messages: [{ role: 'system', content: `2 ${VICTIM_PROMPT}` }] });
    expect(attacker).toBeGreaterThan(0);
  });

  it('GIVEN requests carrying their own cache_salt THEN the router keeps it, so the same salt shares across keys', async () => {
    const { attacker } = await probe('off', {
      messages: [{ role: 'system', content: `3 ${VICTIM_PROMPT}` }],
      cache_salt: 'team-shared',
    });
    expect(attacker).toBeGreaterThan(0);
  });
});

describe('withCacheSalt', () => {
  it.each([
    ['{"model":"m"}', { model: 'm', cache_salt: 's' }],
    ['  {  }  ', { cache_salt: 's' }],
    ['{\n"a":[1,{"b":2}]\n}\n', { a: [1, { b: 2 }], cache_salt: 's' }],
    ['{"model":"m","cache_salt":null}', { model: 'm', cache_salt: 's' }],
  ])('GIVEN %j THEN the salt is its last member and the rest is unchanged', (body, expected) => {
    const salted = withCacheSalt(Buffer.from(body), 's').toString('utf8');
    expect(JSON.parse(salted)).toEqual(expected);
    expect(Object.keys(JSON.parse(salted) as object).at(-1)).toBe('cache_salt');
    expect(salted.startsWith(body.slice(0, body.lastIndexOf('}')))).toBe(true);
  });
});
