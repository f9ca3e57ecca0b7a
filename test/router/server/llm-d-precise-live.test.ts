import { request } from 'undici';
import type { RunningEmulatorFleet } from '../../../router/src/emulator/emulator-server';
import { parseChatRequest } from '../../../router/src/protocol/parse-request';
import { chatBody, startRouterOnEmulatorEvents } from './helpers/emulators-with-kv-events';
import { INSTANCE_HEADER, PrefixRouter, type RunningRouter } from '../../../router/src/server';

/**
 * `serve --policy llm-d-precise` live: the precise prefix scorer reads each engine's blocks from its KV events over
 * ZeroMQ (emulators publishing vLLM's wire format), the overlap the simulator gives it from its engine models.
 */
describe('when serve runs llm-d-precise on the engines KV events (--kv-events for every backend)', () => {
  let fleet: RunningEmulatorFleet;
  let router: RunningRouter;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ fleet, router, close } = await startRouterOnEmulatorEvents({ name: 'llm-d-precise' }));
  });

  afterAll(() => close());

  /** Sends a chat; waits (bounded) until the serving engine's events show it holds the prompt's first block. */
  async function chat(system: string, user: string): Promise<string> {
    const model = fleet.instances[0].modelName;
    const res = await request(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chatBody(model, system, user),
    });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-prefix-router-decision']).toBe('llm-d-max-score');
    const engine = router.backends.find((b) => b.name === res.headers[INSTANCE_HEADER])!.id;
    const view = (router as PrefixRouter).engineTruth!.viewOf(engine)!;
    const routing = parseChatRequest(Buffer.from(chatBody(model, system, user)), {}).routing;
    for (let i = 0; i < 500 && (view.cachedTokensOf(routing) ?? 0) === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(view.cachedTokensOf(routing)).toBeGreaterThan(0);
    return engine;
  }

  test('GIVEN system prompts an engine holds by its events THEN every later request sharing one goes to that engine', async () => {
    const homes = new Map<number, string>();
    const systems = Array.from({ length: 6 }, (_, g) => `Group ${g} policy manual, section ${g}. `.repeat(12));
    for (const [g, system] of systems.entries()) homes.set(g, await chat(system, 'first question'));
    for (let turn = 1; turn <= 2; turn++) {
      for (const [g, system] of systems.entries()) expect(await chat(system, `question ${turn}`)).toBe(homes.get(g));
    }
    // The affinity is the events', not one engine taking everything.
    expect(new Set(homes.values()).size).toBe(2);
  });
});
