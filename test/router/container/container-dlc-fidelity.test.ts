import { join } from 'node:path';
import {
  InvokeEndpointCommand,
  InvokeEndpointWithResponseStreamCommand,
  SageMakerRuntimeClient,
} from '@aws-sdk/client-sagemaker-runtime';
import { request } from 'undici';
import { compiledDist } from '../../compiled-dist';
import { ContainerProcess, eventually } from './container-process';

/**
 * What the AWS vLLM DLC's own entrypoint and server do, kept by the sidecar (aws/deep-learning-containers
 * scripts/docker/vllm/, docs/container.md "Differences from the DLC's entrypoint"), with the real `prefix-router
 * container`, real engine processes and the real SageMaker runtime client on loopback.
 */
/** fixtures/stateful-engine.ts, compiled (test/compiled-dist.ts). */
const FIXTURE = join(compiledDist(), 'test', 'router', 'container', 'fixtures', 'stateful-engine.js');
const statefulEngine = `'${process.execPath}' '${FIXTURE}' {port}`;

function sdk(url: string): SageMakerRuntimeClient {
  return new SageMakerRuntimeClient({
    endpoint: url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
    maxAttempts: 1,
  });
}

async function pingStatus(url: string): Promise<number> {
  const res = await request(`${url}/ping`);
  await res.body.dump();
  return res.statusCode;
}

describe('when a client uses SageMaker stateful sessions and custom attributes through the sidecar', () => {
  let container: ContainerProcess;
  let url: string;

  beforeAll(async () => {
    container = new ContainerProcess(
      {
        PREFIX_ROUTER_ENGINE_COMMAND: statefulEngine,
        PREFIX_ROUTER_GPUS: '0',
        PREFIX_ROUTER_HEALTH_INTERVAL_MS: '200',
        PREFIX_ROUTER_EMF: 'off',
      },
      ['container', 'serve'],
    );
    url = await container.routerUrl();
    await eventually(async () => (await pingStatus(url)) === 200, '/ping 200', 45_000);
  });

  afterAll(async () => {
    container.killAll();
    await container.exited;
  });

  it('GIVEN SessionId NEW_SESSION WHEN the runtime client invokes THEN NewSessionId is what the engine assigned, later calls reach that session, and CLOSE returns ClosedSessionId', async () => {
    const client = sdk(url);
    const body = (o: unknown): string => JSON.stringify(o);
    // WHEN a session is opened (the runtime client's documented SessionId: NEW_SESSION)
    const opened = await client.send(
      new InvokeEndpointCommand({
        EndpointName: 'ep',
        ContentType: 'application/json',
        Body: body({ prompt: 'hi' }),
        SessionId: 'NEW_SESSION',
      }),
    );
    // THEN the engine's `ID; Expires=...` reaches the caller in the pattern the runtime API documents
    expect(opened.NewSessionId).toMatch(/^[a-zA-Z0-9](-*[a-zA-Z0-9])*;\sExpires=\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const id = opened.NewSessionId!.split(';')[0];
    // WHEN the next calls name the session (plain and streamed)
    const turn = await client.send(
      new InvokeEndpointCommand({
        EndpointName: 'ep',
        ContentType: 'application/json',
        Body: body({ prompt: 'again' }),
        SessionId: id,
      }),
    );
    expect(JSON.parse(Buffer.from(turn.Body).toString())).toMatchObject({ session: id, turns: 1 });
    const streamed = await client.send(
      new InvokeEndpointWithResponseStreamCommand({
        EndpointName: 'ep',
        ContentType: 'application/json',
        Body: body({ stream: true }),
        SessionId: id,
      }),
    );
    let text = '';
    for await (const e of streamed.Body!) if (e.PayloadPart?.Bytes) text += Buffer.from(e.PayloadPart.Bytes).toString();
    expect(text).toContain(`"session":"${id}","turns":2`);
    // WHEN it is closed THEN ClosedSessionId names it, and the engine refuses it afterwards (400 as ModelError)
    const closed = await client.send(
      new InvokeEndpointCommand({
        EndpointName: 'ep',
        ContentType: 'application/json',
        Body: body({ requestType: 'CLOSE' }),
        SessionId: id,
      }),
    );
    expect(closed.ClosedSessionId).toBe(id);
    await expect(
      client.send(
        new InvokeEndpointCommand({
          EndpointName: 'ep',
          ContentType: 'application/json',
          Body: body({}),
          SessionId: id,
        }),
      ),
    ).rejects.toMatchObject({
      name: 'ModelError',
      OriginalStatusCode: 400,
    });
  });

  it('GIVEN CustomAttributes WHEN invoked plainly or streamed THEN the engine receives them unchanged and its answer attributes come back', async () => {
    const client = sdk(url);
    const attributes = 'route=/v1/completions,trace=abc 123';
    const plain = await client.send(
      new InvokeEndpointCommand({
        EndpointName: 'ep',
        ContentType: 'application/json',
        Body: '{}',
        CustomAttributes: attributes,
      }),
    );
    expect(JSON.parse(Buffer.from(plain.Body).toString())).toMatchObject({
      path: '/invocations',
      customAttributes: attributes,
    });
    expect(plain.CustomAttributes).toBe(`echo:${attributes}`);
    const streamed = await client.send(
      new InvokeEndpointWithResponseStreamCommand({
        EndpointName: 'ep',
        ContentType: 'application/json',
        Body: '{"stream":true}',
        CustomAttributes: attributes,
      }),
    );
    for await (const e of streamed.Body!) void e;
    expect(streamed.CustomAttributes).toBe(`echo:${attributes}`);
    // The container contract path, as SageMaker itself calls it.
    const direct = await request(`${url}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-amzn-sagemaker-custom-attributes': attributes },
      body: '{}',
    });
    expect(((await direct.body.json()) as { customAttributes: string }).customAttributes).toBe(attributes);
  });
});

describe('when sessions are used in multi-engine mode', () => {
  it('GIVEN round-robin among 3 engines WHEN a session is opened THEN every call naming it reaches the engine that opened it, until it is closed', async () => {
    const container = new ContainerProcess({
      PREFIX_ROUTER_MODE: 'multi-engine',
      PREFIX_ROUTER_ENGINES: '3',
      PREFIX_ROUTER_POLICY: 'round-robin', // without the session, consecutive calls would go to other engines
      PREFIX_ROUTER_ENGINE_COMMAND: statefulEngine,
      PREFIX_ROUTER_GPUS: '0',
      PREFIX_ROUTER_HEALTH_INTERVAL_MS: '200',
      PREFIX_ROUTER_EMF: 'off',
    });
    try {
      const url = await container.routerUrl();
      await container.waitForLog((l) => l.msg === 'backend admitted', 'three engines admitted', 45_000, 3);
      const client = sdk(url);
      const invoke = async (sessionId: string, body: unknown = {}) => {
        const out = await client.send(
          new InvokeEndpointCommand({
            EndpointName: 'ep',
            ContentType: 'application/json',
            Body: JSON.stringify(body),
            SessionId: sessionId,
          }),
        );
        return { out, echo: JSON.parse(Buffer.from(out.Body).toString()) as { port: number; turns: number } };
      };
      const opened = await invoke('NEW_SESSION');
      const id = opened.out.NewSessionId!.split(';')[0];
      const ports = new Set<number>([opened.echo.port]);
      for (let turn = 1; turn <= 6; turn++) {
        const { echo } = await invoke(id);
        expect(echo.turns).toBe(turn);
        ports.add(echo.port);
      }
      expect(ports.size).toBe(1);
      const closed = await invoke(id, { requestType: 'CLOSE' });
      expect(closed.out.ClosedSessionId).toBe(id);
      // Closed: no engine knows it any more, and the router no longer pins it.
      await expect(invoke(id)).rejects.toMatchObject({ name: 'ModelError', OriginalStatusCode: 400 });
    } finally {
      container.killAll();
      await container.exited;
    }
  });
});

describe('when the only engine of sagemaker mode answers /health slowly under load', () => {
  it('GIVEN health checks that time out THEN it stays admitted and serving (fail open); GIVEN an error status THEN it is ejected', async () => {
    const container = new ContainerProcess({
      PREFIX_ROUTER_ENGINE_COMMAND: statefulEngine,
      PREFIX_ROUTER_GPUS: '0',
      PREFIX_ROUTER_EMF: 'off',
      PREFIX_ROUTER_HEALTH_INTERVAL_MS: '100',
      PREFIX_ROUTER_HEALTH_TIMEOUT_MS: '200',
      PREFIX_ROUTER_HEALTH_FAILURE_THRESHOLD: '2',
      HEALTH_DELAY_MS: '600',
    });
    try {
      const url = await container.routerUrl();
      await eventually(async () => (await pingStatus(url)) === 200, '/ping 200', 45_000);
      const enginePort = (container.logs().find((l) => l.msg === 'engine started')?.port as number) ?? 0;
      // GIVEN every check now takes 600 ms against a 200 ms timeout (2 failures would eject)
      await (await request(`http://127.0.0.1:${enginePort}/slow-health`, { method: 'POST' })).body.dump();
      // WHEN ten check periods pass THEN /ping stays 200 and requests are served
      for (let i = 0; i < 10; i++) {
        expect(await pingStatus(url)).toBe(200);
        const res = await request(`${url}/invocations`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        expect(res.statusCode).toBe(200);
        await res.body.dump();
        await new Promise((r) => setTimeout(r, 150));
      }
      expect(container.logs().some((l) => l.msg === 'backend ejected after failed health checks')).toBe(false);
      // WHEN /health answers 500 (a verdict, not a timeout) THEN the engine is ejected and /ping fails
      await (await request(`http://127.0.0.1:${enginePort}/fail-health`, { method: 'POST' })).body.dump();
      await eventually(async () => (await pingStatus(url)) === 503, '/ping 503 after /health errors', 10_000);
    } finally {
      container.killAll();
      await container.exited;
    }
  });

  it('GIVEN the container defaults THEN sagemaker mode gives the router a 10 s health timeout and multi-engine mode keeps the router default', async () => {
    const { routerEnvironment, parseContainerEnv } = await import('../../../router/src/container');
    expect(
      routerEnvironment({}, parseContainerEnv({}).settings, ['http://127.0.0.1:1']).PREFIX_ROUTER_HEALTH_TIMEOUT_MS,
    ).toBe('10000');
    expect(
      routerEnvironment({ PREFIX_ROUTER_HEALTH_TIMEOUT_MS: '500' }, parseContainerEnv({}).settings, ['x'])
        .PREFIX_ROUTER_HEALTH_TIMEOUT_MS,
    ).toBe('500');
    const multi = parseContainerEnv({ PREFIX_ROUTER_MODE: 'multi-engine', PREFIX_ROUTER_ENGINES: '2' }).settings;
    expect(routerEnvironment({}, multi, ['x', 'y']).PREFIX_ROUTER_HEALTH_TIMEOUT_MS).toBeUndefined();
  });
});

describe('when an engine never becomes healthy and keeps exiting', () => {
  it.each([
    ['1', 1],
    ['3', 3],
  ])(
    "GIVEN PREFIX_ROUTER_ENGINE_START_ATTEMPTS=%s THEN the container exits 1 after %i failed starts, with the engine's last lines",
    async (attempts, starts) => {
      const container = new ContainerProcess({
        PREFIX_ROUTER_ENGINE_COMMAND: `sh -c 'echo loading weights; echo "OSError: no config.json in /opt/ml/model" >&2; exit 3'`,
        PREFIX_ROUTER_GPUS: '0',
        PREFIX_ROUTER_EMF: 'off',
        PREFIX_ROUTER_HEALTH_INTERVAL_MS: '200',
        PREFIX_ROUTER_RESTART_BACKOFF_MS: '100',
        PREFIX_ROUTER_ENGINE_START_ATTEMPTS: attempts,
      });
      try {
        const { code } = await container.exited;
        expect(code).toBe(1);
        expect(container.logs().filter((l) => l.msg === 'engine started')).toHaveLength(starts);
        const fatal = container
          .logs()
          .find((l) => l.msg === 'engine exited before it ever became healthy; the container exits');
        expect(fatal).toMatchObject({ engine: 'engine-0', attempts: starts, lastExit: 'code 3' });
        expect(fatal?.lastLines).toEqual(
          expect.arrayContaining(['loading weights', 'OSError: no config.json in /opt/ml/model']),
        );
        expect(container.stderr).toContain(
          `engine-0 exited ${starts} times (last: code 3) without ever passing its health check`,
        );
        expect(container.stderr).toContain('  OSError: no config.json in /opt/ml/model');
      } finally {
        container.killAll();
      }
    },
  );

  it('GIVEN PREFIX_ROUTER_ENGINE_START_ATTEMPTS out of range THEN the start is refused naming it', async () => {
    const { parseContainerEnv } = await import('../../../router/src/container');
    expect(() => parseContainerEnv({ PREFIX_ROUTER_ENGINE_START_ATTEMPTS: '0' })).toThrow(
      'PREFIX_ROUTER_ENGINE_START_ATTEMPTS must be an integer between 1 and 100 (got "0")',
    );
    expect(() => parseContainerEnv({ PREFIX_ROUTER_ENGINE_START_ATTEMPTS: '101' })).toThrow(
      'PREFIX_ROUTER_ENGINE_START_ATTEMPTS must be an integer between 1 and 100 (got "101")',
    );
    expect(parseContainerEnv({ PREFIX_ROUTER_ENGINE_START_ATTEMPTS: '100' }).settings.engineStartAttempts).toBe(100);
  });
});

describe('when SAGEMAKER_SAFE_PORT_RANGE is set', () => {
  it.each([
    [{ SAGEMAKER_SAFE_PORT_RANGE: '9000-9999' }, 9000, []],
    [
      { SAGEMAKER_SAFE_PORT_RANGE: '9000-9001', PREFIX_ROUTER_MODE: 'multi-engine', PREFIX_ROUTER_ENGINES: '2' },
      9000,
      [],
    ],
    [{ SAGEMAKER_SAFE_PORT_RANGE: '9000-9999', PREFIX_ROUTER_ENGINE_BASE_PORT: '9100' }, 9100, []],
    [
      { SAGEMAKER_SAFE_PORT_RANGE: '9000-9999', PREFIX_ROUTER_ENGINE_BASE_PORT: '8100' },
      8100,
      [
        "PREFIX_ROUTER_ENGINE_BASE_PORT=8100 puts the engines outside SAGEMAKER_SAFE_PORT_RANGE (9000-9999), which SageMaker keeps free for the container's own processes",
      ],
    ],
    [{}, 8100, []],
  ])('GIVEN %p THEN engines start at %i', async (env, base, warnings) => {
    const { parseContainerEnv } = await import('../../../router/src/container');
    const parsed = parseContainerEnv(env);
    expect(parsed.settings.engineBasePort).toBe(base);
    expect(parsed.warnings).toEqual(warnings);
  });

  it.each([
    [
      { SAGEMAKER_SAFE_PORT_RANGE: '9000-9000', PREFIX_ROUTER_MODE: 'multi-engine', PREFIX_ROUTER_ENGINES: '2' },
      'SAGEMAKER_SAFE_PORT_RANGE must hold a port for each of the 2 engines (got "9000-9000")',
    ],
    [
      { SAGEMAKER_SAFE_PORT_RANGE: '9999-9000' },
      'SAGEMAKER_SAFE_PORT_RANGE must be two ports LOW-HIGH with 1 <= LOW <= HIGH <= 65535 (got "9999-9000")',
    ],
    [
      { SAGEMAKER_SAFE_PORT_RANGE: '0-10' },
      'SAGEMAKER_SAFE_PORT_RANGE must be two ports LOW-HIGH with 1 <= LOW <= HIGH <= 65535 (got "0-10")',
    ],
    [
      { SAGEMAKER_SAFE_PORT_RANGE: '9000-65536' },
      'SAGEMAKER_SAFE_PORT_RANGE must be two ports LOW-HIGH with 1 <= LOW <= HIGH <= 65535 (got "9000-65536")',
    ],
    [
      { SAGEMAKER_SAFE_PORT_RANGE: '9000' },
      'SAGEMAKER_SAFE_PORT_RANGE must be two ports LOW-HIGH with 1 <= LOW <= HIGH <= 65535 (got "9000")',
    ],
  ])('GIVEN %p THEN the start is refused: %s', async (env, problem) => {
    const { parseContainerEnv } = await import('../../../router/src/container');
    expect(() => parseContainerEnv(env)).toThrow(problem);
  });

  it('GIVEN 1-65535 THEN the widest range is accepted', async () => {
    const { parseContainerEnv } = await import('../../../router/src/container');
    expect(parseContainerEnv({ SAGEMAKER_SAFE_PORT_RANGE: '1-65535' }).settings.safePortRange).toEqual({
      min: 1,
      max: 65535,
    });
  });
});
