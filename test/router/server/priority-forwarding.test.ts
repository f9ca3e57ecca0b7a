import { applyEngineArgs } from '../../../router/src/emulator/engine-args';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { startEmulator, type RunningEmulator } from '../../../router/src/emulator/emulator-server';
import { startRouter, type RunningRouter } from '../../../router/src/server';

/** The router forwards the body's `priority` to the engine untouched: the engine's own answer shows it. */
describe('when a request carries vLLM’s priority through the router', () => {
  const started: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const s of started.reverse()) await s.close();
  });

  async function routerBefore(policy: 'fcfs' | 'priority'): Promise<string> {
    const engine: RunningEmulator = await startEmulator({
      profile: applyEngineArgs(builtinProfile('tiny'), { 'scheduling-policy': policy }),
      timeScale: 50,
      port: 0,
    });
    started.push(engine);
    const router: RunningRouter = await startRouter({
      backends: [engine.url],
      policy: { name: 'round-robin' },
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 60_000 },
    });
    started.push(router);
    return router.url;
  }

  const send = (url: string, priority: number) =>
    fetch(`${url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'Hello there', max_tokens: 2, priority }),
    });

  test('GIVEN an FCFS engine WHEN priority 2 is sent THEN the engine’s refusal comes back: the router passed it on', async () => {
    const res = await send(await routerBefore('fcfs'), 2);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      'Got priority 2 but Priority scheduling is not enabled.',
    );
  });

  test('GIVEN a priority engine WHEN priority 2 is sent THEN it is served', async () => {
    const res = await send(await routerBefore('priority'), 2);
    expect(res.status).toBe(200);
  });
});
