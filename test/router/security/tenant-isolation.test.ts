import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prefixKey } from '../../../router/src/policy/prefix-key';
import { routingBlockHashes, shortPromptKey } from '../../../router/src/policy/routing-blocks';
import {
  parseChatRequest,
  parseCompletionRequest,
  parseInvocationRequest,
} from '../../../router/src/protocol/parse-request';
import { DECISION_HEADER, PREDICTED_CACHED_HEADER } from '../../../router/src/protocol/routing-headers';
import { request } from 'undici';
import { startFakeBackend } from '../../../router/bench/fake-openai-backend';
import { createRouterLogger, startRouter } from '../../../router/src/server';
import { decodeInstanceState } from '../../../router/src/server/instance-state-wire';
import { chatBody, post, startFixture, type Fixture } from '../server/helpers/router-fixture';

/**
 * Tenant isolation in the routing hashes: vLLM's `cache_salt` and the authenticated API key are part of the seed
 * of every routing hash, so two tenants sending the same prompt never appear to share a prefix: not in the
 * cache-aware index (placement, predicted cached tokens), not in the published state (same hashes), not in the
 * sagemaker-prefix-aware key. The same tenant still does.
 */
const SHARED_PROMPT = 'You are the support assistant of Example Bank. Customer record follows. '.repeat(8);
const KEY_A = 'sk-tenant-alpha-0123456789';
const KEY_B = 'sk-tenant-bravo-9876543210';
const encoder = new TextEncoder();

function predictedCached(headers: Record<string, string | string[] | undefined>): number {
  return Number(headers[PREDICTED_CACHED_HEADER] ?? 0);
}

function chat(text: string, extra: Record<string, unknown> = {}, keyIdentity?: string) {
  return parseChatRequest(encoder.encode(chatBody(text, extra)), {}, 'message-text', { keyIdentity }).routing;
}

describe('when requests carry a cache scope (cache_salt, API key identity)', () => {
  it('GIVEN no salt and no key THEN the request has no scope, so its hashes are those of before scopes existed', () => {
    const plain = chat(SHARED_PROMPT);
    expect(plain.cacheScope).toBeUndefined();
    // An explicit `cache_salt: null` is no salt, as vLLM reads it.
    expect(routingBlockHashes(chat(SHARED_PROMPT, { cache_salt: null }), 64)).toEqual(routingBlockHashes(plain, 64));
  });

  it.each([
    [
      'different salts',
      chat(SHARED_PROMPT, { cache_salt: 'tenant-a' }),
      chat(SHARED_PROMPT, { cache_salt: 'tenant-b' }),
    ],
    ['a salt and none', chat(SHARED_PROMPT, { cache_salt: 'tenant-a' }), chat(SHARED_PROMPT)],
    ['different keys', chat(SHARED_PROMPT, {}, 'aaaaaaaaaaaaaaaa'), chat(SHARED_PROMPT, {}, 'bbbbbbbbbbbbbbbb')],
    ['a key and none', chat(SHARED_PROMPT, {}, 'aaaaaaaaaaaaaaaa'), chat(SHARED_PROMPT)],
    [
      'a key with a salt and the salt alone',
      chat(SHARED_PROMPT, { cache_salt: 's' }, 'aaaaaaaaaaaaaaaa'),
      chat(SHARED_PROMPT, { cache_salt: 's' }),
    ],
  ])('GIVEN %s THEN no routing block, prefix key or short-prompt key is shared', (_what, a, b) => {
    const blocksA = routingBlockHashes(a, 64);
    const blocksB = new Set(routingBlockHashes(b, 64));
    expect([...blocksA].filter((h) => blocksB.has(h))).toEqual([]);
    expect(prefixKey(a, 1024)).not.toBe(prefixKey(b, 1024));
    expect(shortPromptKey(a, 64)).not.toBe(shortPromptKey(b, 64));
  });

  it('GIVEN the same salt and key twice THEN the hashes are equal (the tenant shares its own prefixes)', () => {
    const a = chat(SHARED_PROMPT, { cache_salt: 'tenant-a' }, 'aaaaaaaaaaaaaaaa');
    const again = chat(SHARED_PROMPT, { cache_salt: 'tenant-a' }, 'aaaaaaaaaaaaaaaa');
    expect(routingBlockHashes(a, 64)).toEqual(routingBlockHashes(again, 64));
    expect(prefixKey(a, 1024)).toBe(prefixKey(again, 1024));
  });

  it('GIVEN completions and invocation bodies THEN cache_salt scopes them too', () => {
    const completion = (salt?: string) =>
      parseCompletionRequest(
        encoder.encode(JSON.stringify({ model: 'm', prompt: SHARED_PROMPT, cache_salt: salt })),
        {},
      ).routing;
    expect(routingBlockHashes(completion('a'), 64)[0]).not.toBe(routingBlockHashes(completion('b'), 64)[0]);
    const invocation = (salt?: string) =>
      parseInvocationRequest(encoder.encode(JSON.stringify({ inputs: SHARED_PROMPT, cache_salt: salt })), {
        'content-type': 'application/json',
      }).routing;
    expect(prefixKey(invocation('a'), 1024)).not.toBe(prefixKey(invocation('b'), 1024));
  });

  it('GIVEN a cache_salt that is not a string THEN 400 invalid_field, as vLLM refuses it', () => {
    expect(() => chat(SHARED_PROMPT, { cache_salt: 7 })).toThrow(expect.objectContaining({ code: 'invalid_field' }));
  });
});

describe('when two tenants send the same prompt through a cache-aware router', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tenant-keys-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function withRouter(
    options: Parameters<typeof startFixture>[0],
    body: (fx: Fixture) => Promise<void>,
  ): Promise<void> {
    const fx = await startFixture(options);
    try {
      await body(fx);
    } finally {
      await fx.close();
    }
  }

  it('GIVEN different cache_salt values THEN the second tenant gets no cache placement and no predicted cached tokens; the first still does', async () => {
    await withRouter({ router: { policy: { name: 'cache-aware', blockChars: 64 } } }, async (fx) => {
      const url = `${fx.router.url}/v1/chat/completions`;
      // GIVEN tenant A's prompt is in the index
      expect((await post(url, chatBody(SHARED_PROMPT, { cache_salt: 'tenant-a' }))).status).toBe(200);
      // WHEN tenant B sends the same prompt with its own salt
      const other = await post(url, chatBody(SHARED_PROMPT, { cache_salt: 'tenant-b' }));
      // THEN nothing is predicted cached for it and it is placed as a cold prompt
      expect(other.status).toBe(200);
      expect(predictedCached(other.headers)).toBe(0);
      expect(other.headers[DECISION_HEADER]).toBe('cold-rendezvous');
      // AND tenant A's own repeat still finds its prefix
      const same = await post(url, chatBody(SHARED_PROMPT, { cache_salt: 'tenant-a' }));
      expect(same.headers[DECISION_HEADER]).toBe('cache-match');
      expect(predictedCached(same.headers)).toBeGreaterThan(0);
    });
  });

  it('GIVEN --api-key-file and two keys THEN the key scopes the prefix: no sharing across keys, sharing within one', async () => {
    const apiKeyFile = join(dir, 'keys');
    writeFileSync(apiKeyFile, `${KEY_A}\n${KEY_B}\n`);
    await withRouter({ router: { apiKeyFile, policy: { name: 'cache-aware', blockChars: 64 } } }, async (fx) => {
      const url = `${fx.router.url}/v1/chat/completions`;
      const as = (key: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` });
      expect((await post(url, chatBody(SHARED_PROMPT), as(KEY_A))).status).toBe(200);
      const other = await post(url, chatBody(SHARED_PROMPT), as(KEY_B));
      expect(other.status).toBe(200);
      expect(predictedCached(other.headers)).toBe(0);
      expect(other.headers[DECISION_HEADER]).toBe('cold-rendezvous');
      const same = await post(url, chatBody(SHARED_PROMPT), as(KEY_A));
      expect(same.headers[DECISION_HEADER]).toBe('cache-match');
      expect(predictedCached(same.headers)).toBeGreaterThan(0);
    });
  });
});

describe('when a publishing sidecar is sent the same prompt by two tenants', () => {
  it('GIVEN different cache_salt values THEN the published index holds two disjoint chains; one salt twice, one chain', async () => {
    const engine = await startFakeBackend({ name: 'published' });
    const router = await startRouter(
      {
        backends: [engine.url],
        port: 0,
        healthCheck: { intervalMs: 0 },
        publishStateMs: 1,
        publishStateBlockChars: 64,
        policy: { name: 'round-robin' },
      },
      { logger: createRouterLogger('silent') },
    );
    const published = async () => {
      const res = await request(`${router.url}/router/v1/instance-state`);
      return decodeInstanceState(await res.body.json()).snapshot?.hashes.length ?? 0;
    };
    try {
      const url = `${router.url}/v1/chat/completions`;
      await post(url, chatBody(SHARED_PROMPT, { cache_salt: 'tenant-a' }));
      const oneChain = await published();
      expect(oneChain).toBeGreaterThan(0);
      await post(url, chatBody(SHARED_PROMPT, { cache_salt: 'tenant-a' }));
      expect(await published()).toBe(oneChain);
      await post(url, chatBody(SHARED_PROMPT, { cache_salt: 'tenant-b' }));
      expect(await published()).toBe(2 * oneChain);
    } finally {
      await router.close();
      await engine.close();
    }
  });
});
