import { request } from 'undici';
import { ContainerProcess, emulatorEngineCommand, eventually } from './container-process';

/**
 * The real `prefix-router container` in multi-engine mode with PREFIX_ROUTER_ENGINE_KV_EVENTS=on and two emulated
 * engines taking vLLM's --kv-events-config: the engines publish over ZeroMQ (ipc:// PUB sockets, loopback replay
 * ports), the sidecar follows them, and its predicted cached tokens are what the engines delivered, also after an
 * engine empties its cache.
 */
const MODEL = 'tiny-emulated-model';

function body(system: string, user: string): string {
  return JSON.stringify({
    model: MODEL,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    max_tokens: 2,
  });
}

interface Answer {
  readonly instance: string;
  readonly predicted: number;
  readonly delivered: number;
}

describe('when prefix-router container runs two emulated engines with PREFIX_ROUTER_ENGINE_KV_EVENTS=on', () => {
  let container: ContainerProcess;
  let url: string;
  /** backend-N → the engine's URL, from the router's start log. */
  let backendUrl: (name: string) => string;

  /** The router's applied batches per engine URL, from its /metrics. */
  async function batchesByEngine(): Promise<Map<string, number>> {
    const text = await (await request(`${url}/metrics`)).body.text();
    const counts = new Map<string, number>();
    for (const m of text.matchAll(/^prefix_router_kv_event_batches_total\{engine="([^"]+)"\} (\d+)$/gm))
      counts.set(m[1], Number(m[2]));
    return counts;
  }

  /** Sends a chat, then waits (bounded) until the router applied a further batch from the engine that served it. */
  async function chat(system: string, user: string): Promise<Answer> {
    const before = await batchesByEngine();
    const res = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(system, user),
    });
    const answer = (await res.body.json()) as { usage: { prompt_tokens_details?: { cached_tokens?: number } } };
    expect(res.statusCode).toBe(200);
    const instance = backendUrl(String(res.headers['x-prefix-router-instance']));
    await eventually(
      async () => ((await batchesByEngine()).get(instance) ?? 0) > (before.get(instance) ?? 0),
      `a KV event batch from ${instance}`,
      10_000,
      20,
    );
    return {
      instance,
      predicted: Number(res.headers['x-prefix-router-predicted-cached-tokens']),
      delivered: answer.usage.prompt_tokens_details?.cached_tokens ?? 0,
    };
  }

  beforeAll(async () => {
    container = new ContainerProcess({
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
    });
    url = await container.routerUrl();
    const listening = container.logs().find((l) => l.msg === 'router listening') as
      { backends?: Array<{ id: string }> } | undefined;
    const urls = (listening?.backends ?? []).map((b) => b.id);
    backendUrl = (name) => urls[Number(name.replace(/^backend-/, '')) - 1] ?? name;
    await eventually(
      async () => {
        const text = await (await request(`${url}/metrics`)).body.text();
        return (text.match(/^prefix_router_backend_healthy\{[^}]*\} 1$/gm) ?? []).length === 2;
      },
      'two engines admitted',
      60_000,
      200,
    );
  });

  afterAll(async () => {
    container.killAll();
    await container.exited;
  });

  it('GIVEN two engines THEN each got its own --kv-events-config: an ipc:// PUB socket and a loopback replay port apart from the HTTP ports', () => {
    const started = container.logs().filter((l) => l.msg === 'engine started');
    expect(started).toHaveLength(2);
    const configs = started.map((l) => {
      const argv = l.argv as string[];
      return JSON.parse(argv[argv.indexOf('--kv-events-config') + 1]) as Record<string, unknown>;
    });
    for (const [i, config] of configs.entries()) {
      expect(config).toMatchObject({ enable_kv_cache_events: true, publisher: 'zmq' });
      expect(config.endpoint).toMatch(new RegExp(`^ipc:///.+/engine-${i}\\.kv$`));
      expect(config.replay_endpoint).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    }
    const replayPorts = configs.map((c) => Number(String(c.replay_endpoint).split(':').pop()));
    const httpPorts = started.map((l) => l.port as number);
    expect(new Set([...replayPorts, ...httpPorts]).size).toBe(4);
  });

  it('GIVEN conversations sharing system prompts WHEN routed THEN each predicted cached count equals what the engine delivered', async () => {
    const systems = ['You answer questions about invoices. '.repeat(10), 'You review pull requests kindly. '.repeat(8)];
    const answers: Answer[] = [];
    for (let turn = 0; turn < 3; turn++) {
      for (const [s, system] of systems.entries()) answers.push(await chat(system, `question ${turn} for ${s}`));
    }
    for (const a of answers) expect(a.predicted).toBe(a.delivered);
    // Later turns hit the cache: the comparison is not 0 = 0 throughout.
    expect(answers.slice(2).every((a) => a.delivered > 0)).toBe(true);
  });

  it('GIVEN an engine empties its prefix cache (POST /reset_prefix_cache) THEN the router predicts 0 cached tokens there, as delivered', async () => {
    const system = 'You summarize shipping manifests precisely. '.repeat(9);
    await chat(system, 'first');
    const warm = await chat(system, 'second');
    expect(warm.delivered).toBeGreaterThan(0);
    expect(warm.predicted).toBe(warm.delivered);
    const before = (await batchesByEngine()).get(warm.instance) ?? 0;
    const reset = await request(`${warm.instance}/reset_prefix_cache`, { method: 'POST' });
    await reset.body.dump();
    expect(reset.statusCode).toBe(200);
    await eventually(
      async () => ((await batchesByEngine()).get(warm.instance) ?? 0) > before,
      'the engine cleared event',
      10_000,
      20,
    );
    const cold = await chat(system, 'third');
    expect(cold).toMatchObject({ predicted: 0, delivered: 0 });
  });
});
