import {
  DescribeEndpointCommand,
  DescribeEndpointConfigCommand,
  DescribeModelCommand,
  SageMakerClient,
} from '@aws-sdk/client-sagemaker';
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import {
  CloudWatchClient,
  GetMetricDataCommand,
  ListMetricsCommand,
  type GetMetricDataCommandInput,
} from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { VirtualClock } from './helpers/virtual-clock';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRawBenchArgv, runSageMakerBench } from '../../../router/src/cli/sagemaker-bench';
import { parseBenchArgv } from '../../../router/src/cli/bench-flags';
import type { BenchIo } from '../../../router/src/cli/bench-run';
import { parseReportJson } from '../../../router/src/report';
import { parseWorkloadSpec } from '../../../router/src/workload';
import { startLocalEndpoint, TIME_SCALE, useLocalRuntimeEnv, type LocalEndpoint } from './helpers/local-endpoint';
import { captureIo } from './helpers/capture-io';

/**
 * `prefix-router bench --sagemaker-endpoint`: the data plane is the real SDK against the local router and
 * emulators; the control plane (DescribeEndpoint/Config/Model) is aws-sdk-client-mock. No test calls AWS.
 */
const WORKLOAD =
  'shared-system?groups=2&promptsPerGroup=4&systemTokens=300&questionTokens=20&outputTokens=6&order=grouped&concurrency=2';

const DESCRIBED_ENDPOINT = {
  EndpointName: 'my-llm',
  EndpointArn: 'arn:aws:sagemaker:us-east-1:111122223333:endpoint/my-llm',
  EndpointConfigName: 'my-llm-config',
  EndpointStatus: 'InService' as const,
  CreationTime: new Date(0),
  LastModifiedTime: new Date(0),
  ProductionVariants: [{ VariantName: 'AllTraffic', CurrentInstanceCount: 2, DesiredInstanceCount: 2 }],
};
const DESCRIBED_CONFIG = {
  EndpointConfigName: 'my-llm-config',
  EndpointConfigArn: 'arn:aws:sagemaker:us-east-1:111122223333:endpoint-config/my-llm-config',
  CreationTime: new Date(0),
  ProductionVariants: [
    {
      VariantName: 'AllTraffic',
      ModelName: 'my-llm-model',
      InstanceType: 'ml.g6e.2xlarge' as const,
      InitialInstanceCount: 2,
      RoutingConfig: {
        RoutingStrategy: 'PREFIX_AWARE' as const,
        PrefixAwareRoutingConfig: { PrefixLength: 8192, ConcurrencyThreshold: 32 },
      },
    },
  ],
};

describe('when bench --sagemaker-endpoint runs against the local runtime API (AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME)', () => {
  let endpoint: LocalEndpoint;
  let restoreEnv: () => void;
  let dir: string;

  beforeAll(async () => {
    endpoint = await startLocalEndpoint(2);
    restoreEnv = useLocalRuntimeEnv(endpoint.url);
    dir = await mkdtemp(join(tmpdir(), 'sm-bench-'));
  });
  afterAll(async () => {
    restoreEnv();
    await endpoint.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('GIVEN the invoke API THEN the usual report is written: TTFT, cached tokens from usage, per-instance share from the router header', async () => {
    const io = captureIo();
    const out = join(dir, 'invoke');
    const code = await runSageMakerBench(
      parseRawBenchArgv([
        '--sagemaker-endpoint',
        'my-llm',
        '--workload',
        WORKLOAD,
        '--time-scale',
        String(TIME_SCALE),
        '--out',
        out,
        '--quiet',
      ]),
      io,
    );
    expect({ code, err: io.err() }).toMatchObject({ code: 0 });
    expect(io.err()).toContain('DescribeEndpoint was skipped');
    const report = parseReportJson(await readFile(join(out, 'report.json'), 'utf8'));
    const s = report.strategies[0];
    expect(s.requests).toBe(8);
    expect(s.errors).toBe(0);
    expect(s.ttftMs.p50).toBeGreaterThan(0);
    expect(s.ttftMs.p50!).toBeLessThan(s.e2eMs.p50!);
    expect(s.cacheHitRate.engineReported!).toBeGreaterThan(0.4);
    // Per-instance counts come from the router's instance header and equal its own decisions.
    for (const b of endpoint.router.backends)
      expect(s.instances.find((i) => i.id === b.name)?.requests ?? 0).toBe(b.decisions);
    // Each group stays on one instance under PREFIX_AWARE (1,024-byte key < the 1,200-character system prompt).
    const records = (await readFile(join(out, 'report.records.live.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; instance: string });
    const groupOf = new Map([...parseWorkloadSpec(WORKLOAD).requests()].map((r) => [r.id, r.group]));
    const groups = new Map<string, Set<string>>();
    for (const r of records) {
      const group = String(groupOf.get(r.id));
      groups.set(group, (groups.get(group) ?? new Set()).add(r.instance));
    }
    expect([...groups.values()].every((set) => set.size === 1)).toBe(true);
    expect(report.notes.join('\n')).toContain(`${endpoint.url}/endpoints/my-llm`);
  });

  it('GIVEN --api openai THEN the OpenAI-compatible path carries the same workload', async () => {
    const io = captureIo();
    const out = join(dir, 'openai');
    const code = await runSageMakerBench(
      parseRawBenchArgv([
        '--sagemaker-endpoint',
        'my-llm',
        '--api',
        'openai',
        '--workload',
        WORKLOAD,
        '--time-scale',
        String(TIME_SCALE),
        '--out',
        out,
        '--quiet',
      ]),
      io,
    );
    expect({ code, err: io.err() }).toMatchObject({ code: 0 });
    const report = parseReportJson(await readFile(join(out, 'report.json'), 'utf8'));
    expect(report.strategies[0].requests).toBe(8);
    expect(report.strategies[0].errors).toBe(0);
  });

  it('GIVEN --api openai with a completions workload THEN it refuses before sending', async () => {
    const io = captureIo();
    const code = await runSageMakerBench(
      parseRawBenchArgv([
        '--sagemaker-endpoint',
        'my-llm',
        '--api',
        'openai',
        '--workload',
        'shared-system?api=completion&count=2',
      ]),
      io,
    );
    expect(code).toBe(1);
    expect(io.err()).toContain('--api openai serves chat completions only');
  });
});

describe('when SageMaker-only bench flags come without --sagemaker-endpoint', () => {
  it.each([
    ['--region', 'us-east-1'],
    ['--api', 'openai'],
    ['--prefix-aware-id', 'app'],
    ['--cloudwatch-delay', '0'],
  ])('GIVEN --url with %s THEN the flags are refused', (flag, value) => {
    expect(() => parseBenchArgv(['--url', 'http://127.0.0.1:8080', '--workload', 'short-chat', flag, value])).toThrow(
      '--region, --api, --prefix-aware-id, --inference-component and --cloudwatch apply only with --sagemaker-endpoint',
    );
  });

  it('GIVEN --url and --sagemaker-endpoint together THEN it refuses', async () => {
    const io = captureIo();
    const code = await runSageMakerBench(
      parseRawBenchArgv(['--sagemaker-endpoint', 'ep', '--url', 'http://127.0.0.1:1', '--workload', 'short-chat']),
      io,
      { env: {} },
    );
    expect(code).toBe(1);
    expect(io.err()).toBe('prefix-router bench: give --url or --sagemaker-endpoint, not both\n');
  });
});

describe('when bench --sagemaker-endpoint checks the endpoint before the first request', () => {
  const sm = mockClient(SageMakerClient);
  let endpoint: LocalEndpoint;
  let runtime: SageMakerRuntimeClient;

  beforeAll(async () => {
    endpoint = await startLocalEndpoint(2);
    runtime = new SageMakerRuntimeClient({
      endpoint: endpoint.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
    });
  });
  afterAll(async () => {
    runtime.destroy();
    sm.restore();
    await endpoint.close();
  });
  beforeEach(() => sm.reset());

  const run = (io: BenchIo, extra: string[] = [], deps: { runtime?: SageMakerRuntimeClient } = {}) =>
    runSageMakerBench(
      parseRawBenchArgv(['--sagemaker-endpoint', 'my-llm', '--workload', 'short-chat?count=2&concurrency=1', ...extra]),
      io,
      {
        sagemaker: new SageMakerClient({ region: 'us-east-1' }),
        runtime: deps.runtime ?? runtime,
        env: {},
      },
    );

  it('GIVEN an unknown endpoint THEN it fails naming the endpoint and region, and sends nothing', async () => {
    sm.on(DescribeEndpointCommand).rejects(
      Object.assign(new Error('Could not find endpoint "my-llm".'), { name: 'ValidationException' }),
    );
    const before = endpoint.router.backends.reduce((n, b) => n + b.decisions, 0);
    const io = captureIo();
    expect(await run(io)).toBe(1);
    expect(io.err()).toContain("endpoint 'my-llm' does not exist in this account and region");
    expect(endpoint.router.backends.reduce((n, b) => n + b.decisions, 0)).toBe(before);
  });

  it('GIVEN an endpoint that is Updating THEN it fails saying so', async () => {
    sm.on(DescribeEndpointCommand).resolves({ ...DESCRIBED_ENDPOINT, EndpointStatus: 'Updating' });
    sm.on(DescribeEndpointConfigCommand).resolves(DESCRIBED_CONFIG);
    const io = captureIo();
    expect(await run(io)).toBe(1);
    expect(io.err()).toContain("endpoint 'my-llm' is Updating, not InService");
  });

  it('GIVEN no region anywhere THEN it fails naming --region', async () => {
    const saved = { r: process.env.AWS_REGION, d: process.env.AWS_DEFAULT_REGION, c: process.env.AWS_CONFIG_FILE };
    delete process.env.AWS_REGION;
    delete process.env.AWS_DEFAULT_REGION;
    process.env.AWS_CONFIG_FILE = '/nonexistent';
    const noRegion = new SageMakerRuntimeClient({ credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    try {
      const io = captureIo();
      expect(await run(io, [], { runtime: noRegion })).toBe(1);
      expect(io.err()).toContain('no AWS region for the SageMaker runtime API: pass --region or set AWS_REGION');
    } finally {
      noRegion.destroy();
      for (const [k, v] of [
        ['AWS_REGION', saved.r],
        ['AWS_DEFAULT_REGION', saved.d],
        ['AWS_CONFIG_FILE', saved.c],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('GIVEN no credentials THEN it fails naming the provider chain', async () => {
    const noCredentials = new SageMakerRuntimeClient({
      region: 'us-east-1',
      credentials: async () => {
        throw Object.assign(new Error('Could not load credentials from any providers'), {
          name: 'CredentialsProviderError',
        });
      },
    });
    try {
      const io = captureIo();
      expect(await run(io, [], { runtime: noCredentials })).toBe(1);
      expect(io.err()).toContain(
        'no AWS credentials for the SageMaker runtime API: configure the default provider chain',
      );
    } finally {
      noCredentials.destroy();
    }
  });

  it("GIVEN --cloudwatch THEN CloudWatch is read for the run window and written beside the report, labelled as CloudWatch's", async () => {
    sm.on(DescribeEndpointCommand).resolves(DESCRIBED_ENDPOINT);
    sm.on(DescribeEndpointConfigCommand).resolves(DESCRIBED_CONFIG);
    sm.on(DescribeModelCommand).resolves({
      ModelName: 'my-llm-model',
      ModelArn: 'arn',
      CreationTime: new Date(0),
      PrimaryContainer: { Environment: { SM_VLLM_MODEL: 'tiny-emulated-model' } },
    });
    const cw = mockClient(CloudWatchClient);
    cw.on(ListMetricsCommand).resolves({ Metrics: [] });
    cw.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => ({
      MetricDataResults: (input.MetricDataQueries ?? []).map((q) => ({
        Id: q.Id,
        Values: q.MetricStat?.Metric?.MetricName === 'Invocations' ? [2] : [],
      })),
    }));
    const clock = new VirtualClock();
    const dir = await mkdtemp(join(tmpdir(), 'sm-bench-cw-'));
    try {
      const io = captureIo();
      const code = await runSageMakerBench(
        parseRawBenchArgv([
          '--sagemaker-endpoint',
          'my-llm',
          '--workload',
          'short-chat?count=2&concurrency=1',
          '--time-scale',
          String(TIME_SCALE),
          '--out',
          dir,
          '--quiet',
          '--cloudwatch',
        ]),
        io,
        {
          sagemaker: new SageMakerClient({ region: 'us-east-1' }),
          cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
          runtime,
          env: {},
          clock,
        },
      );
      expect(code).toBe(0);
      // The delay counts from the end of the run window (the run's own wall time on top of the virtual start).
      expect(clock.sleeps).toHaveLength(1);
      expect(clock.sleeps[0]).toBeGreaterThanOrEqual(180_000);
      expect(clock.sleeps[0]).toBeLessThan(190_000);
      const md = await readFile(join(dir, 'cloudwatch.md'), 'utf8');
      expect(md).toContain("# CloudWatch's view of live on my-llm");
      expect(md).toContain('| live | AllTraffic | 2 |');
      expect(md).toContain(
        '- live: the client sent 2 requests; CloudWatch counted 2 invocations in the window (both counts include the warm-up;',
      );
      expect(io.out()).toContain(`cloudwatch: ${join(dir, 'cloudwatch.md')}`);
    } finally {
      cw.restore();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('GIVEN an InService endpoint THEN the served model comes from DescribeModel and the run succeeds', async () => {
    sm.on(DescribeEndpointCommand).resolves(DESCRIBED_ENDPOINT);
    sm.on(DescribeEndpointConfigCommand).resolves(DESCRIBED_CONFIG);
    sm.on(DescribeModelCommand, { ModelName: 'my-llm-model' }).resolves({
      ModelName: 'my-llm-model',
      ModelArn: 'arn:aws:sagemaker:us-east-1:111122223333:model/my-llm-model',
      CreationTime: new Date(0),
      PrimaryContainer: { Environment: { SM_VLLM_MODEL: 'tiny-emulated-model' } },
    });
    const dir = await mkdtemp(join(tmpdir(), 'sm-bench-'));
    try {
      const io = captureIo();
      expect(await run(io, ['--time-scale', String(TIME_SCALE), '--out', dir, '--quiet'])).toBe(0);
      const report = parseReportJson(await readFile(join(dir, 'report.json'), 'utf8'));
      expect(report.environment.model).toBe('tiny-emulated-model');
      expect(report.strategies[0].errors).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
