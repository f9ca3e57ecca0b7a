import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configCopyInput } from '../../../router/src/aws/routing-ab';
import { parseAbArgv, runAbCommand } from '../../../router/src/cli/ab-command';
import type { BenchIo } from '../../../router/src/cli/bench-command';
import { describedConfig, FakeControlPlane, ORIGINAL_CONFIG, VirtualClock } from './helpers/fake-control-plane';
import { startLocalEndpoint, TIME_SCALE, type LocalEndpoint } from './helpers/local-endpoint';

/**
 * `prefix-router ab` end to end: the control plane and CloudWatch are aws-sdk-client-mock (a scripted fake
 * that moves the endpoint through Updating to InService), the workload runs for real through the SDK against
 * the local router and emulators, and time is virtual, so hours of deployment polling take milliseconds.
 */
const WORKLOAD = 'shared-system?groups=2&promptsPerGroup=2&systemTokens=300&questionTokens=20&outputTokens=4&concurrency=2';

function captureIo(): BenchIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t), isTTY: false }, out: () => out, err: () => err };
}

describe('when prefix-router ab runs against a scripted control plane and a local data plane', () => {
  let endpoint: LocalEndpoint;
  let runtime: SageMakerRuntimeClient;
  let fake: FakeControlPlane;
  let clock: VirtualClock;
  let dir: string;

  beforeAll(async () => {
    endpoint = await startLocalEndpoint(2);
    runtime = new SageMakerRuntimeClient({ endpoint: endpoint.url, region: 'us-east-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' }, maxAttempts: 1 });
  });
  afterAll(async () => {
    runtime.destroy();
    await endpoint.close();
  });
  beforeEach(async () => {
    fake = new FakeControlPlane();
    clock = new VirtualClock();
    dir = await mkdtemp(join(tmpdir(), 'ab-'));
  });
  afterEach(async () => {
    fake.restore();
    await rm(dir, { recursive: true, force: true });
  });

  const ab = (args: string[], extra: { interrupt?: AbortSignal } = {}) => {
    const io = captureIo();
    const code = runAbCommand(
      parseAbArgv(['--endpoint-name', 'my-llm', '--workload', WORKLOAD, '--time-scale', String(TIME_SCALE), '--out', dir, '--quiet', ...args]),
      {
        io,
        sagemaker: new SageMakerClient({ region: 'us-east-1' }),
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
    expect(r.out).toContain('variant AllTraffic: 2 × ml.g6e.2xlarge, routing PREFIX_AWARE(prefixLength=8192,concurrencyThreshold=32)');
    expect(r.out).toContain('Fleet cost: $5.20/h (2 instance(s) × $2.60/h; approximate us-east-1 on-demand list price');
    expect(r.out).toContain('Strategies, in order: RANDOM → PREFIX_AWARE(prefixLength=8192,concurrencyThreshold=32)');
    expect(r.out).toContain('capacity: 1 extra instance(s) of quota during each switch (≈ $2.60/h while it runs); 2 step(s); expected ≈ 40 min per switch');
    expect(r.out).toContain(`aws sagemaker update-endpoint --endpoint-name my-llm --endpoint-config-name ${ORIGINAL_CONFIG} --retain-all-variant-properties`);
    expect(r.out).toContain(`Configurations created: ${ORIGINAL_CONFIG}-abtest1-1, ${ORIGINAL_CONFIG}-abtest1-2; deleted at the end.`);
    expect(r.out).toContain('Nothing was changed. Rerun with --yes');
    expect(fake.created).toEqual([]);
    expect(fake.updates).toEqual([]);
  });

  it('GIVEN --yes THEN each strategy gets a config copy differing only in RoutingConfig, rolled out with RetainAllVariantProperties, and the original comes back', async () => {
    const r = await ab(['--strategies', 'RANDOM,PREFIX_AWARE:prefixLength=2048,concurrencyThreshold=8', '--yes', '--cloudwatch-delay', '120']);
    expect({ code: r.code, err: r.err }).toMatchObject({ code: 0 });
    const original = describedConfig();
    expect(fake.created).toEqual([
      configCopyInput(original, `${ORIGINAL_CONFIG}-abtest1-1`, { RoutingStrategy: 'RANDOM' }),
      configCopyInput(original, `${ORIGINAL_CONFIG}-abtest1-2`, { RoutingStrategy: 'PREFIX_AWARE', PrefixAwareRoutingConfig: { PrefixLength: 2048, ConcurrencyThreshold: 8 } }),
    ]);
    // Exactly: same fields as described (output-only ones dropped), new name, new RoutingConfig.
    const { EndpointConfigName: _a, EndpointConfigArn: _b, CreationTime: _c, $metadata: _d, ...rest } = original;
    expect(fake.created[0]).toEqual({ ...rest, EndpointConfigName: `${ORIGINAL_CONFIG}-abtest1-1`, ProductionVariants: [{ ...original.ProductionVariants![0], RoutingConfig: { RoutingStrategy: 'RANDOM' } }] });
    const rolling = {
      RollingUpdatePolicy: {
        MaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: 1 },
        RollbackMaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: 1 },
        WaitIntervalInSeconds: 0,
        MaximumExecutionTimeoutInSeconds: 3600,
      },
    };
    expect(fake.updates).toEqual([
      { EndpointName: 'my-llm', EndpointConfigName: `${ORIGINAL_CONFIG}-abtest1-1`, RetainAllVariantProperties: true, DeploymentConfig: rolling },
      { EndpointName: 'my-llm', EndpointConfigName: `${ORIGINAL_CONFIG}-abtest1-2`, RetainAllVariantProperties: true, DeploymentConfig: rolling },
      { EndpointName: 'my-llm', EndpointConfigName: ORIGINAL_CONFIG, RetainAllVariantProperties: true, DeploymentConfig: rolling },
    ]);
    expect(fake.current).toBe(ORIGINAL_CONFIG);
    expect(fake.deleted).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`, `${ORIGINAL_CONFIG}-abtest1-2`]);
    // Polling every 30 s of virtual time.
    expect(clock.sleeps.filter((s) => s === 30_000).length).toBeGreaterThanOrEqual(6);

    const md = await readFile(join(dir, 'ab-report.md'), 'utf8');
    expect(md).toContain('## Client-side (measured by prefix-router on the machine that sent the requests)');
    expect(md).toContain("## CloudWatch's view (AWS/SageMaker and /aws/sagemaker/Endpoints)");
    expect(md).toContain('the endpoint publishes every 10 s');
    expect(md).toMatch(/\| RANDOM \| AllTraffic \| 8 \| 120 ms \| 250 ms \| 1\.8 ms \| 2 \| — \| — \| 61\.5 % \| — \|/);
    expect(md).toContain('InstanceId=i-0');
    expect(md).toContain('| 80.0 % |'); // sidecar hit rate 800 / 1000
    expect(md).toContain(`Restored: the endpoint is back on its original configuration \`${ORIGINAL_CONFIG}\``);
    expect(md).toContain('Instances when each run started (DescribeEndpoint): RANDOM: AllTraffic 2; PREFIX_AWARE(prefixLength=2048,concurrencyThreshold=8): AllTraffic 2.');
    const json = JSON.parse(await readFile(join(dir, 'ab-report.json'), 'utf8'));
    expect(json.runs.map((x: { label: string }) => x.label)).toEqual(['RANDOM', 'PREFIX_AWARE(prefixLength=2048,concurrencyThreshold=8)']);
    expect(json.runs[0].client.requests).toBe(4);
    expect(existsSync(join(dir, 'report.html'))).toBe(true);
    // One GetMetricData period covering each run window, on minute boundaries.
    for (const q of fake.metricQueries) {
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
    fake.restore();
    const own = { RollingUpdatePolicy: { MaximumBatchSize: { Type: 'CAPACITY_PERCENT' as const, Value: 50 }, WaitIntervalInSeconds: 300, MaximumExecutionTimeoutInSeconds: 7200 } };
    fake = new FakeControlPlane({ lastDeploymentConfig: own });
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch']);
    expect(r.code).toBe(0);
    expect(r.out).toContain("the endpoint's own rolling DeploymentConfig");
    expect(fake.updates.map((u) => u.DeploymentConfig)).toEqual([own, own]);
  });

  it('GIVEN an update SageMaker rolls back THEN the run stops, the original is restored and the copies are deleted', async () => {
    fake.script.push('ok', 'rollback');
    const r = await ab(['--strategies', 'RANDOM,LEAST_OUTSTANDING_REQUESTS', '--yes', '--no-cloudwatch']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`the update to '${ORIGINAL_CONFIG}-abtest1-2' did not take: 'my-llm' is InService on '${ORIGINAL_CONFIG}-abtest1-1'`);
    expect(r.err).toContain('(the endpoint was restored)');
    expect(fake.updates.map((u) => u.EndpointConfigName)).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`, `${ORIGINAL_CONFIG}-abtest1-2`, ORIGINAL_CONFIG]);
    expect(fake.current).toBe(ORIGINAL_CONFIG);
    expect(fake.deleted.sort()).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`, `${ORIGINAL_CONFIG}-abtest1-2`]);
    const md = await readFile(join(dir, 'ab-report.md'), 'utf8');
    expect(md).toContain('**Stopped early:**');
    expect(md).toContain('| RANDOM |'); // the run that did happen is reported
  });

  it('GIVEN UpdateEndpoint is refused THEN nothing needs switching back and the copy is deleted', async () => {
    fake.script.push('reject');
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('service limit');
    expect(fake.updates.map((u) => u.EndpointConfigName)).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`]);
    expect(fake.current).toBe(ORIGINAL_CONFIG);
    expect(fake.deleted).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`]);
  });

  it('GIVEN a switch that outlasts --switch-timeout THEN the waiter gives up, the restore waits the update out and switches back', async () => {
    fake.script.push('stuck:6');
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch', '--switch-timeout', '2']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`endpoint 'my-llm' was still Updating after 2 min waiting for configuration '${ORIGINAL_CONFIG}-abtest1-1'`);
    expect(r.err).toContain('restore: endpoint is Updating; waiting before switching back');
    expect(fake.updates.map((u) => u.EndpointConfigName)).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`, ORIGINAL_CONFIG]);
    expect(fake.current).toBe(ORIGINAL_CONFIG);
  });

  it('GIVEN throttled describes THEN they are retried with exponential backoff and full jitter, and the run completes', async () => {
    fake.throttle.set('DescribeEndpoint', 3);
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch']);
    expect(r.code).toBe(0);
    // random() = 0.5: half of 1 s, 2 s, 4 s.
    expect(clock.sleeps.slice(0, 3)).toEqual([500, 1000, 2000]);
    expect(fake.current).toBe(ORIGINAL_CONFIG);
  });

  it('GIVEN UpdateEndpoint throttled past the retry limit THEN the A/B stops with that reason and the endpoint stays on its original', async () => {
    fake.throttle.set('UpdateEndpoint', 100);
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('was throttled 8 times in a row; giving up');
    expect(fake.current).toBe(ORIGINAL_CONFIG);
    expect(fake.deleted).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`]);
  });

  it('GIVEN Ctrl-C while a switch deploys THEN it stops waiting, restores the original and exits 130', async () => {
    const interrupt = new AbortController();
    const run = ab(['--strategies', 'RANDOM,PREFIX_AWARE', '--yes', '--no-cloudwatch'], { interrupt: interrupt.signal });
    // Interrupt once the first update is under way.
    const started = Date.now();
    while (fake.updates.length === 0 && Date.now() - started < 5000) await new Promise((res) => setTimeout(res, 1));
    interrupt.abort();
    const r = await run;
    expect(r.code).toBe(130);
    expect(fake.current).toBe(ORIGINAL_CONFIG);
    expect(fake.created).toHaveLength(1);
    expect(fake.deleted).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`]);
  });

  it('GIVEN Ctrl-C while the workload runs THEN in-flight requests are cancelled, the partial run is reported, and the original is restored', async () => {
    const interrupt = new AbortController();
    const decisions = () => endpoint.router.backends.reduce((n, b) => n + b.decisions, 0);
    const before = decisions();
    const run = ab(['--strategies', 'RANDOM,PREFIX_AWARE', '--yes', '--no-cloudwatch', '--workload', 'shared-system?groups=2&promptsPerGroup=50&systemTokens=300&questionTokens=20&outputTokens=64&concurrency=2'], {
      interrupt: interrupt.signal,
    });
    const started = Date.now();
    while (decisions() === before && Date.now() - started < 10_000) await new Promise((res) => setTimeout(res, 1));
    interrupt.abort();
    const r = await run;
    expect(r.code).toBe(130);
    expect(fake.created).toHaveLength(1);
    expect(fake.updates.map((u) => u.EndpointConfigName)).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`, ORIGINAL_CONFIG]);
    expect(fake.current).toBe(ORIGINAL_CONFIG);
    expect(fake.deleted).toEqual([`${ORIGINAL_CONFIG}-abtest1-1`]);
    const json = JSON.parse(await readFile(join(dir, 'ab-report.json'), 'utf8'));
    expect(json.interrupted).toBe(true);
    expect(json.restored).toBe(true);
    expect(json.runs).toHaveLength(1);
    expect(json.runs[0].client.requests).toBeLessThan(100);
  });

  it('GIVEN runs that end inside their warm-up THEN the report says nothing was measured and the exit status is 2', async () => {
    const r = await ab(['--strategies', 'RANDOM', '--yes', '--no-cloudwatch', '--warmup', '500', '--max-requests', '2']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('no run measured anything');
    expect(fake.current).toBe(ORIGINAL_CONFIG);
    const md = await readFile(join(dir, 'ab-report.md'), 'utf8');
    expect(md).toContain('- RANDOM: nothing was measured (2 requests sent');
  });

  it('GIVEN an unknown endpoint THEN it fails before any change', async () => {
    const io = captureIo();
    const code = await runAbCommand(parseAbArgv(['--endpoint-name', 'nope', '--strategies', 'RANDOM', '--workload', WORKLOAD, '--yes']), {
      io,
      sagemaker: new SageMakerClient({ region: 'us-east-1' }),
      runtime,
      clock,
      env: {},
    });
    expect(code).toBe(1);
    expect(io.err()).toContain("endpoint 'nope' does not exist in this account and region");
    expect(fake.updates).toEqual([]);
  });

  it.each([
    ['RANDOM,BOGUS', "--strategies: 'BOGUS' is not one of RANDOM, LEAST_OUTSTANDING_REQUESTS, PREFIX_AWARE"],
    ['PREFIX_AWARE:prefixLength=1023', 'PREFIX_AWARE prefixLength must be an integer between 1024 and 65536 (got "1023")'],
    ['PREFIX_AWARE:prefixLength=65537', 'PREFIX_AWARE prefixLength must be an integer between 1024 and 65536 (got "65537")'],
    ['PREFIX_AWARE:concurrencyThreshold=0', 'PREFIX_AWARE concurrencyThreshold must be an integer between 1 and 1024 (got "0")'],
    ['PREFIX_AWARE:concurrencyThreshold=1025', 'PREFIX_AWARE concurrencyThreshold must be an integer between 1 and 1024 (got "1025")'],
    ['RANDOM,RANDOM', '--strategies names RANDOM twice'],
  ])('GIVEN --strategies %s THEN it is refused: %s', async (strategies, message) => {
    const r = await ab(['--strategies', strategies, '--yes']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(message);
    expect(fake.created).toEqual([]);
  });
});


describe('when prefix-router ab --variants compares two variants that differ only in RoutingConfig', () => {
  let endpoint: LocalEndpoint;
  let runtime: SageMakerRuntimeClient;
  let fake: FakeControlPlane;
  let dir: string;
  const wire: { variant: string | undefined; user: string | undefined }[] = [];

  beforeAll(async () => {
    endpoint = await startLocalEndpoint(2);
    runtime = new SageMakerRuntimeClient({ endpoint: endpoint.url, region: 'us-east-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' }, maxAttempts: 1 });
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
    fake = new FakeControlPlane({ variants: 2 });
    dir = await mkdtemp(join(tmpdir(), 'ab-variants-'));
    wire.length = 0;
  });
  afterEach(async () => {
    fake.restore();
    await rm(dir, { recursive: true, force: true });
  });

  it('GIVEN a multi-turn workload THEN conversations are split whole by TargetVariant, nothing is deployed, and both variants are reported side by side', async () => {
    const io = captureIo();
    const code = await runAbCommand(
      parseAbArgv(['--endpoint-name', 'my-llm', '--variants', '--workload', 'short-chat?turns=2..4&count=40&concurrency=4&outputTokens=4&userTokens=20..40&systemTokens=300', '--time-scale', String(TIME_SCALE), '--out', dir, '--quiet', '--yes', '--cloudwatch-delay', '60']),
      { io, sagemaker: new SageMakerClient({ region: 'us-east-1' }), cloudwatch: new CloudWatchClient({ region: 'us-east-1' }), runtime, clock: new VirtualClock(), env: {}, runId: 'v1' },
    );
    expect({ code, err: io.err() }).toMatchObject({ code: 0 });
    expect(io.out()).toContain('Mode: --variants: no deployment');
    expect(fake.created).toEqual([]);
    expect(fake.updates).toEqual([]);
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
    const variantDims = fake.metricQueries.flatMap((q) => q.MetricDataQueries!.map((m) => m.MetricStat!.Metric!.Dimensions!.find((d) => d.Name === 'VariantName')?.Value));
    expect(new Set(variantDims)).toEqual(new Set(['AllTraffic', 'Variant2', undefined]));
    const md = await readFile(join(dir, 'ab-report.md'), 'utf8');
    expect(md).toContain('| AllTraffic: PREFIX_AWARE(prefixLength=8192,concurrencyThreshold=32) |');
    expect(md).toContain('| Variant2: RANDOM |');
  });

  it('GIVEN variants that differ in more than RoutingConfig THEN --variants refuses', async () => {
    const config = fake.configs.get(ORIGINAL_CONFIG)!;
    fake.configs.set(ORIGINAL_CONFIG, { ...config, ProductionVariants: [config.ProductionVariants![0], { ...config.ProductionVariants![1], InstanceType: 'ml.g6e.4xlarge' }] });
    const io = captureIo();
    const code = await runAbCommand(parseAbArgv(['--endpoint-name', 'my-llm', '--variants', '--workload', WORKLOAD, '--yes']), {
      io,
      sagemaker: new SageMakerClient({ region: 'us-east-1' }),
      runtime,
      clock: new VirtualClock(),
      env: {},
    });
    expect(code).toBe(1);
    expect(io.err()).toContain('--variants compares only variants that differ in RoutingConfig alone; Variant2 differ');
  });
});
