import { request } from 'undici';
import { startEmulatorFleet, type RunningEmulatorFleet } from '../../../router/src/emulator/emulator-server';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { parseChatRequest } from '../../../router/src/protocol/parse-request';
import { INSTANCE_HEADER, PrefixRouter, startRouter, type RunningRouter } from '../../../router/src/server';

/**
 * `serve --policy llm-d-precise` live: the precise prefix scorer reads each engine's blocks from its KV events over
 * ZeroMQ (emulators publishing vLLM's wire format), the overlap the simulator gives it from its engine models.
 */
const profile = { ...builtinProfile('tiny'), kvCapacityBlocks: 4096, maxModelLen: 8192 };

function body(model: string, system: string, user: string): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    max_tokens: 2,
  });
}

describe('when serve runs llm-d-precise on the engines KV events (--kv-events for every backend)', () => {
  let fleet: RunningEmulatorFleet;
  let router: RunningRouter;

  beforeAll(async () => {
    fleet = await startEmulatorFleet(2, { profile, timeScale: 50, kvEvents: { port: 0, replayPort: 0 } });
    router = await startRouter({
      backends: fleet.urls,
      policy: { name: 'llm-d-precise' },
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 60_000 },
      routingHeaders: 'all',
      kvEvents: fleet.instances.map((e) => `${e.url}=${e.kvEvents!.endpoint}`),
      kvEventsReplay: fleet.instances.map((e) => `${e.url}=${e.kvEvents!.replayEndpoint!}`),
      tokenizer: 'emulator',
    });
  });

  afterAll(async () => {
    await router.close();
    await fleet.close();
  });

  /** Sends a chat; waits (bounded) until the serving engine's events show it holds the prompt's first block. */
  async function chat(system: string, user: string): Promise<string> {
    const model = fleet.instances[0].modelName;
    const res = await request(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(model, system, user),
    });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-prefix-router-decision']).toBe('llm-d-max-score');
    const engine = router.backends.find((b) => b.name === res.headers[INSTANCE_HEADER])!.id;
    const view = (router as PrefixRouter).engineTruth!.viewOf(engine)!;
    const routing = parseChatRequest(Buffer.from(body(model, system, user)), {}).routing;
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
