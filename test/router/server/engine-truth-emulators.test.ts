import { request } from 'undici';
import type { RunningEmulatorFleet } from '../../../router/src/emulator/emulator-server';
import { parseChatRequest } from '../../../router/src/protocol/parse-request';
import { chatBody, startRouterOnEmulatorEvents } from './helpers/emulators-with-kv-events';
import { PrefixRouter, type RunningRouter } from '../../../router/src/server';
import { INSTANCE_HEADER } from '../../../router/src/server';

/** Waits (bounded) until `holds()` is true: the engine's events about the last answer have reached the router. */
async function until(holds: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !holds(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(holds()).toBe(true);
}

describe('when a router follows emulators KV events over ZeroMQ (--kv-events, --tokenizer emulator)', () => {
  let fleet: RunningEmulatorFleet;
  let router: RunningRouter;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ fleet, router, close } = await startRouterOnEmulatorEvents({ name: 'cache-aware', blockChars: 64 }));
  });

  afterAll(() => close());

  test('GIVEN conversations sharing system prompts THEN each predicted cached count equals what the engine delivered', async () => {
    const truth = (router as PrefixRouter).engineTruth!;
    const model = fleet.instances[0].modelName;
    const systems = ['You answer questions about invoices. '.repeat(12), 'You review pull requests kindly. '.repeat(9)];
    let requests = 0;
    for (let turn = 0; turn < 4; turn++) {
      for (const [s, system] of systems.entries()) {
        const user = `question ${turn} for system ${s}: ${'details '.repeat(turn * 5)}`;
        const res = await request(`${router.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: chatBody(model, system, user),
        });
        const answer = (await res.body.json()) as { usage: { prompt_tokens_details?: { cached_tokens?: number } } };
        expect(res.statusCode).toBe(200);
        const delivered = answer.usage.prompt_tokens_details?.cached_tokens ?? 0;
        expect(Number(res.headers['x-prefix-router-predicted-cached-tokens'])).toBe(delivered);
        requests++;
        // The engine's events for this prompt have arrived: every full block but the last token's is held there.
        const engine = router.backends.find((b) => b.name === res.headers[INSTANCE_HEADER])!.id;
        const routing = parseChatRequest(Buffer.from(chatBody(model, system, user)), {}).routing;
        const view = truth.viewOf(engine)!;
        await until(() => (view.cachedTokensOf(routing) ?? 0) > 0);
      }
    }
    expect(requests).toBe(8);
  });
});
