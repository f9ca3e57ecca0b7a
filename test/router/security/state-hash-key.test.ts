import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { request } from 'undici';
import { startFakeBackend, type FakeBackend } from '../../../router/bench/fake-openai-backend';
import { KeyFileError } from '../../../router/src/common/api-keys';
import { routingBlockHashes } from '../../../router/src/policy/routing-blocks';
import { parseChatRequest } from '../../../router/src/protocol/parse-request';
import type { RoutingRequest } from '../../../router/src/protocol/routing-request';
import {
  createRouterLogger,
  INSTANCE_HEADER,
  startRouter,
  type RouterOptions,
  type RunningRouter,
} from '../../../router/src/server';
import { decodeInstanceState } from '../../../router/src/server/instance-state-wire';
import { PREDICTED_CACHED_HEADER } from '../../../router/src/server/proxy';
import { ROUTING_BLOCK_KEY_BYTES, StateHashKey } from '../../../router/src/state/state-hash-key';
import { post, sharedStateHashKeyFile, waitFor } from '../server/helpers/router-fixture';

const BLOCK_CHARS = 64;
const MODEL = 'fake-model';

function keyFile(content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'state-hash-key-test-')), 'key');
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

function chatJson(system: string, user = 'hello'): string {
  return JSON.stringify({
    model: MODEL,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
  });
}

/** The routing request the router parses from a chat body (what it hashes). */
function parsed(body: string): RoutingRequest {
  return parseChatRequest(Buffer.from(body), {}).routing;
}

describe('when routing block hashes are keyed (StateHashKey)', () => {
  const text = 'every block of this prompt is keyed with the deployment secret. '.repeat(6);
  const a = StateHashKey.fromSecret('a'.repeat(32));

  it('GIVEN one secret THEN the chain is deterministic, 64 bits a block, and its id reveals nothing of the secret', () => {
    const again = StateHashKey.fromSecret('a'.repeat(32));
    const keys = a.blockKeys(text, BLOCK_CHARS, 'seed');
    expect(keys).toHaveLength(Math.floor(text.length / BLOCK_CHARS));
    // eslint-disable-next-line no-control-regex -- a key is any Latin-1 text, U+0000 included
    expect(keys.every((k) => k.length === ROUTING_BLOCK_KEY_BYTES && /^[\x00-\xff]+$/.test(k))).toBe(true);
    expect(again.blockKeys(text, BLOCK_CHARS, 'seed')).toEqual(keys);
    expect(again.id).toBe(a.id);
    expect(a.id).toMatch(/^[0-9a-f]{16}$/);
    expect(a.id).not.toContain('aaaa');
  });

  it('GIVEN two secrets, or two seeds THEN no block key is shared', () => {
    const b = StateHashKey.fromSecret('b'.repeat(32));
    const under = new Set(a.blockKeys(text, BLOCK_CHARS, 'seed'));
    expect(b.blockKeys(text, BLOCK_CHARS, 'seed').some((k) => under.has(k))).toBe(false);
    expect(a.blockKeys(text, BLOCK_CHARS, 'other seed').some((k) => under.has(k))).toBe(false);
    expect(b.id).not.toBe(a.id);
  });

  it('GIVEN any two texts THEN block i is shared exactly when their first i + 1 blocks are (the prefix-cache rule)', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        fc.string({ maxLength: 200 }),
        fc.string({ maxLength: 200 }),
        (common, x, y) => {
          const ka = a.blockKeys(common + x, 16, 's');
          const kb = a.blockKeys(common + y, 16, 's');
          const ta = common + x;
          const tb = common + y;
          for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
            expect(ka[i] === kb[i]).toBe(ta.slice(0, (i + 1) * 16) === tb.slice(0, (i + 1) * 16));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it.each([
    ['too short a secret', 'short-secret\n', /at least 32/],
    ['no key line at all', '# only a comment\n\n', /holds no key/],
  ])('GIVEN a key file with %s THEN reading it fails naming the file, not its content', (_what, content, message) => {
    const path = keyFile(content);
    expect(() => StateHashKey.fromFile(path)).toThrow(KeyFileError);
    expect(() => StateHashKey.fromFile(path)).toThrow(message);
    expect(() => StateHashKey.fromFile(path)).toThrow(path);
  });

  it('GIVEN a key file with comments and surrounding blanks THEN its first key line is the secret', () => {
    const secret = '0123456789abcdef'.repeat(4);
    expect(StateHashKey.fromFile(keyFile(`# state-hash key\n\n  ${secret}  \n`)).id).toBe(
      StateHashKey.fromSecret(secret).id,
    );
  });
});

describe('when an attacker runs a dictionary attack on a published snapshot', () => {
  // The victim's prompt: a template the attacker knows, with a name and an account number the attacker wants.
  const names = ['Alice Smith', 'Bob Jones', 'Carol White', 'Dan Brown', 'Eve Black', 'Frank Green'];
  const template = (name: string, account: number) =>
    `You are the support assistant of Example Bank. The customer you are talking to is ${name}, account number ${String(account).padStart(8, '0')}. Answer only questions about this account, politely and briefly.`;
  const victim = { name: 'Carol White', account: 4_017 };
  const GUESSES = 30_000;

  let engine: FakeBackend;
  let sidecar: RunningRouter;
  let published: Set<string>;
  const secretFile = keyFile(`${'f00d'.repeat(16)}\n`);

  beforeAll(async () => {
    engine = await startFakeBackend({ name: 'victim-engine' });
    sidecar = await startRouter(
      {
        backends: [engine.url],
        port: 0,
        healthCheck: { intervalMs: 0 },
        publishStateMs: 1,
        publishStateBlockChars: BLOCK_CHARS,
        policy: { name: 'round-robin' },
        stateHashKeyFile: secretFile,
      },
      { logger: createRouterLogger('silent') },
    );
    expect(
      (await post(`${sidecar.url}/v1/chat/completions`, chatJson(template(victim.name, victim.account)))).status,
    ).toBe(200);
    const res = await request(`${sidecar.url}/router/v1/instance-state`);
    const update = decodeInstanceState(await res.body.json());
    published = new Set(update.snapshot!.hashes);
    expect(published.size).toBeGreaterThanOrEqual(2);
    expect(update.hashKeySource).toBe('file');
  });

  afterAll(async () => {
    await sidecar.close();
    await engine.close();
  });

  /** The guesses (names × account numbers, the victim's among them) whose deepest block, which covers the name and number, is in the snapshot. */
  function guessesFound(key: StateHashKey): { found: string[]; tried: number } {
    const found: string[] = [];
    let tried = 0;
    for (let account = 0; tried < GUESSES; account++) {
      for (const name of names) {
        tried++;
        const keys = routingBlockHashes(parsed(chatJson(template(name, account))), BLOCK_CHARS, key);
        if (published.has(keys[keys.length - 1])) found.push(`${name}/${account}`);
      }
    }
    return { found, tried };
  }

  it(`GIVEN ${GUESSES.toLocaleString('en-US')} offline guesses without the secret THEN none matches a published block`, () => {
    const withoutTheKey = guessesFound(StateHashKey.random());
    expect(withoutTheKey.tried).toBeGreaterThanOrEqual(GUESSES);
    expect(withoutTheKey.found).toEqual([]);
    // Nor do the template's own shared blocks: the attacker cannot even tell which template the prompt used.
    const head = routingBlockHashes(
      parsed(chatJson(template('', 0))),
      BLOCK_CHARS,
      StateHashKey.fromSecret('guessed-secret'.repeat(3)),
    );
    expect(head.some((k) => published.has(k))).toBe(false);
  });

  it('GIVEN the same guesses with the secret (the control: the attack is real) THEN exactly the victim is found', () => {
    expect(guessesFound(StateHashKey.fromFile(secretFile)).found).toEqual([`${victim.name}/${victim.account}`]);
  });
});

describe('when an observing replica and the instances it follows hold different state-hash keys', () => {
  let engine: FakeBackend;
  const routers: RunningRouter[] = [];
  const logs: string[] = [];
  const system = 'a long system prompt, sent through the sidecar by another replica. '.repeat(6);

  async function sidecarWith(options: Partial<RouterOptions>): Promise<RunningRouter> {
    const r = await startRouter(
      {
        backends: [engine.url],
        port: 0,
        healthCheck: { intervalMs: 0 },
        publishStateMs: 2,
        publishStateBlockChars: BLOCK_CHARS,
        policy: { name: 'round-robin' },
        ...options,
      },
      { logger: createRouterLogger('silent') },
    );
    routers.push(r);
    expect((await post(`${r.url}/v1/chat/completions`, chatJson(system, 'first'))).status).toBe(200);
    return r;
  }

  async function observerOf(sidecar: RunningRouter, options: Partial<RouterOptions>): Promise<RunningRouter> {
    const destination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        logs.push(
          ...chunk
            .toString('utf8')
            .split('\n')
            .filter((l) => l.length > 0),
        );
        cb();
      },
    });
    const r = await startRouter(
      {
        backends: [sidecar.url],
        port: 0,
        healthCheck: { intervalMs: 0 },
        observeInstances: 'on',
        routingHeaders: 'all',
        policy: { name: 'cache-aware', blockChars: BLOCK_CHARS },
        ...options,
      },
      { logger: createRouterLogger('warn', destination) },
    );
    routers.push(r);
    return r;
  }

  beforeAll(async () => {
    engine = await startFakeBackend({ name: 'shared-engine' });
  });

  afterAll(async () => {
    await Promise.all(routers.map((r) => r.close()));
    await engine.close();
  });

  it('GIVEN the same key file THEN the observer predicts the prefix the sidecar holds (routing as with unkeyed hashes)', async () => {
    const sidecar = await sidecarWith({ stateHashKeyFile: sharedStateHashKeyFile() });
    const observer = await observerOf(sidecar, { stateHashKeyFile: sharedStateHashKeyFile() });
    await waitFor('the observer to follow the sidecar', () => (observer.backends[0]?.observed?.seq ?? 0) >= 1);
    const answer = await post(`${observer.url}/v1/chat/completions`, chatJson(system, 'second'));
    expect(answer.status).toBe(200);
    expect(answer.headers[INSTANCE_HEADER]).toBe('backend-1');
    expect(Number(answer.headers[PREDICTED_CACHED_HEADER])).toBeGreaterThan(0);
  });

  it.each([
    [
      'another key file',
      () => ({ stateHashKeyFile: keyFile(`${'1'.repeat(64)}\n`) }),
      () => ({ stateHashKeyFile: keyFile(`${'2'.repeat(64)}\n`) }),
      /keyed with another secret \(state-hash key id [0-9a-f]{16}, this router's [0-9a-f]{16}\)/,
    ],
    [
      'no key file on the sidecar',
      () => ({}),
      () => ({ stateHashKeyFile: sharedStateHashKeyFile() }),
      /random per-process secret \(it has no --state-hash-key-file\)/,
    ],
    [
      'no key file on the observer',
      () => ({ stateHashKeyFile: sharedStateHashKeyFile() }),
      () => ({}),
      /this router has no --state-hash-key-file/,
    ],
  ])(
    'GIVEN %s THEN the observer refuses the state with an error saying so, and routes on its own view (no predicted hit)',
    async (_what, sidecarOptions, observerOptions, message) => {
      const sidecar = await sidecarWith(sidecarOptions());
      const before = logs.length;
      const observer = await observerOf(sidecar, observerOptions());
      await waitFor(
        'the observer to log the refusal',
        () => logs.slice(before).some((l) => l.includes('cannot observe')),
        10_000,
      );
      const refusal = JSON.parse(logs.slice(before).find((l) => l.includes('cannot observe'))!) as {
        level: number;
        error: string;
      };
      expect(refusal.level).toBe(50); // pino's error level: a misconfiguration, not a passing outage
      expect(refusal.error).toMatch(message);
      expect(observer.backends[0]?.observed).toBeUndefined();
      const answer = await post(`${observer.url}/v1/chat/completions`, chatJson(system, 'second'));
      expect(answer.status).toBe(200);
      expect(Number(answer.headers[PREDICTED_CACHED_HEADER])).toBe(0);
    },
  );
});
