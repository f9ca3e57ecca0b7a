import { statSync } from 'node:fs';
import { request } from 'undici';
import { eventually, type ContainerProcess } from './container-process';
import { kvEventsContainerOf, launchKvEventsContainer, type KvEventsContainer } from './kv-events-container';

/**
 * The real `prefix-router container` in multi-engine mode with PREFIX_ROUTER_ENGINE_KV_EVENTS=on and two emulated
 * engines taking vLLM's --kv-events-config (kv-events-container.ts): the engines publish over ZeroMQ (ipc:// PUB
 * sockets, loopback replay ports), the sidecar follows them, and its predicted cached tokens are what the engines
 * delivered, also after an engine empties its cache.
 */
describe('when prefix-router container runs two emulated engines with PREFIX_ROUTER_ENGINE_KV_EVENTS=on', () => {
  let running: KvEventsContainer;
  let container: ContainerProcess;
  let url: string;
  const chat = (system: string, user: string): ReturnType<KvEventsContainer['chat']> => running.chat(system, user);
  const batchesByEngine = (): Promise<Map<string, number>> => running.batchesByEngine();

  beforeAll(async () => {
    container = launchKvEventsContainer();
    running = await kvEventsContainerOf(container);
    url = running.url;
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

  it("GIVEN the engines' PUB sockets THEN their directory is the container user's alone (mode 0700)", () => {
    const starting = container.logs().find((l) => l.msg === 'container starting') as {
      kvEvents?: { socketDir?: string };
    };
    const dir = starting.kvEvents?.socketDir ?? '';
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('GIVEN conversations sharing system prompts WHEN routed THEN each predicted cached count equals what the engine delivered', async () => {
    const systems = ['You answer questions about invoices. '.repeat(10), 'You review pull requests kindly. '.repeat(8)];
    const answers: Awaited<ReturnType<typeof chat>>[] = [];
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

  it('GIVEN an engine killed and restarted by the container THEN the router predicts 0 cached tokens there, as delivered', async () => {
    const system = 'You translate customs declarations faithfully. '.repeat(9);
    await chat(system, 'first');
    const warm = await chat(system, 'second');
    expect(warm.delivered).toBeGreaterThan(0);
    const port = Number(new URL(warm.instance).port);
    const started = container.logs().find((l) => l.msg === 'engine started' && l.port === port)!;
    process.kill(started.pid as number, 'SIGKILL');
    await container.waitForLog(
      (l) => l.msg === 'engine started' && l.engine === started.engine,
      'the restart',
      30_000,
      2,
    );
    await eventually(
      async () =>
        (await request(`${warm.instance}/health`)
          .then(async (r) => (await r.body.dump(), r.statusCode))
          .catch(() => 0)) === 200,
      'the restarted engine answering',
      30_000,
      50,
    );
    // Re-admitted by the router's health checks, then asked again: its cache is empty, and so is the prediction.
    await eventually(
      async () => {
        const text = await (await request(`${url}/metrics`)).body.text();
        return (text.match(/^prefix_router_backend_healthy\{[^}]*\} 1$/gm) ?? []).length === 2;
      },
      'both engines admitted again',
      30_000,
      100,
    );
    // The router may place it on the other engine when that one holds the prefix too (cache-aware's choice); wherever
    // it lands the prediction is the engine's account, and an account the restart did not empty would predict a hit
    // the empty engine cannot deliver.
    const cold = await chat(system, 'third');
    expect(cold.predicted).toBe(cold.delivered);
    if (cold.instance === warm.instance) expect(cold).toMatchObject({ predicted: 0, delivered: 0 });
  });

  it("GIVEN the requests above THEN no prompt text reached the container's output (router, engines, events)", () => {
    for (const text of ['questions about invoices', 'shipping manifests', 'pull requests kindly'])
      expect(`${container.stdout}${container.stderr}`).not.toContain(text);
  });
});
