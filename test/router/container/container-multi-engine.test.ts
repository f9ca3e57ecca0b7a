import { request } from 'undici';
import { ContainerProcess, emulatorEngineCommand, eventually, isAlive } from './container-process';

/**
 * The real `prefix-router container` in multi-engine mode with three emulated engines on loopback: prefix
 * affinity across engines, and an engine killed with SIGKILL (ejected, the others keep serving, restarted,
 * re-admitted, its prefixes come back to it).
 */
const MODEL = 'tiny-emulated-model';
const PREFIX_LENGTH = 1024;
const GROUPS = 12;

/** A prompt whose first PREFIX_LENGTH characters are the group's and the rest vary. */
function prompt(group: number, variant: number): string {
  const shared = `group ${group} system prompt. `.repeat(80).slice(0, PREFIX_LENGTH + 16);
  return `${shared} question ${variant}`;
}

/** Backend URLs in configuration order, from the router's start log: `backend-N` is the N-th. */
let backendUrls: string[] = [];

async function chat(url: string, group: number, variant: number): Promise<{ status: number; instance: string }> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content: prompt(group, variant) }],
      max_tokens: 2,
    }),
  });
  await res.body.dump();
  const name = String(res.headers['x-prefix-router-instance']);
  return { status: res.statusCode, instance: backendUrls[Number(name.replace(/^backend-/, '')) - 1] ?? name };
}

describe('when prefix-router container runs three emulated engines in multi-engine mode', () => {
  let container: ContainerProcess;
  let url: string;

  beforeAll(async () => {
    container = new ContainerProcess({
      PREFIX_ROUTER_MODE: 'multi-engine',
      PREFIX_ROUTER_ENGINES: '3',
      PREFIX_ROUTER_GPUS: '3',
      PREFIX_ROUTER_ENGINE_COMMAND: emulatorEngineCommand('--time-scale 10'),
      // SageMaker's affinity reproduced among the engines (multi-engine mode's default is cache-aware).
      PREFIX_ROUTER_POLICY: 'sagemaker-prefix-aware',
      PREFIX_ROUTER_PREFIX_LENGTH: String(PREFIX_LENGTH),
      PREFIX_ROUTER_HEALTH_INTERVAL_MS: '200',
      PREFIX_ROUTER_RESTART_BACKOFF_MS: '200',
      PREFIX_ROUTER_EMF: 'off',
      PREFIX_ROUTER_ROUTING_HEADERS: 'instance',
    });
    url = await container.routerUrl();
    const listening = container.logs().find((l) => l.msg === 'router listening') as
      { backends?: Array<{ id: string }> } | undefined;
    backendUrls = (listening?.backends ?? []).map((b) => b.id);
    await eventually(
      async () => {
        const res = await request(`${url}/metrics`);
        const text = await res.body.text();
        return (text.match(/^prefix_router_backend_healthy\{[^}]*\} 1$/gm) ?? []).length === 3;
      },
      'three engines admitted',
      60_000,
      200,
    );
  });

  afterAll(async () => {
    container.killAll();
    await container.exited;
  });

  it('GIVEN three engines THEN each got its own GPU and port, and the log says so', () => {
    const started = container.logs().filter((l) => l.msg === 'engine started');
    expect(started.map((l) => [l.engine, l.gpus, l.tensorParallelSize])).toEqual([
      ['engine-0', '0', 1],
      ['engine-1', '1', 1],
      ['engine-2', '2', 1],
    ]);
    expect(new Set(started.map((l) => l.port)).size).toBe(3);
  });

  it('GIVEN requests sharing a prefix WHEN routed THEN they go to one engine, and different prefixes spread over the engines', async () => {
    const home = new Map<number, string>();
    for (let g = 0; g < GROUPS; g++) {
      const first = await chat(url, g, 0);
      const second = await chat(url, g, 1);
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.instance).toBe(first.instance);
      home.set(g, first.instance);
    }
    expect(new Set(home.values()).size).toBeGreaterThanOrEqual(2);
  });

  it('GIVEN an engine is killed with SIGKILL THEN requests keep succeeding, it is ejected, restarted, re-admitted and gets its prefixes back', async () => {
    const victim = await chat(url, 0, 0);
    const port = Number(new URL(victim.instance).port);
    const startLine = container.logs().find((l) => l.msg === 'engine started' && l.port === port)!;
    const engine = startLine.engine as string;
    const pid = startLine.pid as number;
    process.kill(pid, 'SIGKILL');
    const exited = await container.waitForLog(
      (l) => l.msg === 'engine exited; restarting after backoff' && l.engine === engine,
      'exit log',
    );
    expect(exited).toMatchObject({ pid, signal: 'SIGKILL', restartInMs: 200 });

    // Every group keeps being answered while the engine is down, before and after its ejection: a refused
    // connection is retried on the policy's next choice. (A request in flight on the engine when it died fails.)
    for (let g = 0; g < GROUPS; g++) expect((await chat(url, g, 2)).status).toBe(200);
    const ejected = await container.waitForLog(
      (l) => l.msg === 'backend ejected after failed health checks' && l.backend === victim.instance,
      'ejection',
      15_000,
    );
    expect(ejected.to).toBe('ejected');
    const rerouted = await chat(url, 0, 3);
    expect(rerouted.status).toBe(200);
    expect(rerouted.instance).not.toBe(victim.instance);

    const restarted = await container.waitForLog(
      (l) => l.msg === 'engine started' && l.engine === engine,
      'restart',
      30_000,
      2,
    );
    expect(restarted.port).toBe(port);
    expect(restarted.pid).not.toBe(pid);
    await container.waitForLog(
      (l) => l.msg === 'backend admitted' && l.backend === victim.instance && l.from === 'ejected',
      're-admission',
      60_000,
    );
    expect((await chat(url, 0, 4)).instance).toBe(victim.instance);
  });

  it('GIVEN SIGTERM THEN the container exits 0 and none of its engine processes is left', async () => {
    const pids = [...container.enginePids().values()].flat();
    container.child.kill('SIGTERM');
    expect(await container.exited).toEqual({ code: 0, signal: null });
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
  });
});
