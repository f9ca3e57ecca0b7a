import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { compiledCli } from '../../compiled-dist';
import { ContainerProcess, eventually, isAlive, ROOT, type LogLine } from './container-process';
import { kvEventsChatBody } from './kv-events-container';

/**
 * The real `prefix-router container` with PREFIX_ROUTER_ENGINE_KV_EVENTS=on and a Hugging Face model id the hub cache
 * does not hold: the default engine command (`python3 -m vllm.entrypoints.openai.api_server`) runs
 * fixtures/hub-download-engine.sh, which downloads the model's tokenizer into the cache after a delay, as vLLM does,
 * then serves as an emulated engine publishing KV events. The sidecar starts once the file is there, with it.
 */
const MODEL_ID = 'example-org/hub-model';
const LLAMA_TOKENIZER_DIR = join(ROOT, 'node_modules', '@lenml', 'tokenizer-llama3_1', 'models');

describe('when the engine downloads the Hugging Face model (and its tokenizer) after the container starts', () => {
  let scratch: string;
  let cache: string;
  const running: ContainerProcess[] = [];

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'hub-download-'));
    symlinkSync(join(__dirname, 'fixtures', 'hub-download-engine.sh'), join(scratch, 'python3'));
  });
  beforeEach(() => {
    cache = mkdtempSync(join(scratch, 'hub-'));
  });
  afterEach(async () => {
    for (const c of running.splice(0)) {
      c.killAll();
      await c.exited;
    }
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  /** A sagemaker-mode container serving MODEL_ID from HF_MODEL_ID, its one engine the fixture. */
  function startContainer(delayMs: string, env: Record<string, string> = {}): ContainerProcess {
    const container = new ContainerProcess({
      HF_MODEL_ID: MODEL_ID,
      HF_HUB_CACHE: cache,
      PATH: `${scratch}:${process.env.PATH ?? ''}`,
      HUB_ENGINE_DELAY_MS: delayMs,
      HUB_ENGINE_TOKENIZER_DIR: LLAMA_TOKENIZER_DIR,
      HUB_ENGINE_NODE: process.execPath,
      HUB_ENGINE_CLI: compiledCli(),
      PREFIX_ROUTER_GPUS: '1',
      PREFIX_ROUTER_POLICY: 'cache-aware',
      PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on',
      PREFIX_ROUTER_HEALTH_INTERVAL_MS: '200',
      PREFIX_ROUTER_EMF: 'off',
      ...env,
    });
    running.push(container);
    return container;
  }

  const indexOf = (logs: readonly LogLine[], msg: string): number => logs.findIndex((l) => l.msg === msg);
  const snapshotTokenizer = (): string =>
    join(
      cache,
      'models--example-org--hub-model',
      'snapshots',
      '0123456789abcdef0123456789abcdef01234567',
      'tokenizer.json',
    );

  it('GIVEN the tokenizer lands in the hub cache 1.5 s after the engine starts THEN the sidecar starts after it, with it, and follows the engine', async () => {
    const container = startContainer('1500');
    const url = await container.routerUrl();
    const logs = container.logs();
    const [started, waiting, downloaded, listening] = [
      'engine started',
      "waiting for the engine to download the model's tokenizer before the router starts",
      'the engine downloaded the tokenizer',
      'router listening',
    ].map((msg) => indexOf(logs, msg));
    expect(started).toBeGreaterThanOrEqual(0);
    expect([started < waiting, waiting < downloaded, downloaded < listening]).toEqual([true, true, true]);
    expect(logs[downloaded]).toMatchObject({ tokenizer: snapshotTokenizer() });
    expect(logs[downloaded].afterMs).toBeGreaterThanOrEqual(1_000);
    await eventually(
      async () => (await request(`${url}/ping`).then(async (r) => (await r.body.dump(), r.statusCode))) === 200,
      'the engine admitted',
      30_000,
      100,
    );
    const res = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: kvEventsChatBody('You check delivery notes. '.repeat(20), 'is this one complete?'),
    });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    // The sidecar subscribed to the engine's events: the request's blocks came back as a batch.
    await eventually(
      async () =>
        /^prefix_router_kv_event_batches_total\{[^}]*\} [1-9]/m.test(
          await (await request(`${url}/metrics`)).body.text(),
        ),
      'a KV event batch applied',
      10_000,
      50,
    );
  });

  it('GIVEN the tokenizer never lands within PREFIX_ROUTER_TOKENIZER_WAIT_MS THEN the container exits 1 naming where it looked, its engine gone', async () => {
    const container = startContainer('never', { PREFIX_ROUTER_TOKENIZER_WAIT_MS: '1000' });
    const exit = await container.exited;
    expect(exit.code).toBe(1);
    expect(container.stderr).toContain(
      `PREFIX_ROUTER_TOKENIZER_WAIT_MS=1000 ms: none at ${join(cache, 'models--example-org--hub-model', 'snapshots')}/COMMIT, with refs/main not written yet/tokenizer.json (model ${MODEL_ID}, revision main)`,
    );
    expect(indexOf(container.logs(), 'router listening')).toBe(-1);
    const pid = container.logs().find((l) => l.msg === 'engine started')?.pid as number;
    await eventually(() => !isAlive(pid), 'the engine gone', 5_000, 50);
    expect(existsSync(snapshotTokenizer())).toBe(false);
  });

  it('GIVEN the engine exits at once (an unknown model id) as often as PREFIX_ROUTER_ENGINE_START_ATTEMPTS allows THEN the wait ends: exit 1 with its last lines, not the timeout', async () => {
    const container = startContainer('fail', {
      PREFIX_ROUTER_ENGINE_START_ATTEMPTS: '2',
      PREFIX_ROUTER_RESTART_BACKOFF_MS: '100',
    });
    const exit = await container.exited;
    expect(exit.code).toBe(1);
    expect(container.stderr).toContain(`engine-0 exited 2 times (last: code 1) without ever passing its health check`);
    expect(container.stderr).toContain(`${MODEL_ID}: repository not found`);
    expect(container.stderr).not.toContain('PREFIX_ROUTER_TOKENIZER_WAIT_MS=');
    expect(indexOf(container.logs(), 'router listening')).toBe(-1);
  });

  it('GIVEN SIGTERM while the container waits for the tokenizer THEN the engine stops and the container exits 0', async () => {
    const container = startContainer('never');
    await container.waitForLog(
      (l) => l.msg === "waiting for the engine to download the model's tokenizer before the router starts",
      'the wait',
    );
    const pid = container.logs().find((l) => l.msg === 'engine started')?.pid as number;
    container.child.kill('SIGTERM');
    expect((await container.exited).code).toBe(0);
    expect(container.stderr).toContain('stopped before the router started');
    await eventually(() => !isAlive(pid), 'the engine gone', 5_000, 50);
  });
});
