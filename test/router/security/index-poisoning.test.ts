import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRouterLogger, startRouter, type RunningRouter } from '../../../router/src/server';
import { InstanceStateLog, ObservedInstance } from '../../../router/src/state/instance-state-log';
import { DECISION_HEADER, PREDICTED_CACHED_HEADER } from '../../../router/src/protocol/routing-headers';
import { post } from '../server/helpers/router-fixture';
import { testBlockKey } from '../state/test-block-keys';

/**
 * Index poisoning: a request whose routing text (the messages' text) matches a hot prefix but renders differently
 * for the engine (another role structure) gets `cached_tokens: 0`. That must not empty the router's index or the
 * published one; a real eviction must still correct them.
 */
const BLOCK = 64;

/** Text of `blocks` routing blocks, distinct per label. */
function blocksOf(label: string, blocks: number): string {
  let s = '';
  for (let i = 0; s.length < blocks * BLOCK; i++) s += `${label}:${i};`;
  return s.slice(0, blocks * BLOCK);
}

/**
 * An engine whose prefix cache keys on the rendered prompt (role tags and content), never forgets, and reports
 * `cached_tokens` as vLLM does: the longest prefix (in 4-character tokens) it holds of this rendering.
 */
async function renderingEngine(): Promise<{ url: string; server: Server }> {
  const rendered: string[] = [];
  const server = createServer((req, res) => {
    // Only chat completions (the router also asks for /metrics: none here, so it assumes its default KV capacity).
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        messages: { role: string; content: string }[];
      };
      const prompt = body.messages.map((m) => `<|${m.role}|>${m.content}`).join('');
      let common = 0;
      for (const earlier of rendered) {
        let n = 0;
        while (n < prompt.length && n < earlier.length && prompt[n] === earlier[n]) n++;
        common = Math.max(common, n);
      }
      rendered.push(prompt);
      const promptTokens = Math.ceil(prompt.length / 4);
      const usage = {
        prompt_tokens: promptTokens,
        completion_tokens: 1,
        total_tokens: promptTokens + 1,
        prompt_tokens_details: { cached_tokens: Math.floor(common / 4) },
      };
      const answer = JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage,
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const chat = (system: string, systemRole = 'system') =>
  JSON.stringify({
    model: 'm',
    messages: [
      { role: systemRole, content: system },
      { role: 'user', content: 'question' },
    ],
  });

describe('when a request renders a hot prefix differently and the engine serves none of it', () => {
  let engine: { url: string; server: Server };
  let router: RunningRouter;
  beforeAll(async () => {
    engine = await renderingEngine();
    router = await startRouter(
      {
        backends: [engine.url],
        port: 0,
        healthCheck: { intervalMs: 0 },
        routingHeaders: 'all',
        policy: { name: 'cache-aware', blockChars: BLOCK },
      },
      { logger: createRouterLogger('silent') },
    );
  });
  afterAll(async () => {
    await router.close();
    await new Promise((resolve) => engine.server.close(resolve));
  });

  it('GIVEN conversations the engine serves from cache and a hot prefix THEN poisoning requests leave every chain routable', async () => {
    const url = `${router.url}/v1/chat/completions`;
    const conversations = Array.from({ length: 6 }, (_, i) => blocksOf(`conversation-${i}`, 6));
    const hot = blocksOf('hot system prompt', 8);
    // GIVEN each conversation sent, then sent again and served from cache (the engine proves what it holds)
    for (const c of conversations) expect((await post(url, chat(c))).status).toBe(200);
    for (let i = 0; i < 3; i++) await post(url, chat(hot));
    for (const c of conversations) await post(url, chat(c));
    // WHEN an attacker sends the hot prefix's text under another role structure, repeatedly
    for (let i = 0; i < 5; i++) expect((await post(url, chat(hot, 'user'))).status).toBe(200);
    // THEN the hot prefix and every conversation are still predicted cached and placed by it
    for (const text of [hot, ...conversations]) {
      const answer = await post(url, chat(text));
      expect(answer.headers[DECISION_HEADER]).toBe('cache-match');
      expect(Number(answer.headers[PREDICTED_CACHED_HEADER])).toBeGreaterThan(0);
    }
  });
});

describe("when an instance's published index gets engine feedback", () => {
  /** Chained-looking distinct hashes: `blocks` of them for `label`. */
  const chain = (label: number, blocks: number) =>
    Array.from({ length: blocks }, (_, i) => testBlockKey(label * 1000 + i + 1));

  it('GIVEN a poisoning report on a hot chain THEN observers keep every chain; a deep miss still corrects them', () => {
    const log = new InstanceStateLog(BLOCK, 10_000, 'e');
    for (let c = 0; c < 6; c++) log.admit(chain(c, 4), 100).end();
    const hot = chain(99, 8);
    log.admit(hot, 200).end();
    // The engine serves conversation 4 whole: it holds blocks that deep.
    log.admit(chain(4, 4), 100).engineCached((4 * BLOCK) / 4);
    // WHEN a request on the hot chain reports nothing cached
    log.admit(hot, 200).engineCached(0);
    const observer = new ObservedInstance();
    observer.apply(log.updateSince(undefined, undefined), 0);
    // THEN nothing was evicted
    expect(observer.match(hot)).toBe(8);
    for (let c = 0; c < 6; c++) expect(observer.match(chain(c, 4))).toBe(4);
    // WHEN the engine reports conversation 1 missing (older than anything it served)
    log.admit(chain(1, 4), 100).engineCached(0);
    const replayed = new ObservedInstance();
    replayed.apply(log.updateSince(undefined, undefined), 0);
    // THEN it and the older conversation 0 are gone from the published index; conversation 1 was just recomputed
    expect(replayed.match(chain(0, 4))).toBe(0);
    expect(replayed.match(chain(1, 4))).toBe(4);
    expect(replayed.match(chain(2, 4))).toBe(4);
  });
});
