import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import {
  SageMakerClient,
  type CreateEndpointConfigCommandInput,
  type UpdateEndpointCommandInput,
} from '@aws-sdk/client-sagemaker';
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configCopyInput } from '../../../router/src/aws/routing-ab';
import { cloudWatchSection } from '../../../router/src/aws/ab-report';
import { isLoopbackUrl, parseAbArgv, runAbCommand } from '../../../router/src/cli/ab-command';
import { fakeCloudWatch, type CloudWatchFake } from './helpers/cloudwatch-fake';
import { startLocalEndpoint, TIME_SCALE, type LocalEndpoint } from './helpers/local-endpoint';
import {
  describedConfig,
  ORIGINAL_CONFIG,
  SageMakerControlPlane,
  type ControlPlaneOptions,
} from './helpers/sagemaker-control-plane';
import { VirtualClock } from './helpers/virtual-clock';
import { captureIo } from './helpers/capture-io';

/**
 * `prefix-router ab` end to end, in process: the control plane is the stateful SageMaker fake (a local HTTP server
 * reached by the real SDK client), CloudWatch is scripted, the workload runs for real through the SDK against the
 * local router and emulators, and time is virtual, so hours of deployment polling take milliseconds. The same
 * command under generated faults and real signals is in ab-faults.test.ts.
 */
const WORKLOAD =
  'shared-system?groups=2&promptsPerGroup=2&systemTokens=300&questionTokens=20&outputTokens=4&concurrency=2';

/** The fake's record of what the tool sent, in the shapes the assertions compare. */
function sent(fake: SageMakerControlPlane) {
  const ok = fake.requests.filter((r) => r.error === undefined);
  return {
    created: ok
      .filter((r) => r.op === 'CreateEndpointConfig')
      .map((r) => r.input as unknown as CreateEndpointConfigCommandInput),
    updates: ok.filter((r) => r.op === 'UpdateEndpoint').map((r) => r.input as unknown as UpdateEndpointCommandInput),
    updateAttempts: fake.requests.filter((r) => r.op === 'UpdateEndpoint'),
    deleted: ok.filter((r) => r.op === 'DeleteEndpointConfig').map((r) => String(r.input.EndpointConfigName)),
  };
}

/** JSON round trip: what the fake received is JSON, so Dates compare as epoch seconds. */
const wire = <T>(x: T): T =>
  JSON.parse(
    JSON.stringify(x, function (this: Record<string, unknown>, k: string, v: unknown) {
      const raw = this[k];
      return raw instanceof Date ? raw.getTime() / 1000 : v;
    }),
  ) as T;

describe('when prefix-router ab runs against the control-plane fake and a local data plane', () => {
  let endpoint: LocalEndpoint;
  let runtime: SageMakerRuntimeClient;
  let fake: SageMakerControlPlane;
  let cloud: CloudWatchFake;
  let clock: VirtualClock;
  let dir: string;
  const clients: SageMakerClient[] = [];
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
  const useFake = async (options: ControlPlaneOptions = {}): Promise<void> => {
    await fake?.close();
    fake = await new SageMakerControlPlane(options).start();
  };

  beforeAll(async () => {
    endpoint = await startLocalEndpoint(2);
    runtime = new SageMakerRuntimeClient({
      endpoint: endpoint.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
      maxAttempts: 1,
    });
  });
  afterAll(async () => {
    runtime.destroy();
    await endpoint.close();
  });
  beforeEach(async () => {
    await useFake();
    cloud = fakeCloudWatch();
    clock = new VirtualClock();
    dir = await mkdtemp(join(tmpdir(), 'ab-'));
  });
  afterEach(async () => {
    cloud.restore();
    for (const c of clients.splice(0)) c.destroy();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  const ab = (args: string[], extra: { interrupt?: AbortSignal; sagemaker?: SageMakerClient } = {}) => {
    const io = captureIo();
    const code = runAbCommand(
      parseAbArgv([
        '--endpoint-name',
        'my-llm',
        '--workload',
        WORKLOAD,
        '--time-scale',
        String(TIME_SCALE),
        '--out',
        dir,
        '--quiet',
        ...args,
      ]),
      {
        io,
        sagemaker: extra.sagemaker ?? smClient(),
        cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
        runtime,
        clock,
        runId: 'test1',
        env: {},
        interrupt: extra.interrupt,
      },
    );
    return code.then((c) => ({ code: c, out: io.out(), err: io.err() }));
  };

  it('GIVEN no --yes THEN the plan shows fleet, cost, switch capacity and time, and nothing changes', async () => {
    const r = await ab(['--strategies', 'RANDOM,PREFIX_AWARE']);
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      'variant AllTraffic: 2 × ml.g6e.2xlarge, routing PREFIX_AWARE(prefixLength=8192,concurrencyThreshold=32)',
    );
    expect(r.out).toContain('Fleet cost: $5.20/h (2 instance(s) × $2.60/h; approximate us-east-1 on-demand list price');
    expect(r.out).toContain('Strategies, in order: RANDOM → PREFIX_AWARE(prefixLength=8192,concurrencyThreshold=32)');
    expect(r.out).toContain(
      'capacity: 1 extra instance(s) of quota during each switch (≈ $2.60/h while it runs); 2 step(s); expected ≈ 40 min per switch',
    );
    expect(r.out).toContain(
      `aws sagemaker update-endpoint --endpoint-name my-llm --endpoint-config-name ${ORIGINAL_CONFIG} --retain-all-variant-properties`,
    );
    expect(r.out).toContain(
      `Configurations created: ${ORIGINAL_CONFIG}-abtest1-1, ${ORIGINAL_CONFIG}-abtest1-2; deleted at the end.`,
    );
    expect(r.out).toContain('Nothing was changed. Rerun with --yes');
    expect(fake.requests.map((q) => q.op)).toEqual(['DescribeEndpoint', 'DescribeEndpointConfig', 'DescribeModel']);
    expect(existsSync(join(dir, 'original-endpoint-config.json'))).toBe(false);
  });

  it('GIVEN --yes THEN every copy (differing only in RoutingConfig) is created before the first switch, each switch rolls with RetainAllVariantProperties, and the original comes back', async () => {
    const r = await ab([
      '--strategies',
      'RANDOM,PREFIX_AWARE:prefixLength=2048,concurrencyThreshold=8',
      '--yes',
      '--cloudwatch-delay',
      '120',
    ]);
    expect({ code: r.code, err: r.err }).toMatchObject({ code: 0 });
    const original = describedConfig();
    const { created, updates, deleted } = sent(fake);
    expect(created).toEqual(
      wire([
        configCopyInput(original, `${ORIGINAL_CONFIG}-abtest1-1`, { RoutingStrategy: 'RANDOM' }),
        configCopyInput(original, `${ORIGINAL_CONFIG}-abtest1-2`, {
          RoutingStrategy: 'PREFIX_AWARE',
          PrefixAwareRoutingConfig: { PrefixLength: 2048, ConcurrencyThreshold: 8 },
        }),
      ]),
    );
    // Both copies exist before the first UpdateEndpoint.
    const ops = fake.requests.map((q) => q.op);
    expect(ops.lastIndexOf('CreateEndpointConfig')).toBeLessThan(ops.indexOf('UpdateEndpoint'));
    const { EndpointConfigName: _a, EndpointConfigArn: _b, CreationTime: _c, $metadata: _d, ...rest } = original;
    expect(created[0]).toEqual(
      wire({
        ...rest,
        EndpointConfigName: `${ORIGINAL_CONFIG}-abtest1-1`,
        ProductionVariants: [{ ...original.ProductionVariants![0], RoutingConfig: { RoutingStrategy: 'RANDOM' } }],
      }),
    );
    // Batch 1 of 2 (≥ 5 %, ≤ 50 %); time limit from the config's own timeouts: 2 steps × (1800 s download + 1800 s health check + 600 s provisioning).
    const rolling = {
      RollingUpdatePolicy: {
        MaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: 1 },
        RollbackMaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: 1 },
        WaitIntervalInSeconds: 0,
        MaximumExecutionTimeoutInSeconds: 8400,
      },
    };
    expect(updates).toEqual([
      {
        EndpointName: 'my-llm',
        EndpointConfigName: `${ORIGINAL_CONFIG}-abtest1-1`,
        RetainAllVariantProperties: true,
        DeploymentConfig: rolling,
      },
      {
        EndpointName: 'my-llm',
        EndpointConfigName: `${ORIGINAL_CONFIG}-abtest1-2`,
        RetainAllVariantProperties: true,
        DeploymentConfig: rolling,
      },
      {
        EndpointName: 'my-llm',
        EndpointConfigName: ORIGINAL_CONFIG,
        RetainAllVariantProperties: true,
        DeploymentConfig: rolling,
      },
    ]);
    expect(fake.restored()).toBe(true);
    expect(deleted).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`, `${ORIGINAL_CONFIG}-abtest1-2`]);
    expect(clock.sleeps.filter((s) => s === 30_000).length).toBeGreaterThanOrEqual(6);
    // The original's description is saved before any change, for the finishing commands.
    expect(JSON.parse(await readFile(join(dir, 'original-endpoint-config.json'), 'utf8'))).toEqual(
      wire(configCopyInput(original, ORIGINAL_CONFIG)),
    );

    const md = await readFile(join(dir, 'ab-report.md'), 'utf8');
    expect(md).toContain('## Client-side (measured by prefix-router on the machine that sent the requests)');
    expect(md).toContain("## CloudWatch's view (AWS/SageMaker and /aws/sagemaker/Endpoints)");
    expect(md).toContain('the endpoint publishes every 10 s');
    // ml.g6e.2xlarge has one GPU: 61.5 of 0–100 × 1 is 61.5 % per GPU.
    expect(md).toMatch(/\| RANDOM \| AllTraffic \| 8 \| 120 ms \| 250 ms \| 1\.8 ms \| 2 \| — \| — \| 61\.5 % \| — \|/);
    expect(md).toContain('GPU util avg (per GPU)');
    expect(md).toContain('InstanceId=i-0');
    // The replaced fleet's instance has no data in the window and is left out.
    expect(md).not.toContain('InstanceId=i-replaced');
    expect(md).toContain(
      'per-instance series without data in the run window (instances of an earlier fleet, replaced by a switch) are left out',
    );
    expect(md).toContain('CloudWatch counted 8 invocations in the window (both counts include the warm-up');
    expect(md).toContain('| 80.0 % |'); // sidecar hit rate 800 / 1000
    expect(md).toContain('| RANDOM | all variants (endpoint-wide) |');
    expect(md).toContain(
      `Restored: the endpoint is back on its original configuration \`${ORIGINAL_CONFIG}\` (InService, no deployment pending)`,
    );
    expect(md).toContain(
      'Instances when each run started (DescribeEndpoint): RANDOM: AllTraffic 2; PREFIX_AWARE(prefixLength=2048,concurrencyThreshold=8): AllTraffic 2.',
    );
    const json = JSON.parse(await readFile(join(dir, 'ab-report.json'), 'utf8'));
    expect(json).toMatchObject({ restored: true, finished: true, finishCommands: [], leftConfigs: [] });
    expect(json.runs.map((x: { label: string }) => x.label)).toEqual([
      'RANDOM',
      'PREFIX_AWARE(prefixLength=2048,concurrencyThreshold=8)',
    ]);
    expect(json.runs[0].client.requests).toBe(4);
    expect(existsSync(join(dir, 'report.html'))).toBe(true);
    for (const q of cloud.metricQueries) {
      const period = q.MetricDataQueries![0].MetricStat!.Period!;
      expect(((q.EndTime as Date).getTime() - (q.StartTime as Date).getTime()) / 1000).toBe(period);
      expect((q.StartTime as Date).getTime() % 60_000).toBe(0);
    }
  });

  it('GIVEN --emf-namespace THEN the sidecar metrics are looked up there', async () => {
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--emf-namespace', 'MyRouter']);
    expect(r.code).toBe(0);
    const md = await readFile(join(dir, 'ab-report.md'), 'utf8');
    expect(md).not.toContain('### Router sidecar');
    expect(md).toContain('No MyRouter metrics: the endpoint does not run the prefix-router sidecar');
  });

  it('GIVEN the endpoint has a rolling DeploymentConfig of its own THEN the switches use it', async () => {
    const own = {
      RollingUpdatePolicy: {
        MaximumBatchSize: { Type: 'CAPACITY_PERCENT' as const, Value: 50 },
        WaitIntervalInSeconds: 300,
        MaximumExecutionTimeoutInSeconds: 7200,
      },
    };
    await useFake({ lastDeploymentConfig: own });
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch']);
    expect(r.code).toBe(0);
    expect(r.out).toContain("the endpoint's own rolling DeploymentConfig");
    expect(sent(fake).updates.map((u) => u.DeploymentConfig)).toEqual([own, own]);
  });

  it('GIVEN autoscaling grows the fleet from 2 to 30 between switches THEN the next batch is recomputed (2 of 30, ≥ 5 %) and SageMaker accepts it', async () => {
    // Tick 4 is the describe that ends the first switch's wait.
    await useFake({ autoscale: new Map([[4, 30]]) });
    const r = await ab(['--strategies', 'RANDOM,LEAST_OUTSTANDING_REQUESTS', '--yes', '--no-cloudwatch']);
    expect({ code: r.code, err: r.err }).toMatchObject({ code: 0 });
    const batches = sent(fake).updates.map((u) => u.DeploymentConfig?.RollingUpdatePolicy?.MaximumBatchSize?.Value);
    expect(batches).toEqual([1, 2, 2]);
    expect(fake.requests.filter((q) => q.op === 'UpdateEndpoint' && q.error !== undefined)).toEqual([]);
    expect(sent(fake).updates[1].DeploymentConfig?.RollingUpdatePolicy?.MaximumExecutionTimeoutInSeconds).toBe(28_800); // 15 steps × 4200 s, capped at the documented 28,800
    expect(fake.restored()).toBe(true);
  });

  it('GIVEN autoscaling shrinks the fleet to one instance THEN that switch is blue/green (no batch fits 5–50 % of 1)', async () => {
    await useFake({ autoscale: new Map([[4, 1]]) });
    const r = await ab(['--strategies', 'RANDOM,LEAST_OUTSTANDING_REQUESTS', '--yes', '--no-cloudwatch']);
    expect(r.code).toBe(0);
    expect(sent(fake).updates.map((u) => u.DeploymentConfig === undefined)).toEqual([false, true, true]);
    expect(fake.restored()).toBe(true);
  });

  it('GIVEN an update SageMaker rolls back THEN the run stops, the original is restored and the copies are deleted', async () => {
    await useFake({ outcomes: ['ok', 'rollback'] });
    const r = await ab(['--strategies', 'RANDOM,LEAST_OUTSTANDING_REQUESTS', '--yes', '--no-cloudwatch']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `the update to '${ORIGINAL_CONFIG}-abtest1-2' did not take: 'my-llm' is InService on '${ORIGINAL_CONFIG}-abtest1-1'`,
    );
    expect(r.err).toContain('(the endpoint was restored)');
    expect(sent(fake).updates.map((u) => u.EndpointConfigName)).toEqual([
      `${ORIGINAL_CONFIG}-abtest1-1`,
      `${ORIGINAL_CONFIG}-abtest1-2`,
      ORIGINAL_CONFIG,
    ]);
    expect(fake.restored()).toBe(true);
    const md = await readFile(join(dir, 'ab-report.md'), 'utf8');
    expect(md).toContain('**Stopped early:**');
    expect(md).toContain('| RANDOM |');
  });

  it('GIVEN a copy SageMaker refuses (a PREFIX_AWARE setting) THEN no deployment happens at all and the created copy is deleted', async () => {
    await useFake({ refusePrefixAware: true });
    const r = await ab(['--strategies', 'RANDOM,PREFIX_AWARE:prefixLength=2048', '--yes', '--no-cloudwatch']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('PrefixLength 2048 is not supported');
    expect(sent(fake).updateAttempts).toEqual([]);
    expect(fake.restored()).toBe(true);
    expect(sent(fake).deleted).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`]);
  });

  it('GIVEN the restore rolls back into UpdateRollbackFailed every time THEN it is not reported restored: exit 3 names the state and the commands, and no copy is deleted', async () => {
    await useFake({ outcomes: ['ok', 'rollback-failed', 'rollback-failed', 'rollback-failed', 'rollback-failed'] });
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch']);
    expect(r.code).toBe(3);
    expect(r.err).toContain(`State: my-llm is UpdateRollbackFailed on ${ORIGINAL_CONFIG}`);
    expect(r.err).toContain(
      `aws sagemaker update-endpoint --endpoint-name my-llm --endpoint-config-name ${ORIGINAL_CONFIG} --retain-all-variant-properties --deployment-config`,
    );
    expect(r.err).toContain(`aws sagemaker delete-endpoint-config --endpoint-config-name ${ORIGINAL_CONFIG}-abtest1-1`);
    // The name matches the original, but the fleet is mixed: nothing less than InService counts.
    expect(sent(fake).updates).toHaveLength(4);
    expect(sent(fake).deleted).toEqual([]);
    expect(fake.violations).toEqual([]);
    const json = JSON.parse(await readFile(join(dir, 'ab-report.json'), 'utf8'));
    expect(json).toMatchObject({ restored: false, finished: false, finalState: { status: 'UpdateRollbackFailed' } });
    expect(await readFile(join(dir, 'ab-report.md'), 'utf8')).toContain('**NOT restored**');
  });

  it('GIVEN the restore meets ResourceLimitExceeded, a 5xx, a socket reset and "Cannot update in-progress endpoint" THEN it keeps trying and restores', async () => {
    // Requests: 1-3 plan; 4 create; 5 describe; 6 update; 7-9 waits; the workload; 10 describe, 11 the original's
    // describe, 12 the restore's UpdateEndpoint: refused for capacity, a 5xx, then carried out with the answer lost,
    // so its retry is refused as in progress, which the restore waits out.
    await useFake({
      faults: new Map([
        [12, 'limit-exceeded'],
        [13, 'server-error'],
        [14, 'reset-after'],
      ]),
    });
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch']);
    expect({ code: r.code, err: r.err }).toMatchObject({ code: 0 });
    expect(r.err).toMatch(/ResourceLimitExceeded.*retrying/);
    expect(r.err).toMatch(/InternalFailure.*retrying/);
    expect(r.err).toMatch(/socket hang up.*retrying/);
    expect(fake.requests.find((q) => q.seq === 15)).toMatchObject({
      op: 'UpdateEndpoint',
      error: 'ValidationException',
    });
    expect(fake.restored()).toBe(true);
  });

  it('GIVEN Ctrl-C while CreateEndpointConfig is in flight THEN no UpdateEndpoint is sent, and the copy is deleted (exit 130)', async () => {
    const interrupt = new AbortController();
    fake.onRequest = (q) => {
      if (q.op === 'CreateEndpointConfig') interrupt.abort();
    };
    const r = await ab(['--strategies', 'RANDOM,PREFIX_AWARE', '--yes', '--no-cloudwatch'], {
      interrupt: interrupt.signal,
    });
    expect(r.code).toBe(130);
    expect(sent(fake).updateAttempts).toEqual([]);
    expect(sent(fake).created).toHaveLength(1);
    expect(fake.restored()).toBe(true);
  });

  it('GIVEN Ctrl-C during a throttling backoff before UpdateEndpoint THEN the backoff ends and UpdateEndpoint is never sent', async () => {
    const interrupt = new AbortController();
    // Request 5 is the describe before the first switch: throttled, and Ctrl-C lands during its backoff.
    await useFake({ faults: new Map([[5, 'throttle']]) });
    const sleep = clock.sleep.bind(clock);
    clock.sleep = async (ms, signal) => {
      interrupt.abort();
      return sleep(ms, signal);
    };
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch'], { interrupt: interrupt.signal });
    expect(r.code).toBe(130);
    expect(sent(fake).updateAttempts).toEqual([]);
    expect(fake.restored()).toBe(true);
  });

  it('GIVEN Ctrl-C while a switch deploys THEN it stops waiting, restores the original and exits 130', async () => {
    const interrupt = new AbortController();
    fake.onRequest = (q) => {
      if (q.op === 'UpdateEndpoint') setImmediate(() => interrupt.abort());
    };
    const r = await ab(['--strategies', 'RANDOM,PREFIX_AWARE', '--yes', '--no-cloudwatch'], {
      interrupt: interrupt.signal,
    });
    expect(r.code).toBe(130);
    expect(sent(fake).updates.map((u) => u.EndpointConfigName)).toEqual([
      `${ORIGINAL_CONFIG}-abtest1-1`,
      ORIGINAL_CONFIG,
    ]);
    expect(fake.restored()).toBe(true);
    expect(sent(fake).deleted).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`, `${ORIGINAL_CONFIG}-abtest1-2`]);
  });

  it('GIVEN Ctrl-C while the workload runs THEN in-flight requests are cancelled, the partial run is reported, and the original is restored', async () => {
    const interrupt = new AbortController();
    const decisions = () => endpoint.router.backends.reduce((n, b) => n + b.decisions, 0);
    const before = decisions();
    const run = ab(
      [
        '--strategies',
        'RANDOM,PREFIX_AWARE',
        '--yes',
        '--no-cloudwatch',
        '--workload',
        'shared-system?groups=2&promptsPerGroup=50&systemTokens=300&questionTokens=20&outputTokens=64&concurrency=2',
      ],
      {
        interrupt: interrupt.signal,
      },
    );
    const started = Date.now();
    while (decisions() === before && Date.now() - started < 10_000) await new Promise((res) => setTimeout(res, 1));
    interrupt.abort();
    const r = await run;
    expect(r.code).toBe(130);
    expect(sent(fake).updates.map((u) => u.EndpointConfigName)).toEqual([
      `${ORIGINAL_CONFIG}-abtest1-1`,
      ORIGINAL_CONFIG,
    ]);
    expect(fake.restored()).toBe(true);
    const json = JSON.parse(await readFile(join(dir, 'ab-report.json'), 'utf8'));
    expect(json.interrupted).toBe(true);
    expect(json.restored).toBe(true);
    expect(json.runs).toHaveLength(1);
    expect(json.runs[0].client.requests).toBeLessThan(100);
  });

  it('GIVEN the original configuration is deleted by someone during the run THEN the restore recreates it from the description held in memory', async () => {
    await useFake({ deleteOriginalAt: 3 });
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch']);
    expect({ code: r.code, err: r.err }).toMatchObject({ code: 0 });
    expect(r.err).toContain('was deleted meanwhile; recreating it');
    expect(fake.restored()).toBe(true);
    const { EndpointConfigArn: _a, CreationTime: _c, $metadata: _m, ...want } = describedConfig();
    const { EndpointConfigArn: _b, CreationTime: _d, $metadata: _n, ...got } = fake.configs.get(ORIGINAL_CONFIG)!;
    expect(got).toEqual(wire(want));
  });

  it('GIVEN credentials that expire before the plan ends THEN the plan warns, --yes refuses without --accept-credential-expiry, and nothing changes', async () => {
    const expiring = new SageMakerClient({
      endpoint: fake.url,
      region: 'us-east-1',
      maxAttempts: 1,
      credentials: async () => ({
        accessKeyId: 'ASIAEXAMPLE',
        secretAccessKey: 'x',
        sessionToken: 't',
        expiration: new Date(clock.now() + 30 * 60_000),
      }),
    });
    clients.push(expiring);
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch'], { sagemaker: expiring });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/WARNING: the AWS credentials expire at .* \(in 30 min\), before the plan's ≈ \d+ min end/);
    expect(r.err).toContain('pass --accept-credential-expiry');
    expect(sent(fake).created).toEqual([]);
    const accepted = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch', '--accept-credential-expiry'], {
      sagemaker: expiring,
    });
    expect(accepted.code).toBe(0);
  });

  it('GIVEN an --out that cannot be written THEN it stops before any change', async () => {
    const blocker = join(dir, 'a-file');
    await writeFile(blocker, 'not a directory');
    await chmod(blocker, 0o444);
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch', '--out', join(blocker, 'report')]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('is not writable');
    expect(r.err).toContain('nothing was changed');
    expect(sent(fake).created).toEqual([]);
  });

  it('GIVEN a switch that outlasts --switch-timeout THEN the waiter gives up, the restore waits the update out and switches back', async () => {
    await useFake({ pollsPerUpdate: 8 });
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch', '--switch-timeout', '2']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `endpoint 'my-llm' was still Updating after 2 min waiting for configuration '${ORIGINAL_CONFIG}-abtest1-1'`,
    );
    expect(r.err).toContain(
      `restore: endpoint is Updating (deploying ${ORIGINAL_CONFIG}-abtest1-1); waiting before switching back`,
    );
    expect(fake.restored()).toBe(true);
  });

  it('GIVEN throttled describes THEN they are retried with exponential backoff and full jitter, and the run completes', async () => {
    await useFake({
      faults: new Map([
        [5, 'throttle'],
        [6, 'throttle'],
        [7, 'throttle'],
      ]),
    });
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch']);
    expect(r.code).toBe(0);
    // random() = 0.5: half of 1 s, 2 s, 4 s.
    expect(clock.sleeps.slice(0, 3)).toEqual([500, 1000, 2000]);
    expect(fake.restored()).toBe(true);
  });

  it('GIVEN UpdateEndpoint throttled past the retry limit THEN the A/B stops with that reason and the endpoint stays on its original', async () => {
    await useFake({ faults: new Map(Array.from({ length: 8 }, (_, i) => [6 + i, 'throttle'] as const)) });
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('was throttled 8 times in a row; giving up');
    expect(fake.restored()).toBe(true);
  });

  it('GIVEN runs that end inside their warm-up THEN the report says nothing was measured and the exit status is 2', async () => {
    const r = await ab([
      '--strategies',
      'RANDOM',
      '--yes',
      '--no-cloudwatch',
      '--warmup',
      '500',
      '--max-requests',
      '2',
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('no run measured anything');
    expect(fake.restored()).toBe(true);
    const md = await readFile(join(dir, 'ab-report.md'), 'utf8');
    expect(md).toContain('- RANDOM: nothing was measured (2 requests sent');
  });

  it('GIVEN an unknown endpoint THEN it fails before any change', async () => {
    const io = captureIo();
    const code = await runAbCommand(
      parseAbArgv(['--endpoint-name', 'nope', '--strategies', 'RANDOM', '--workload', WORKLOAD, '--yes']),
      { io, sagemaker: smClient(), runtime, clock, env: {} },
    );
    expect(code).toBe(1);
    expect(io.err()).toContain("endpoint 'nope' does not exist in this account and region");
    expect(sent(fake).updateAttempts).toEqual([]);
  });

  it.each([
    ['RANDOM,BOGUS', "--strategies: 'BOGUS' is not one of RANDOM, LEAST_OUTSTANDING_REQUESTS, PREFIX_AWARE"],
    [
      'PREFIX_AWARE:prefixLength=1023',
      'PREFIX_AWARE prefixLength must be an integer between 1024 and 65536 (got "1023")',
    ],
    [
      'PREFIX_AWARE:prefixLength=65537',
      'PREFIX_AWARE prefixLength must be an integer between 1024 and 65536 (got "65537")',
    ],
    [
      'PREFIX_AWARE:concurrencyThreshold=0',
      'PREFIX_AWARE concurrencyThreshold must be an integer between 1 and 1024 (got "0")',
    ],
    [
      'PREFIX_AWARE:concurrencyThreshold=1025',
      'PREFIX_AWARE concurrencyThreshold must be an integer between 1 and 1024 (got "1025")',
    ],
    ['RANDOM,RANDOM', '--strategies names RANDOM twice'],
  ])('GIVEN --strategies %s THEN it is refused: %s', async (strategies, message) => {
    const r = await ab(['--strategies', strategies, '--yes']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(message);
    expect(sent(fake).created).toEqual([]);
  });

  it.each([
    ['0', '--restore-timeout must be a number between 1 and 2880'],
    ['2881', '--restore-timeout must be a number between 1 and 2880'],
  ])('GIVEN --restore-timeout %s THEN it is refused', async (value, message) => {
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--restore-timeout', value]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(message);
  });
});

describe('when the CloudWatch section reports GPU figures', () => {
  const view = (gpu: number) => ({
    startTime: '',
    endTime: '',
    periodSeconds: 60,
    publishSeconds: 60,
    variant: {
      invocations: 1,
      invocationsPerInstance: 1,
      modelLatencyMs: { average: 1, p50: 1, p90: 1 },
      overheadLatencyMs: { p50: 1, p90: 1 },
      concurrentRequestsPerModelMax: 1,
      invocation4xx: null,
      invocation5xx: null,
      gpuUtilizationAverage: gpu,
      gpuMemoryUtilizationAverage: null,
    },
    perInstance: [],
    sidecar: null,
    notes: [],
  });
  it('GIVEN 8 GPUs per instance and GPUUtilization 400 THEN it reads 50.0 % per GPU', () => {
    expect(
      cloudWatchSection([{ label: 'x', sent: 1, gpusPerInstance: 8, cloudwatch: { v: view(400) } }]).join('\n'),
    ).toContain('| 50.0 % |');
  });
  it('GIVEN an unknown GPU count THEN the raw figure is labelled 0–100 × GPUs', () => {
    expect(cloudWatchSection([{ label: 'x', sent: 1, cloudwatch: { v: view(400) } }]).join('\n')).toContain(
      '400.0 (0–100 × GPUs)',
    );
  });
});

describe('when prefix-router ab --variants compares two variants that differ only in RoutingConfig', () => {
  let endpoint: LocalEndpoint;
  let runtime: SageMakerRuntimeClient;
  let fake: SageMakerControlPlane;
  let cloud: CloudWatchFake;
  let sagemaker: SageMakerClient;
  let dir: string;
  const wire: { variant: string | undefined; user: string | undefined }[] = [];

  beforeAll(async () => {
    endpoint = await startLocalEndpoint(2);
    runtime = new SageMakerRuntimeClient({
      endpoint: endpoint.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
      maxAttempts: 1,
    });
    // What actually goes on the wire: the TargetVariant header and the conversation (OpenAI `user`) of each request.
    runtime.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers: Record<string, string>; body: Uint8Array };
        const body = JSON.parse(Buffer.from(request.body).toString('utf8')) as { user?: string };
        wire.push({ variant: request.headers['x-amzn-sagemaker-target-variant'], user: body.user });
        return next(args);
      },
      { step: 'finalizeRequest', name: 'recordWire' },
    );
  });
  afterAll(async () => {
    runtime.destroy();
    await endpoint.close();
  });
  beforeEach(async () => {
    fake = await new SageMakerControlPlane({ variants: 2 }).start();
    cloud = fakeCloudWatch();
    sagemaker = new SageMakerClient({
      endpoint: fake.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      maxAttempts: 1,
    });
    dir = await mkdtemp(join(tmpdir(), 'ab-variants-'));
    wire.length = 0;
  });
  afterEach(async () => {
    cloud.restore();
    sagemaker.destroy();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('GIVEN a multi-turn workload THEN conversations are split whole by TargetVariant, nothing is deployed, and both variants are reported side by side', async () => {
    const io = captureIo();
    const code = await runAbCommand(
      parseAbArgv([
        '--endpoint-name',
        'my-llm',
        '--variants',
        '--workload',
        'short-chat?turns=2..4&count=40&concurrency=4&outputTokens=4&userTokens=20..40&systemTokens=300',
        '--time-scale',
        String(TIME_SCALE),
        '--out',
        dir,
        '--quiet',
        '--yes',
        '--cloudwatch-delay',
        '60',
      ]),
      {
        io,
        sagemaker,
        cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
        runtime,
        clock: new VirtualClock(),
        env: {},
        runId: 'v1',
      },
    );
    expect({ code, err: io.err() }).toMatchObject({ code: 0 });
    expect(io.out()).toContain('Mode: --variants: no deployment');
    expect(
      fake.requests.filter(
        (q) => q.op !== 'DescribeEndpoint' && q.op !== 'DescribeEndpointConfig' && q.op !== 'DescribeModel',
      ),
    ).toEqual([]);
    expect(wire.length).toBe(40);
    const byConversation = new Map<string, Set<string | undefined>>();
    for (const w of wire) byConversation.set(w.user!, (byConversation.get(w.user!) ?? new Set()).add(w.variant));
    expect([...byConversation.values()].every((s) => s.size === 1)).toBe(true);
    const variants = new Set(wire.map((w) => w.variant));
    expect(variants).toEqual(new Set(['AllTraffic', 'Variant2']));
    const json = JSON.parse(await readFile(join(dir, 'ab-report.json'), 'utf8'));
    expect(json.runs.map((r: { variant: string }) => r.variant)).toEqual(['AllTraffic', 'Variant2']);
    expect(json.runs[0].client.requests + json.runs[1].client.requests).toBe(40);
    expect(json.runs[0].client.requests).toBe(wire.filter((w) => w.variant === 'AllTraffic').length);
    // CloudWatch was read per variant.
    const variantDims = cloud.metricQueries.flatMap((q) =>
      q.MetricDataQueries!.map((m) => m.MetricStat!.Metric!.Dimensions!.find((d) => d.Name === 'VariantName')?.Value),
    );
    expect(new Set(variantDims)).toEqual(new Set(['AllTraffic', 'Variant2', undefined]));
    const md = await readFile(join(dir, 'ab-report.md'), 'utf8');
    expect(md).toContain('| AllTraffic: PREFIX_AWARE(prefixLength=8192,concurrencyThreshold=32) |');
    expect(md).toContain('| Variant2: RANDOM |');
    // The sidecar's series have no VariantName: one endpoint-wide row per run, labelled so, not one copy per variant.
    expect(md).toContain("the whole endpoint's (every variant together)");
    expect(md).not.toMatch(/\| AllTraffic: .* \| AllTraffic \| 80\.0 % \|/);
  });

  it('GIVEN variants that differ in more than RoutingConfig THEN --variants refuses', async () => {
    const config = fake.configs.get(ORIGINAL_CONFIG)!;
    fake.configs.set(ORIGINAL_CONFIG, {
      ...config,
      ProductionVariants: [
        config.ProductionVariants![0],
        { ...config.ProductionVariants![1], InstanceType: 'ml.g6e.4xlarge' },
      ],
    });
    const io = captureIo();
    const code = await runAbCommand(
      parseAbArgv(['--endpoint-name', 'my-llm', '--variants', '--workload', WORKLOAD, '--yes']),
      {
        io,
        sagemaker,
        runtime,
        clock: new VirtualClock(),
        env: {},
      },
    );
    expect(code).toBe(1);
    expect(io.err()).toContain('--variants compares only variants that differ in RoutingConfig alone; Variant2 differ');
  });
});

describe('when the control plane URL decides whether a rehearsal may run its waits faster', () => {
  it.each([
    ['http://127.0.0.1:4566', true],
    ['http://127.9.9.9', true],
    ['http://localhost:8080', true],
    ['http://[::1]:9000', true],
    ['https://api.sagemaker.us-east-1.amazonaws.com', false],
    ['http://128.0.0.1', false],
    ['not a url', false],
  ])('GIVEN %s THEN loopback is %s', (url, loopback) => {
    expect(isLoopbackUrl(url)).toBe(loopback);
  });
});
