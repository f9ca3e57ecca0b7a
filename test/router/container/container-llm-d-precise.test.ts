import type { ContainerProcess } from './container-process';
import { kvEventsContainerOf, launchKvEventsContainer, type KvEventsContainer } from './kv-events-container';

/**
 * `llm-d-precise` in the container: PREFIX_ROUTER_POLICY=llm-d-precise with PREFIX_ROUTER_ENGINE_KV_EVENTS=on, two
 * emulated engines publishing their KV events (kv-events-container.ts). The policy reads each engine's blocks from its
 * events, so its prediction is the engine's own account and its placement follows where the engines hold a prompt,
 * also a prompt an engine took from a client that bypassed the router.
 */
describe('when prefix-router container routes with PREFIX_ROUTER_POLICY=llm-d-precise on the engines KV events', () => {
  let container: ContainerProcess;
  let running: KvEventsContainer;

  beforeAll(async () => {
    container = launchKvEventsContainer({ PREFIX_ROUTER_POLICY: 'llm-d-precise' });
    running = await kvEventsContainerOf(container);
  });

  afterAll(async () => {
    container.killAll();
    await container.exited;
  });

  it('GIVEN conversations sharing system prompts THEN each returns to the engine holding it, predicted cached tokens as delivered', async () => {
    const systems = ['You reconcile ledger entries carefully. '.repeat(12), 'You grade essays on clarity. '.repeat(14)];
    const homes = new Map<number, string>();
    for (let turn = 0; turn < 3; turn++) {
      for (const [s, system] of systems.entries()) {
        const answer = await running.chat(system, `question ${turn} for ${s}`);
        expect(answer.decision).toBe('llm-d-max-score');
        expect(answer.predicted).toBe(answer.delivered);
        if (turn === 0) homes.set(s, answer.instance);
        else
          expect({ system: s, instance: answer.instance, hit: answer.delivered > 0 }).toEqual({
            system: s,
            instance: homes.get(s),
            hit: true,
          });
      }
    }
  });

  it('GIVEN prompts each engine took around the router THEN the router sends their followers there, predicting the hit the engine delivers', async () => {
    // An estimate built from what the router sent would predict 0 here and place these at random: only the engines'
    // events tell where the prompts are.
    for (const [g, engine] of [...running.engineUrls, ...running.engineUrls].entries()) {
      const system = `Bypass group ${g}: you file customs forms for region ${g}. `.repeat(10);
      await running.chatAround(engine, system, 'sent straight to the engine');
      const answer = await running.chat(system, 'sent through the router');
      expect({ group: g, instance: answer.instance }).toEqual({ group: g, instance: engine });
      expect(answer.delivered).toBeGreaterThan(0);
      expect(answer.predicted).toBe(answer.delivered);
    }
  });
});
