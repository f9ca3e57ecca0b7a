/**
 * A child process that runs one service of the demo — an emulated vLLM fleet or the router — so the load
 * generator, the router and the engines do not share one event loop (on a 2-core machine that would bend the
 * very latencies we measure). The parent talks to it over the IPC channel of `fork`:
 *   parent → child: { type: 'start', service }  then  { type: 'stop' }
 *   child → parent: { type: 'ready', urls, ids, modelName } | { type: 'failed', message } | { type: 'stopped' }
 */
import type { EngineProfile } from '../emulator/engine-profile';
import { startEmulatorFleet } from '../emulator/emulator-server';
import type { PolicyConfig } from '../policy';
import { startRouter } from '../server';

export type ServiceSpec =
  | {
      readonly kind: 'emulators';
      readonly instances: number;
      readonly profile: string;
      readonly profiles?: readonly EngineProfile[];
      readonly timeScale: number;
    }
  | {
      readonly kind: 'router';
      readonly backends: readonly string[];
      readonly policy: PolicyConfig;
      readonly seed: number;
      readonly learnPrefillSpeeds?: boolean;
    };

export type ParentMessage = { readonly type: 'start'; readonly service: ServiceSpec } | { readonly type: 'stop' };

export type ChildMessage =
  | {
      readonly type: 'ready';
      readonly urls: readonly string[];
      readonly ids: readonly string[];
      readonly modelName?: string;
    }
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'stopped' };

interface Closable {
  close(): Promise<void>;
}

async function start(service: ServiceSpec): Promise<{ running: Closable; ready: ChildMessage }> {
  if (service.kind === 'emulators') {
    const fleet = await startEmulatorFleet(service.instances, {
      profile: service.profile,
      ...(service.profiles !== undefined ? { profiles: service.profiles } : {}),
      timeScale: service.timeScale,
      port: 0,
    });
    return {
      running: fleet,
      ready: { type: 'ready', urls: fleet.urls, ids: fleet.urls, modelName: fleet.instances[0].modelName },
    };
  }
  const router = await startRouter({
    backends: service.backends,
    policy: service.policy,
    seed: service.seed,
    port: 0,
    logLevel: 'warn',
    // A mixed fleet: the router learns each engine's prefill speed from the TTFTs it sees (cache-aware uses it).
    ...(service.learnPrefillSpeeds === true ? { learnPrefillSpeeds: 'on' as const } : {}),
    // The benchmark reads the serving instance and decision time from these (a local, single-user demo).
    routingHeaders: 'all',
  });
  return { running: router, ready: { type: 'ready', urls: [router.url], ids: router.backends.map((b) => b.name) } };
}

function send(message: ChildMessage): void {
  process.send?.(message);
}

let running: Closable | undefined;

process.on('message', (message: ParentMessage) => {
  if (message.type === 'start') {
    start(message.service).then(
      (started) => {
        running = started.running;
        send(started.ready);
      },
      (err: unknown) => send({ type: 'failed', message: err instanceof Error ? err.message : String(err) }),
    );
  } else if (message.type === 'stop') {
    const closing = running ? running.close() : Promise.resolve();
    void closing.finally(() => {
      send({ type: 'stopped' });
      process.disconnect?.();
      process.exit(0);
    });
  }
});

// The parent went away (crash, Ctrl-C): do not linger.
process.on('disconnect', () => process.exit(0));
