import { CreateInferenceComponentCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAbArgv, runAbCommand } from '../../../router/src/cli/ab-command';
import { parseRawBenchArgv, runSageMakerBench } from '../../../router/src/cli/sagemaker-bench';
import { parseReportJson } from '../../../router/src/report';
import { SageMakerControlPlane, type ControlPlaneOptions } from './helpers/sagemaker-control-plane';
import { VirtualClock } from './helpers/virtual-clock';
import { captureIo } from './helpers/capture-io';
import { startLocalAdapterEndpoint, type LocalAdapterEndpoint } from './helpers/local-endpoint';

/**
 * Endpoints that host inference components, through the real SDK (the control-plane fake's own tests are beside it,
 * helpers/sagemaker-control-plane.test.ts): `ab` refusing such an endpoint before any change (its invariant cannot be proven for the components),
 * and `bench --inference-component` invoking one component (a LoRA adapter) through the local runtime API.
 */
const WORKLOAD =
  'shared-system?groups=2&promptsPerGroup=3&systemTokens=300&questionTokens=20&outputTokens=4&concurrency=2';
const COMPONENTS: ControlPlaneOptions['inferenceComponents'] = [
  { name: 'llama-base', environment: { SM_VLLM_SERVED_MODEL_NAME: 'base' }, copies: 2 },
  { name: 'sql', base: 'llama-base' },
];

const MUTATING = /^(Create|Update|Delete)/;

describe('when ab and bench meet an endpoint that hosts inference components', () => {
  let local: LocalAdapterEndpoint;
  let runtime: SageMakerRuntimeClient;
  let fake: SageMakerControlPlane;
  let sm: SageMakerClient;
  let dir: string;

  beforeAll(async () => {
    local = await startLocalAdapterEndpoint([['sql'], []]);
    runtime = local.runtime;
  }, 60_000);
  afterAll(() => local.close());
  beforeEach(async () => {
    fake = await new SageMakerControlPlane({ inferenceComponents: COMPONENTS }).start();
    sm = new SageMakerClient({
      endpoint: fake.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      maxAttempts: 1,
    });
    dir = await mkdtemp(join(tmpdir(), 'ic-'));
  });
  afterEach(async () => {
    sm.destroy();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    [['--strategies', 'RANDOM,PREFIX_AWARE', '--yes']],
    [['--strategies', 'RANDOM']],
    [['--variants', '--yes']],
  ])(
    'GIVEN ab %j THEN it refuses before any mutating call, saying why, and the endpoint is where it began',
    async (args) => {
      const io = captureIo();
      const code = await runAbCommand(
        parseAbArgv(['--endpoint-name', 'my-llm', '--workload', WORKLOAD, '--out', dir, '--quiet', ...args]),
        {
          io,
          sagemaker: sm,
          cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
          runtime,
          clock: new VirtualClock(),
          env: {},
          runId: 'ic1',
        },
      );
      expect(code).toBe(1);
      expect(io.err()).toContain("ab cannot run on endpoint 'my-llm': it hosts inference components (llama-base, sql)");
      expect(io.err()).toContain('Nothing was changed');
      expect(fake.requests.filter((r) => MUTATING.test(r.op))).toEqual([]);
      expect(fake.requests.map((r) => r.op)).toContain('ListInferenceComponents');
      expect(fake.restored()).toBe(true);
      expect(fake.components.size).toBe(2);
    },
  );

  it('GIVEN bench --inference-component sql THEN every request invokes the adapter, on the engine serving it', async () => {
    const io = captureIo();
    const out = join(dir, 'bench');
    const code = await runSageMakerBench(
      parseRawBenchArgv([
        '--sagemaker-endpoint',
        'my-llm',
        '--inference-component',
        'sql',
        '--workload',
        WORKLOAD,
        '--time-scale',
        '20',
        '--out',
        out,
        '--quiet',
      ]),
      io,
      { sagemaker: sm, runtime, env: {}, clock: new VirtualClock() },
    );
    expect({ code, err: io.err() }).toMatchObject({ code: 0 });
    const report = parseReportJson(await readFile(join(out, 'report.json'), 'utf8'));
    expect(report.strategies[0].requests).toBe(6);
    expect(report.strategies[0].errors).toBe(0);
    expect(report.strategies[0].instances.map((i) => i.id)).toEqual([local.router.backends[0].name]);
    expect(fake.requests.map((r) => r.op)).toContain('DescribeInferenceComponent');
  });

  it('GIVEN bench without --inference-component THEN it refuses, naming the flag', async () => {
    const io = captureIo();
    const code = await runSageMakerBench(
      parseRawBenchArgv(['--sagemaker-endpoint', 'my-llm', '--workload', WORKLOAD, '--quiet']),
      io,
      { sagemaker: sm, runtime, env: {}, clock: new VirtualClock() },
    );
    expect(code).toBe(1);
    expect(io.err()).toContain("endpoint 'my-llm' hosts inference components: pass --inference-component NAME");
  });

  it.each([
    ['a component that does not exist', 'nope', /does not exist/],
    ['an invalid name', 'bad_name', /--inference-component must be 1 to 63 letters/],
  ])('GIVEN bench with %s THEN it refuses before sending', async (_what, name, message) => {
    const io = captureIo();
    const code = await runSageMakerBench(
      parseRawBenchArgv([
        '--sagemaker-endpoint',
        'my-llm',
        '--inference-component',
        name,
        '--workload',
        WORKLOAD,
        '--quiet',
      ]),
      io,
      {
        sagemaker: sm,
        runtime,
        env: {},
        clock: new VirtualClock(),
      },
    );
    expect(code).toBe(1);
    expect(io.err()).toMatch(message);
  });

  it('GIVEN bench with a component still Creating THEN it refuses: not InService', async () => {
    await sm.send(
      new CreateInferenceComponentCommand({
        InferenceComponentName: 'fresh',
        EndpointName: 'my-llm',
        VariantName: 'AllTraffic',
        Specification: { BaseInferenceComponentName: 'llama-base' },
      }),
    );
    const io = captureIo();
    const code = await runSageMakerBench(
      parseRawBenchArgv([
        '--sagemaker-endpoint',
        'my-llm',
        '--inference-component',
        'fresh',
        '--workload',
        WORKLOAD,
        '--quiet',
      ]),
      io,
      {
        sagemaker: sm,
        runtime,
        env: {},
        clock: new VirtualClock(),
      },
    );
    expect(code).toBe(1);
    expect(io.err()).toContain("inference component 'fresh' is Creating, not InService");
  });
});
