import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { request } from 'undici';
import { ContainerProcess, emulatorEngineCommand, eventually, isAlive } from './container-process';

/**
 * The real `prefix-router container` in sagemaker mode (one engine: `prefix-router emulate`) on loopback:
 * the SageMaker container contract, the OpenAI routes, merged /metrics, EMF lines, and SIGTERM during a stream.
 */
const MODEL = 'tiny-emulated-model';

describe('when prefix-router container runs in sagemaker mode with an emulated engine', () => {
  let container: ContainerProcess;
  let url: string;
  const dir = mkdtempSync(join(tmpdir(), 'sagemaker-mode-'));
  /** The engine starts once this file exists (the first test creates it). */
  const engineGate = join(dir, 'engine-may-start');

  beforeAll(async () => {
    container = new ContainerProcess(
      {
        PREFIX_ROUTER_ENGINE_COMMAND: emulatorEngineCommand('--time-scale 0.1', engineGate),
        PREFIX_ROUTER_HEALTH_INTERVAL_MS: '200',
        PREFIX_ROUTER_EMF_INTERVAL_MS: '300',
        PREFIX_ROUTER_EMF_ENDPOINT_NAME: 'my-endpoint',
        PREFIX_ROUTER_RESTART_BACKOFF_MS: '100',
        PREFIX_ROUTER_ROUTING_HEADERS: 'instance',
      },
      ['container', 'serve'],
    ); // as SageMaker runs it: `docker run IMAGE serve`
    url = await container.routerUrl();
  });

  afterAll(async () => {
    container.killAll();
    await container.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('GIVEN the engine is not ready yet WHEN /ping is called THEN it answers 503, and 200 once the engine passed its health check', async () => {
    // The router listens while its engine waits for the gate file.
    const before = await request(`${url}/ping`);
    expect(before.statusCode).toBe(503);
    await before.body.dump();
    writeFileSync(engineGate, '');
    await eventually(
      async () => {
        const res = await request(`${url}/ping`);
        await res.body.dump();
        return res.statusCode === 200;
      },
      '/ping 200',
      45_000,
      100,
    );
    const started = container.logs().filter((l) => l.msg === 'engine started');
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ engine: 'engine-0', gpus: '' });
  });

  it('GIVEN a ready engine WHEN /invocations gets a chat body THEN the engine answers through the router', async () => {
    const res = await request(`${url}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: 'user', content: 'hello from sagemaker' }],
        max_tokens: 4,
      }),
    });
    const body = (await res.body.json()) as {
      choices: Array<{ message: { content: string } }>;
      usage: { prompt_tokens: number };
    };
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-prefix-router-instance']).toBe('backend-1');
    expect(body.choices[0].message.content.length).toBeGreaterThan(0);
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('GIVEN the OpenAI client WHEN it calls chat (plain and streamed), completions and models THEN each works end to end', async () => {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const chat = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'plain chat' }],
      max_tokens: 3,
    });
    expect(chat.choices[0].message.content?.length).toBeGreaterThan(0);
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'streamed chat' }],
      max_tokens: 3,
      stream: true,
    });
    let deltas = 0;
    for await (const chunk of stream) if (chunk.choices[0]?.delta?.content) deltas++;
    expect(deltas).toBeGreaterThan(0);
    const completion = await client.completions.create({ model: MODEL, prompt: 'a completion', max_tokens: 3 });
    expect(completion.choices[0].text.length).toBeGreaterThan(0);
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain(MODEL);
  });

  it('GIVEN requests were served WHEN /metrics is scraped THEN it holds the router metrics and the engine metrics labelled engine-0', async () => {
    const res = await request(`${url}/metrics`);
    const text = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(text).toMatch(/^prefix_router_requests_total\{.*reason="prefix-affinity".*\} \d+/m);
    expect(text).toMatch(/^vllm:prompt_tokens_total\{prefix_router_engine="engine-0",.*\} [1-9]\d*/m);
    expect(text.match(/^# TYPE vllm:prompt_tokens_total /gm)).toHaveLength(1);
  });

  it('GIVEN EMF is on WHEN an interval passes after requests THEN stdout carries EMF lines for decisions, TTFT and engine tokens', async () => {
    let docs: Array<Record<string, unknown>> = [];
    const sum = (field: string, of: Array<Record<string, unknown>>) =>
      of.reduce((total, d) => total + ((d[field] as number | undefined) ?? 0), 0);
    // Routed so far: /invocations, chat, streamed chat, completions (models is passed through, not routed).
    await eventually(
      () => {
        docs = container.logs().filter((l) => l._aws !== undefined);
        return sum('RoutingDecisions', docs) >= 4 && sum('PromptTokens', docs) > 0;
      },
      'EMF lines',
      10_000,
    );
    const decision = docs.find((d) => d.Reason === 'prefix-affinity')!;
    expect(decision).toMatchObject({
      EndpointName: 'my-endpoint',
      _aws: {
        CloudWatchMetrics: [
          {
            Namespace: 'PrefixRouter',
            Dimensions: [['EndpointName', 'Reason']],
            Metrics: [{ Name: 'RoutingDecisions', Unit: 'Count' }],
          },
        ],
      },
    });
    expect(
      sum(
        'RoutingDecisions',
        docs.filter((d) => d.Reason === 'prefix-affinity'),
      ),
    ).toBe(4);
    const ttft = docs.filter((d) => d.TimeToFirstToken !== undefined).flatMap((d) => d.TimeToFirstToken as number[]);
    expect(ttft).toHaveLength(4);
    for (const ms of ttft) expect(ms).toBeGreaterThan(0);
    const engine = docs.find((d) => d.Engine === 'engine-0')!;
    expect(engine).toMatchObject({ EndpointName: 'my-endpoint', PredictedCachedTokens: 0 });
    expect(typeof engine.ReportedCachedTokens).toBe('number');
  });

  it('GIVEN the engine is killed WHEN /ping is called THEN it fails until the restarted engine passes its health checks again', async () => {
    const pid = container.enginePids().get('engine-0')![0];
    process.kill(pid, 'SIGKILL');
    const pingStatus = async (): Promise<number> => {
      const res = await request(`${url}/ping`);
      await res.body.dump();
      return res.statusCode;
    };
    await eventually(async () => (await pingStatus()) === 503, '/ping 503 after the engine died', 10_000, 50);
    const exited = await container.waitForLog(
      (l) => l.msg === 'engine exited; restarting after backoff',
      'engine exit log',
    );
    expect(exited).toMatchObject({ engine: 'engine-0', pid, signal: 'SIGKILL' });
    await container.waitForLog((l) => l.msg === 'engine started', 'engine restarted', 45_000, 2);
    await eventually(async () => (await pingStatus()) === 200, '/ping 200 after the restart', 45_000, 100);
  });

  it('GIVEN a stream in flight WHEN the container gets SIGTERM THEN the stream completes, the process exits 0 and no engine process is left', async () => {
    const enginePids = [...container.enginePids().values()].flat();
    expect(enginePids.length).toBeGreaterThan(0);
    const res = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: 'user', content: 'a long answer please' }],
        max_tokens: 120,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(res.statusCode).toBe(200);
    let text = '';
    let signalled = false;
    for await (const chunk of res.body) {
      text += (chunk as Buffer).toString();
      if (!signalled && text.includes('"content"')) {
        signalled = true;
        container.child.kill('SIGTERM');
      }
    }
    expect(signalled).toBe(true);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const usage = JSON.parse(
      text
        .split('\n')
        .filter((l) => l.includes('"usage"') && l.includes('completion_tokens'))
        .at(-1)!
        .slice('data: '.length),
    ) as { usage: { completion_tokens: number } };
    expect(usage.usage.completion_tokens).toBe(120);
    const exit = await container.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    for (const pid of enginePids) expect(isAlive(pid)).toBe(false);
    expect(container.logs().some((l) => l.msg === 'container stopped')).toBe(true);
  });
});
