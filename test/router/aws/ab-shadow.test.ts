import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import {
  SageMakerClient,
  type CreateEndpointConfigCommandInput,
  type CreateInferenceComponentCommandInput,
} from '@aws-sdk/client-sagemaker';
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configCopyInput } from '../../../router/src/aws/routing-ab';
import { buildShadowPlan, shadowResourceName } from '../../../router/src/aws/shadow-ab';
import type { EndpointFacts } from '../../../router/src/aws/endpoint-facts';
import { parseAbArgv, runAbCommand } from '../../../router/src/cli/ab-command';
import { runAwsCli } from './helpers/aws-cli';
import { fakeCloudWatch, type CloudWatchFake } from './helpers/cloudwatch-fake';
import { startLocalAdapterEndpoint, TIME_SCALE, type LocalAdapterEndpoint } from './helpers/local-endpoint';
import {
  describedConfig,
  ENDPOINT_NAME,
  ORIGINAL_CONFIG,
  SageMakerControlPlane,
  type ControlPlaneOptions,
  type FaultKind,
  type RequestRecord,
} from './helpers/sagemaker-control-plane';
import { VirtualClock } from './helpers/virtual-clock';
import { captureIo } from './helpers/capture-io';

/**
 * `prefix-router ab --shadow` end to end, in process: the control plane is the stateful SageMaker fake (the real SDK
 * client over HTTP), the live endpoint hosts a base component and a LoRA adapter, and the shadows' data plane is the
 * real router in front of emulated vLLM engines that serve the shadows' adapters (a request names its shadow's
 * adapter in InferenceComponentName and `model`, and the router sends it only to engines serving that adapter, as
 * SageMaker sends it only to instances holding the component). Time is virtual.
 *
 * The invariant under test, after every run however it ends: no mutating call named the live endpoint, its
 * configuration or its components; and every resource the run created is gone, or the run exited 3 listing exactly
 * the resources left, with commands that delete them (run here).
 */
const WORKLOAD =
  'shared-system?groups=2&promptsPerGroup=2&systemTokens=300&questionTokens=20&outputTokens=4&concurrency=2';
const RUN_ID = 'test1';
const BASE = 'llama-base';
const ADAPTER = 'sql';
const SHADOW_ADAPTERS = [0, 1].map((i) => shadowResourceName(RUN_ID, i, ADAPTER));

const LIVE_COMPONENTS: ControlPlaneOptions['inferenceComponents'] = [
  {
    name: BASE,
    environment: { SM_VLLM_SERVED_MODEL_NAME: 'base', SM_VLLM_ENABLE_LORA: 'true' },
    copies: 2,
    specification: {
      ComputeResourceRequirements: { NumberOfAcceleratorDevicesRequired: 1, MinMemoryRequiredInMb: 16384 },
      StartupParameters: { ContainerStartupHealthCheckTimeoutInSeconds: 900, ModelDataDownloadTimeoutInSeconds: 1200 },
    },
  },
  { name: ADAPTER, base: BASE, specification: { Container: { ArtifactUrl: 's3://my-bucket/adapters/sql/' } } },
];

/** JSON round trip: what the fake received is JSON. */
const wire = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

const ok = (fake: SageMakerControlPlane, op: string): RequestRecord[] =>
  fake.requests.filter((r) => r.op === op && r.error === undefined);

describe('when prefix-router ab --shadow runs on an endpoint that hosts inference components', () => {
  let local: LocalAdapterEndpoint;
  let runtime: SageMakerRuntimeClient;
  let fake: SageMakerControlPlane;
  let cloud: CloudWatchFake;
  let dir: string;
  const clients: SageMakerClient[] = [];

  beforeAll(async () => {
    // Two engines, each serving the base model and both shadows' copies of the adapter (a shadow's instances).
    local = await startLocalAdapterEndpoint([SHADOW_ADAPTERS, SHADOW_ADAPTERS]);
    runtime = local.runtime;
  }, 60_000);
  afterAll(() => local.close());
  beforeEach(async () => {
    cloud = fakeCloudWatch();
    dir = await mkdtemp(join(tmpdir(), 'ab-shadow-'));
  });
  afterEach(async () => {
    cloud.restore();
    for (const c of clients.splice(0)) c.destroy();
    await fake?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const useFake = async (options: ControlPlaneOptions = {}): Promise<SageMakerControlPlane> => {
    await fake?.close();
    fake = await new SageMakerControlPlane({
      inferenceComponents: LIVE_COMPONENTS,
      instanceCount: 2,
      ...options,
    }).start();
    return fake;
  };
  const smClient = (): SageMakerClient => {
    const c = new SageMakerClient({
      endpoint: fake.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
      maxAttempts: 1,
    });
    clients.push(c);
    return c;
  };
  const ab = async (args: string[], extra: { interrupt?: AbortSignal; sagemaker?: SageMakerClient } = {}) => {
    const io = captureIo();
    const code = await runAbCommand(
      parseAbArgv([
        '--endpoint-name',
        ENDPOINT_NAME,
        '--workload',
        WORKLOAD,
        '--max-requests',
        '4',
        '--warmup',
        '0',
        '--time-scale',
        String(TIME_SCALE),
        '--out',
        dir,
        '--quiet',
        '--no-cloudwatch',
        ...args,
      ]),
      {
        io,
        sagemaker: extra.sagemaker ?? smClient(),
        cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
        runtime,
        clock: new VirtualClock(),
        runId: RUN_ID,
        env: {},
        interrupt: extra.interrupt,
      },
    );
    return { code, out: io.out(), err: io.err() };
  };
  const SHADOW = ['--shadow', '--strategies', 'RANDOM,PREFIX_AWARE', '--inference-component', ADAPTER];
  const RUN = [...SHADOW, '--yes', '--max-shadow-cost-usd', '20'];

  /** The invariant every run must keep, however it ended. */
  async function expectInvariant(r: { code: number; err: string }, context: string): Promise<void> {
    const live = fake.mutationsOfLive().map((q) => `${q.seq} ${q.op}`);
    expect({ live, context }).toEqual({ live: [], context });
    if (r.code === 3) {
      const left = fake.extraResources().sort();
      const listed = /NOT all deleted: (.*) (?:is|are) left/.exec(r.err)?.[1]?.split(', ').sort();
      expect({ listed, context }).toEqual({ listed: left, context });
      const commands = r.err
        .split('\n')
        .filter((l) => l.startsWith('  aws sagemaker '))
        .map((l) => l.trim());
      fake.clearFaults();
      const client = smClient();
      for (const c of commands) {
        // A component may still be settling when the cleanup gave up: let it settle as an operator would wait.
        if (c.startsWith('aws sagemaker delete-inference-component')) {
          const name = c.split(' ').pop()!;
          for (let i = 0; i < 5 && ['Creating', 'Updating'].includes(fake.components.get(name)?.status ?? ''); i++)
            await runAwsCli(`aws sagemaker describe-inference-component --inference-component-name ${name}`, client);
        }
        if (c.startsWith('aws sagemaker delete-endpoint ')) {
          const name = c.split(' ').pop()!;
          for (let i = 0; i < 5 && fake.shadowEndpoints.get(name)?.status === 'Creating'; i++)
            await runAwsCli(`aws sagemaker describe-endpoint --endpoint-name ${name}`, client);
          // Components being deleted are gone once described.
          for (const comp of [...fake.components.values()].filter((x) => x.status === 'Deleting'))
            await runAwsCli(
              `aws sagemaker describe-inference-component --inference-component-name ${comp.name}`,
              client,
            ).catch(() => undefined);
        }
        await runAwsCli(c, client);
      }
      for (const comp of [...fake.components.values()].filter((x) => x.status === 'Deleting'))
        await runAwsCli(
          `aws sagemaker describe-inference-component --inference-component-name ${comp.name}`,
          client,
        ).catch(() => undefined);
    }
    expect({ extra: fake.extraResources(), context }).toEqual({ extra: [], context });
    // The live endpoint is as it was: InService on its configuration, its components InService.
    expect(fake.state).toMatchObject({ status: 'InService', config: ORIGINAL_CONFIG });
    expect(
      [...fake.components.values()].filter((c) => c.endpoint === ENDPOINT_NAME).map((c) => [c.name, c.status]),
    ).toEqual([
      [BASE, 'InService'],
      [ADAPTER, 'InService'],
    ]);
  }

  const contextOf = (r: { code: number; err: string }): string =>
    `exit ${r.code}\n${r.err.slice(-3000)}\n${fake.requests.map((q) => `${q.seq} ${q.op} ${String(q.input.EndpointName ?? q.input.EndpointConfigName ?? q.input.InferenceComponentName ?? '')} ${q.error ?? ''}`).join('\n')}`;

  it('GIVEN no --yes THEN the plan shows the shadows, their cost and the capacity they need, with only reads sent', async () => {
    await useFake();
    const r = await ab(SHADOW);
    expect({ code: r.code, err: r.err }).toMatchObject({ code: 0 });
    expect(r.out).toContain('inference components, read only (nothing on it is changed)');
    expect(r.out).toContain(
      `RANDOM: endpoint abtest1-1-my-llm on configuration abtest1-1-${ORIGINAL_CONFIG}, components abtest1-1-${BASE}, abtest1-1-${ADAPTER}`,
    );
    // 2 instances × $2.60/h × 2 shadows × (40 min provisioning + 10 min run + 10 min delete) = $10.40.
    expect(r.out).toContain('Cost: each shadow is 2 × ml.g6e.2xlarge = $5.20/h; 2 shadows ≈ 60 min each');
    expect(r.out).toContain('≈ $10.40 in all ($10.40/h while they run');
    expect(r.out).toContain('Capacity: 4 more ml.g6e.2xlarge instance(s) at once');
    expect(r.out).toContain(`aws sagemaker delete-inference-component --inference-component-name abtest1-1-${ADAPTER}`);
    expect(r.out).toContain('Nothing was changed or created');
    expect(fake.mutations()).toEqual([]);
  });

  it.each([
    ['no --max-shadow-cost-usd', [...SHADOW, '--yes'], 'acknowledge it with --max-shadow-cost-usd N (N ≥ 11)'],
    [
      'a limit below the estimate',
      [...SHADOW, '--yes', '--max-shadow-cost-usd', '10.39'],
      'exceeds --max-shadow-cost-usd 10.39',
    ],
    ['an unknown price', [...SHADOW, '--yes', '--max-shadow-cost-usd', '100'], "the shadows' price is unknown"],
  ])('GIVEN --yes with %s THEN it refuses (exit 1) and creates nothing', async (what, args, message) => {
    await useFake();
    if (what === 'an unknown price') {
      const config = fake.configs.get(ORIGINAL_CONFIG)!;
      config.ProductionVariants = config.ProductionVariants!.map((v) => ({ ...v, InstanceType: 'ml.g5.12xlarge' }));
    }
    const r = await ab(args);
    expect(r.code).toBe(1);
    expect(r.err).toContain(message);
    expect(fake.mutations()).toEqual([]);
  });

  it('GIVEN a limit equal to the estimate THEN it runs', async () => {
    await useFake();
    const r = await ab([...SHADOW, '--yes', '--max-shadow-cost-usd', '10.40']);
    expect({ code: r.code, err: r.err.slice(-2000) }).toMatchObject({ code: 0 });
  });

  it('GIVEN --yes and the acknowledgement THEN each strategy gets a shadow copied from the live endpoint, both serve the workload side by side, and everything is deleted, adapters first', async () => {
    await useFake();
    const r = await ab(RUN);
    expect({ code: r.code, err: r.err.slice(-3000) }).toMatchObject({ code: 0 });
    await expectInvariant(r, contextOf(r));
    const original = describedConfig();
    original.ProductionVariants = original.ProductionVariants!.map(({ ModelName: _m, ...v }) => ({
      ...v,
      ManagedInstanceScaling: { Status: 'ENABLED', MinInstanceCount: 1, MaxInstanceCount: 2 },
    }));
    const tags = [{ Key: 'prefix-router:ab-run', Value: RUN_ID }];
    const configs = ok(fake, 'CreateEndpointConfig').map((q) => q.input as unknown as CreateEndpointConfigCommandInput);
    const withCount = (c: CreateEndpointConfigCommandInput) => ({
      ...c,
      ProductionVariants: c.ProductionVariants!.map((v) => ({ ...v, InitialInstanceCount: 2 })),
      Tags: tags,
    });
    expect(configs).toEqual(
      wire([
        withCount(configCopyInput(original, `abtest1-1-${ORIGINAL_CONFIG}`, { RoutingStrategy: 'RANDOM' })),
        withCount(
          configCopyInput(original, `abtest1-2-${ORIGINAL_CONFIG}`, {
            RoutingStrategy: 'PREFIX_AWARE',
            PrefixAwareRoutingConfig: { PrefixLength: 8192, ConcurrencyThreshold: 32 },
          }),
        ),
      ]),
    );
    expect(ok(fake, 'CreateEndpoint').map((q) => q.input)).toEqual([
      { EndpointName: 'abtest1-1-my-llm', EndpointConfigName: `abtest1-1-${ORIGINAL_CONFIG}`, Tags: tags },
      { EndpointName: 'abtest1-2-my-llm', EndpointConfigName: `abtest1-2-${ORIGINAL_CONFIG}`, Tags: tags },
    ]);
    const components = ok(fake, 'CreateInferenceComponent').map(
      (q) => q.input as unknown as CreateInferenceComponentCommandInput,
    );
    // Bases (copies as the live one serves, its compute and start-up settings) before adapters (on the shadow's base).
    expect(
      components.map((c) => [
        c.InferenceComponentName,
        c.EndpointName,
        c.Specification?.BaseInferenceComponentName ?? null,
        c.RuntimeConfig?.CopyCount ?? null,
      ]),
    ).toEqual([
      [`abtest1-1-${BASE}`, 'abtest1-1-my-llm', null, 2],
      [`abtest1-2-${BASE}`, 'abtest1-2-my-llm', null, 2],
      [`abtest1-1-${ADAPTER}`, 'abtest1-1-my-llm', `abtest1-1-${BASE}`, null],
      [`abtest1-2-${ADAPTER}`, 'abtest1-2-my-llm', `abtest1-2-${BASE}`, null],
    ]);
    expect(components[0].Specification).toEqual({
      ...LIVE_COMPONENTS[0].specification,
      Container: { Image: 'vllm', Environment: LIVE_COMPONENTS[0].environment },
    });
    expect(components[2].Specification).toEqual({
      Container: { ArtifactUrl: 's3://my-bucket/adapters/sql/' },
      BaseInferenceComponentName: `abtest1-1-${BASE}`,
    });
    // Every base was InService on its endpoint before any adapter was created.
    const ops = fake.requests.map(
      (q) =>
        `${q.op} ${String(q.input.InferenceComponentName ?? q.input.EndpointName ?? q.input.EndpointConfigName ?? '')}`,
    );
    const beforeAdapters = ops.slice(0, ops.indexOf(`CreateInferenceComponent abtest1-1-${ADAPTER}`));
    // The fake takes two describes from Creating to InService.
    for (const base of [`abtest1-1-${BASE}`, `abtest1-2-${BASE}`])
      expect(beforeAdapters.filter((o) => o === `DescribeInferenceComponent ${base}`).length).toBeGreaterThanOrEqual(2);
    // Deleted in dependency order: adapters, bases, endpoints, configurations.
    const deletes = fake.requests
      .filter((q) => q.op.startsWith('Delete') && q.error === undefined)
      .map(
        (q) =>
          `${q.op} ${String(q.input.InferenceComponentName ?? q.input.EndpointName ?? q.input.EndpointConfigName)}`,
      );
    expect(deletes).toEqual([
      `DeleteInferenceComponent abtest1-1-${ADAPTER}`,
      `DeleteInferenceComponent abtest1-2-${ADAPTER}`,
      `DeleteInferenceComponent abtest1-1-${BASE}`,
      `DeleteInferenceComponent abtest1-2-${BASE}`,
      'DeleteEndpoint abtest1-1-my-llm',
      'DeleteEndpoint abtest1-2-my-llm',
      `DeleteEndpointConfig abtest1-1-${ORIGINAL_CONFIG}`,
      `DeleteEndpointConfig abtest1-2-${ORIGINAL_CONFIG}`,
    ]);
    // Both shadows measured the same workload; the report says the live endpoint was only read.
    const report = JSON.parse(await readFile(join(dir, 'ab-report.json'), 'utf8')) as {
      mode: string;
      finished: boolean;
      runs: { label: string; client: { requests: number; errors: number } }[];
      shadow: { left: { components: string[] } };
      notes: string[];
    };
    expect(report).toMatchObject({ mode: 'shadow', finished: true, shadow: { left: { components: [] } } });
    expect(report.runs.map((x) => [x.label, x.client.requests, x.client.errors])).toEqual([
      ['RANDOM', 4, 0],
      ['PREFIX_AWARE(prefixLength=8192,concurrencyThreshold=32)', 4, 0],
    ]);
    const markdown = await readFile(join(dir, 'ab-report.md'), 'utf8');
    expect(markdown).toContain('Cleaned up: every shadow resource the run created is deleted');
    expect(markdown).toContain(
      'Instances when each run started (DescribeEndpoint): RANDOM: AllTraffic 2; PREFIX_AWARE(prefixLength=8192,concurrencyThreshold=32): AllTraffic 2.',
    );
    expect(markdown).not.toContain('The fleets differ between runs');
  });

  it.each([
    ['without --accept-credential-expiry', [], 1],
    ['with --accept-credential-expiry', ['--accept-credential-expiry'], 0],
  ])(
    'GIVEN credentials that expire before the run ends, %s THEN it warns, and refuses unless accepted',
    async (_what, extra, code) => {
      await useFake();
      const start = new VirtualClock().now();
      const expiring = new SageMakerClient({
        endpoint: fake.url,
        region: 'us-east-1',
        maxAttempts: 1,
        credentials: async () => ({
          accessKeyId: 'ASIAEXAMPLE',
          secretAccessKey: 'x',
          sessionToken: 't',
          expiration: new Date(start + 10 * 60_000),
        }),
      });
      clients.push(expiring);
      const r = await ab([...RUN, ...extra], { sagemaker: expiring });
      expect(r.out).toContain(
        "WARNING: the AWS credentials expire at 2026-01-01T12:10:00.000Z, before the run's ≈ 60 min end",
      );
      expect({ code: r.code, err: r.err.slice(-1500) }).toMatchObject({ code });
      if (code === 1) {
        expect(r.err).toContain('the credentials expire before the run ends');
        expect(fake.mutations()).toEqual([]);
      }
    },
  );

  it('GIVEN the endpoint hosts components and no --shadow THEN the refusal names --shadow and nothing is sent but reads', async () => {
    await useFake();
    const r = await ab(['--strategies', 'RANDOM,PREFIX_AWARE', '--yes']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('Rerun with --shadow');
    expect(fake.mutations()).toEqual([]);
  });

  it('GIVEN --shadow on a single-model endpoint THEN it refuses (exit 1): ab switches such an endpoint in place', async () => {
    await useFake({ inferenceComponents: undefined });
    const r = await ab(RUN);
    expect(r.code).toBe(1);
    expect(r.err).toContain('--shadow is for endpoints that host inference components');
    expect(fake.mutations()).toEqual([]);
  });

  it('GIVEN two components and no --inference-component THEN it asks which one the workload invokes', async () => {
    await useFake();
    const r = await ab(['--shadow', '--strategies', 'RANDOM,PREFIX_AWARE']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `--inference-component is required with --shadow: 'my-llm' hosts 2 components (${BASE}, ${ADAPTER})`,
    );
  });

  it('GIVEN the second shadow endpoint cannot get capacity THEN it says so, deletes everything it created and exits 2', async () => {
    await useFake({ insufficientCapacityAt: new Set([2]) });
    const r = await ab(RUN);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      'shadow endpoint abtest1-2-my-llm (PREFIX_AWARE(prefixLength=8192,concurrencyThreshold=32)) is Failed (Insufficient capacity',
    );
    expect(r.err).toContain('the shadows need 4 × ml.g6e.2xlarge beside the live fleet');
    expect(ok(fake, 'CreateInferenceComponent')).toEqual([]);
    await expectInvariant(r, contextOf(r));
  });

  it('GIVEN the account quota refuses a shadow endpoint on every attempt THEN it names the quota and the capacity needed, deletes everything and exits 2', async () => {
    await useFake();
    await ab(RUN);
    const first = fake.requests.find((q) => q.op === 'CreateEndpoint')!.seq;
    // The forward path tries a call 8 times (DEFAULT_RETRY_POLICY); every one of them is refused.
    await useFake({ faults: new Map(Array.from({ length: 8 }, (_, i) => [first + i, 'limit-exceeded'] as const)) });
    const r = await ab(RUN);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      'CreateEndpoint abtest1-1-my-llm (RANDOM) was refused: ResourceLimitExceeded (The account-level service limit for ml.g6e.2xlarge for endpoint usage is 3 Instances)',
    );
    expect(r.err).toContain('the shadows need 4 × ml.g6e.2xlarge beside the live fleet');
    await expectInvariant(r, contextOf(r));
  });

  it('GIVEN a shadow component ends Failed THEN it deletes everything and exits 2', async () => {
    await useFake({ failingComponents: new Set([`abtest1-2-${BASE}`]) });
    const r = await ab(RUN);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `shadow component abtest1-2-${BASE} is Failed (The model container failed its health check.)`,
    );
    await expectInvariant(r, contextOf(r));
  });

  it('GIVEN a component that cannot be deleted THEN it exits 3 naming exactly what is left, what it still costs and commands that delete it', async () => {
    await useFake({ undeletableComponents: new Set([`abtest1-1-${ADAPTER}`]) });
    const r = await ab([...RUN, '--restore-timeout', '5']);
    expect(r.code).toBe(3);
    expect(r.err).toContain(
      `abtest1-1-${ADAPTER}, abtest1-1-${BASE}, abtest1-1-my-llm, abtest1-1-${ORIGINAL_CONFIG} are left`,
    );
    expect(r.err).toContain(
      'Still billing: 2 instance(s) on 1 shadow endpoint(s) ≈ $5.20/h until deleted. The live endpoint my-llm was not changed.',
    );
    await expectInvariant(r, contextOf(r));
  });

  /** Requests of one clean run, to place a fault or a signal at each of them. */
  async function cleanRunLength(): Promise<number> {
    await useFake();
    const r = await ab(RUN);
    expect(r.code).toBe(0);
    return fake.requests.length;
  }

  it('GIVEN a signal at every request of a run THEN only deletes follow it, and every run ends with everything deleted (exit 130, or 0 when it came after the cleanup)', async () => {
    const n = await cleanRunLength();
    expect(n).toBeGreaterThan(30);
    let cleanedAfterSignal = 0;
    for (let at = 1; at <= n; at++) {
      await useFake();
      const interrupt = new AbortController();
      fake.onRequest = (q) => {
        if (q.seq === at) interrupt.abort();
      };
      const r = await ab(RUN, { interrupt: interrupt.signal });
      const context = `signal at request ${at}\n${contextOf(r)}`;
      const creates = fake.requests
        .filter((q) => q.seq > at && q.op.startsWith('Create'))
        .map((q) => `${q.seq} ${q.op}`);
      expect({ creates, context }).toEqual({ creates: [], context });
      expect({ code: [0, 130].includes(r.code), context }).toEqual({ code: true, context });
      await expectInvariant(r, context);
      if (r.code === 130 && fake.mutations().some((q) => q.op.startsWith('Create'))) cleanedAfterSignal++;
    }
    // Not vacuous: most signals landed after something was created, so the cleanup after a signal ran.
    expect(cleanedAfterSignal).toBeGreaterThanOrEqual(n / 2);
  }, 300_000);

  it.each<FaultKind>(['throttle', 'server-error', 'reset', 'reset-after', 'validation', 'limit-exceeded'])(
    'GIVEN a %s fault at every request of a run THEN the live endpoint is only read and everything created is deleted',
    async (kind) => {
      const n = await cleanRunLength();
      let stoppedAfterCreates = 0;
      // From request 3 on: requests 1-2 (DescribeEndpoint, DescribeEndpointConfig) are the target's resolution,
      // shared with bench, whose own error handling is tested elsewhere; faults there create nothing.
      for (let at = 3; at <= n; at++) {
        await useFake({ faults: new Map([[at, kind]]) });
        const r = await ab(RUN);
        const context = `${kind} at request ${at}\n${contextOf(r)}`;
        expect({ code: [0, 1, 2].includes(r.code), context }).toEqual({ code: true, context });
        if (r.code === 1) expect({ mutations: fake.mutations().length, context }).toEqual({ mutations: 0, context });
        await expectInvariant(r, context);
        if (r.code === 2 && fake.mutations().some((q) => q.op.startsWith('Create'))) stoppedAfterCreates++;
      }
      // Retryable faults are retried (every run completes); a refusal stops the run, after which the cleanup runs.
      if (kind === 'validation') expect(stoppedAfterCreates).toBeGreaterThan(5);
      else expect(stoppedAfterCreates).toBe(0);
    },
    300_000,
  );
});

describe('when shadow resources are named and planned', () => {
  it.each([
    ['a short name', 'my-llm', 'abtest1-1-my-llm'],
    ['a 63-character name', 'x'.repeat(63), `abtest1-1-${'x'.repeat(53)}`],
    ['a name whose cut ends in a hyphen', `${'y'.repeat(52)}-z`, `abtest1-1-${'y'.repeat(52)}`],
  ])(
    'GIVEN %s THEN the shadow name carries the run prefix and is at most 63 characters without a trailing hyphen',
    (_what, live, expected) => {
      const name = shadowResourceName(RUN_ID, 0, live);
      expect(name).toBe(expected);
      expect(name.length).toBeLessThanOrEqual(63);
    },
  );

  const factsOf = (): EndpointFacts => ({
    endpointName: ENDPOINT_NAME,
    status: 'InService',
    configName: ORIGINAL_CONFIG,
    endpoint: {
      $metadata: {},
      EndpointName: ENDPOINT_NAME,
      EndpointArn: 'arn',
      EndpointStatus: 'InService',
      CreationTime: new Date(0),
      LastModifiedTime: new Date(0),
    },
    config: describedConfig(),
    variants: [
      {
        name: 'AllTraffic',
        instanceType: 'ml.g6e.2xlarge',
        instanceCount: 3,
        routing: undefined,
        modelName: undefined,
      },
    ],
    metricPublishSeconds: 60,
  });

  it('GIVEN a component created per instance type (Specifications) THEN its copy is created the same way, never with both forms', () => {
    const specifications = [
      {
        InstanceType: 'ml.g6e.2xlarge' as const,
        ModelName: 'llama-g6e',
        Container: { DeployedImage: { SpecifiedImage: 'vllm:g6e' } },
        ComputeResourceRequirements: { MinMemoryRequiredInMb: 1024, NumberOfAcceleratorDevicesRequired: 1 },
      },
      {
        InstanceType: 'ml.g5.2xlarge' as const,
        ModelName: 'llama-g5',
        ComputeResourceRequirements: { MinMemoryRequiredInMb: 1024, NumberOfAcceleratorDevicesRequired: 1 },
      },
    ];
    const plan = buildShadowPlan({
      facts: factsOf(),
      components: [
        {
          name: 'llama',
          variant: 'AllTraffic',
          specification: specifications[0],
          specifications,
          copies: 0,
          base: undefined,
        },
      ],
      strategies: [{ label: 'RANDOM', routing: { RoutingStrategy: 'RANDOM' } }],
      runId: RUN_ID,
      target: undefined,
      runSeconds: 60,
    });
    const input = plan.fleets[0].components[0].input;
    expect(input.Specification).toBeUndefined();
    expect(input.Specifications).toEqual([
      {
        InstanceType: 'ml.g6e.2xlarge',
        ModelName: 'llama-g6e',
        Container: { Image: 'vllm:g6e' },
        ComputeResourceRequirements: { MinMemoryRequiredInMb: 1024, NumberOfAcceleratorDevicesRequired: 1 },
      },
      {
        InstanceType: 'ml.g5.2xlarge',
        ModelName: 'llama-g5',
        ComputeResourceRequirements: { MinMemoryRequiredInMb: 1024, NumberOfAcceleratorDevicesRequired: 1 },
      },
    ]);
    // A base scaled to zero gets one copy (it must answer the workload); the fleet is the live one's current size.
    expect(input.RuntimeConfig).toEqual({ CopyCount: 1 });
    expect(plan.fleets[0].configInput.ProductionVariants![0].InitialInstanceCount).toBe(3);
  });

  it('GIVEN two live components that agree in their first 53 characters THEN the plan refuses (their shadows would share a name)', () => {
    const facts: EndpointFacts = {
      endpointName: ENDPOINT_NAME,
      status: 'InService',
      configName: ORIGINAL_CONFIG,
      endpoint: {
        $metadata: {},
        EndpointName: ENDPOINT_NAME,
        EndpointArn: 'arn',
        EndpointStatus: 'InService',
        CreationTime: new Date(0),
        LastModifiedTime: new Date(0),
      },
      config: describedConfig(),
      variants: [
        {
          name: 'AllTraffic',
          instanceType: 'ml.g6e.2xlarge',
          instanceCount: 2,
          routing: undefined,
          modelName: undefined,
        },
      ],
      metricPublishSeconds: 60,
    };
    const comp = (name: string) => ({ name, variant: 'AllTraffic', specification: {}, copies: 1, base: undefined });
    const components = [comp(`${'c'.repeat(53)}-one`), comp(`${'c'.repeat(53)}-two`)];
    expect(() =>
      buildShadowPlan({
        facts,
        components,
        strategies: [{ label: 'RANDOM', routing: { RoutingStrategy: 'RANDOM' } }],
        runId: RUN_ID,
        target: components[0].name,
        runSeconds: 60,
      }),
    ).toThrow(`two shadow resources would both be named 'abtest1-1-${'c'.repeat(53)}'`);
  });
});
