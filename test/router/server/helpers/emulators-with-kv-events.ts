import { startEmulatorFleet, type RunningEmulatorFleet } from '../../../../router/src/emulator/emulator-server';
import { builtinProfile } from '../../../../router/src/emulator/engine-profile';
import type { PolicyConfig } from '../../../../router/src/policy/policy-config';
import { startRouter, type RunningRouter } from '../../../../router/src/server';

/** Room for every prompt of a test: what an engine evicts is not what these tests are about. */
const ROOMY_TINY_PROFILE = { ...builtinProfile('tiny'), kvCapacityBlocks: 4096, maxModelLen: 8192 };

/** A chat request body: one system prompt, one user turn, two output tokens. */
export function chatBody(model: string, system: string, user: string): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    max_tokens: 2,
  });
}

/**
 * Two emulators publishing vLLM's KV events over ZeroMQ (with replay sockets) and a router following every one of
 * them (`--kv-events`, `--kv-events-replay`, `--tokenizer emulator`) with `policy`; `close` stops both.
 */
export async function startRouterOnEmulatorEvents(
  policy: PolicyConfig,
): Promise<{ fleet: RunningEmulatorFleet; router: RunningRouter; close: () => Promise<void> }> {
  const fleet = await startEmulatorFleet(2, {
    profile: ROOMY_TINY_PROFILE,
    timeScale: 50,
    kvEvents: { port: 0, replayPort: 0 },
  });
  const router = await startRouter({
    backends: fleet.urls,
    policy,
    port: 0,
    logLevel: 'silent',
    healthCheck: { intervalMs: 60_000 },
    routingHeaders: 'all',
    kvEvents: fleet.instances.map((e) => `${e.url}=${e.kvEvents!.endpoint}`),
    kvEventsReplay: fleet.instances.map((e) => `${e.url}=${e.kvEvents!.replayEndpoint!}`),
    tokenizer: 'emulator',
  });
  return {
    fleet,
    router,
    close: async () => {
      await router.close();
      await fleet.close();
    },
  };
}
