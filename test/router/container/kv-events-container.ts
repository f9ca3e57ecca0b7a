import { request } from 'undici';
import { ContainerProcess, emulatorEngineCommand, eventually } from './container-process';

/**
 * The set-up the container's KV-event tests share: the real `prefix-router container` in multi-engine mode with
 * PREFIX_ROUTER_ENGINE_KV_EVENTS=on and two emulated engines taking vLLM's --kv-events-config (ipc:// PUB sockets,
 * loopback replay ports), both admitted by the router before the tests start; and a chat that waits (bounded) until
 * the router applied the serving engine's next KV event batch, so the next request sees what this one left.
 */
export const KV_EVENTS_MODEL = 'tiny-emulated-model';

export function kvEventsChatBody(system: string, user: string): string {
  return JSON.stringify({
    model: KV_EVENTS_MODEL,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    max_tokens: 2,
  });
}

export interface KvEventsAnswer {
  /** The engine's URL. */
  readonly instance: string;
  /** x-prefix-router-predicted-cached-tokens (NaN when the request did not pass the router). */
  readonly predicted: number;
  /** usage.prompt_tokens_details.cached_tokens: what the engine delivered. */
  readonly delivered: number;
  /** x-prefix-router-decision. */
  readonly decision: string | undefined;
}

export interface KvEventsContainer {
  /** The router's URL. */
  readonly url: string;
  /** The engines' URLs, in backend order (backend-1 first). */
  readonly engineUrls: readonly string[];
  /** The router's applied batches per engine URL, from its /metrics. */
  batchesByEngine(): Promise<Map<string, number>>;
  /** A chat through the router; resolves once the router applied a further batch from the engine that served it. */
  chat(system: string, user: string): Promise<KvEventsAnswer>;
  /** The same chat sent straight to one engine, around the router (as a client that bypasses it). */
  chatAround(engineUrl: string, system: string, user: string): Promise<KvEventsAnswer>;
}

/**
 * Starts the container (extra variables on top of the shared ones) at once, so a suite holds it (and kills it in
 * afterAll) even when waiting for it times out; `kvEventsContainerOf` then waits until both engines are admitted.
 */
export function launchKvEventsContainer(env: Record<string, string> = {}): ContainerProcess {
  return new ContainerProcess({
    PREFIX_ROUTER_MODE: 'multi-engine',
    PREFIX_ROUTER_ENGINES: '2',
    PREFIX_ROUTER_GPUS: '2',
    PREFIX_ROUTER_ENGINE_COMMAND: emulatorEngineCommand(
      '--time-scale 50 --server-dev-mode --kv-events-config {kv_events_config}',
    ),
    PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on',
    PREFIX_ROUTER_TOKENIZER: 'emulator',
    PREFIX_ROUTER_HEALTH_INTERVAL_MS: '200',
    PREFIX_ROUTER_EMF: 'off',
    PREFIX_ROUTER_ROUTING_HEADERS: 'all',
    ...env,
  });
}

/** The launched container, once its router listens and admitted both engines. */
export async function kvEventsContainerOf(container: ContainerProcess): Promise<KvEventsContainer> {
  try {
    const url = await container.routerUrl();
    const listening = container.logs().find((l) => l.msg === 'router listening') as
      { backends?: Array<{ id: string }> } | undefined;
    const engineUrls = (listening?.backends ?? []).map((b) => b.id);
    const metricsText = async (): Promise<string> => (await request(`${url}/metrics`)).body.text();
    await eventually(
      async () => ((await metricsText()).match(/^prefix_router_backend_healthy\{[^}]*\} 1$/gm) ?? []).length === 2,
      'two engines admitted',
      60_000,
      200,
    );
    const batchesByEngine = async (): Promise<Map<string, number>> => {
      const counts = new Map<string, number>();
      for (const m of (await metricsText()).matchAll(
        /^prefix_router_kv_event_batches_total\{engine="([^"]+)"\} (\d+)$/gm,
      ))
        counts.set(m[1], Number(m[2]));
      return counts;
    };
    const send = async (target: string, engineOf: (instanceHeader: string) => string, system: string, user: string) => {
      const before = await batchesByEngine();
      const res = await request(`${target}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: kvEventsChatBody(system, user),
      });
      const answer = (await res.body.json()) as { usage: { prompt_tokens_details?: { cached_tokens?: number } } };
      if (res.statusCode !== 200) throw new Error(`${target} answered ${res.statusCode}: ${JSON.stringify(answer)}`);
      const instance = engineOf(String(res.headers['x-prefix-router-instance']));
      await eventually(
        async () => ((await batchesByEngine()).get(instance) ?? 0) > (before.get(instance) ?? 0),
        `a KV event batch from ${instance}`,
        10_000,
        20,
      );
      const decision = res.headers['x-prefix-router-decision'];
      return {
        instance,
        predicted: Number(res.headers['x-prefix-router-predicted-cached-tokens']),
        delivered: answer.usage.prompt_tokens_details?.cached_tokens ?? 0,
        decision: typeof decision === 'string' ? decision : undefined,
      };
    };
    const engineOfBackend = (name: string): string => engineUrls[Number(name.replace(/^backend-/, '')) - 1] ?? name;
    return {
      url,
      engineUrls,
      batchesByEngine,
      chat: (system, user) => send(url, engineOfBackend, system, user),
      chatAround: (engineUrl, system, user) => send(engineUrl, () => engineUrl, system, user),
    };
  } catch (err) {
    container.killAll();
    await container.exited;
    throw err;
  }
}
