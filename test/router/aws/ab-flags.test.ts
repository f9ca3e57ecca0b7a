/**
 * `prefix-router ab` checks every flag before its first AWS call: a typo costs no DescribeEndpoint, let alone a
 * deployment. Each bad flag runs against the stateful SageMaker fake (reached by the real SDK client), which records
 * every request it receives: none may arrive. A request that reaches no service names the API it was calling.
 */
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { createServer, type Server } from 'node:net';
import { parseAbArgv, runAbCommand } from '../../../router/src/cli/ab-command';
import { loadFlagProblems } from '../../../router/src/cli/bench-flags';
import { ENDPOINT_NAME, SageMakerControlPlane } from './helpers/sagemaker-control-plane';
import { captureIo } from './helpers/capture-io';

const WORKLOAD =
  'shared-system?groups=2&promptsPerGroup=2&systemTokens=300&questionTokens=20&outputTokens=4&concurrency=2';
const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' };

describe('when prefix-router ab is given a bad flag', () => {
  let fake: SageMakerControlPlane;
  let sagemaker: SageMakerClient;
  let runtime: SageMakerRuntimeClient;

  beforeAll(async () => {
    fake = await new SageMakerControlPlane().start();
    sagemaker = new SageMakerClient({
      endpoint: fake.url,
      region: 'us-east-1',
      credentials: CREDENTIALS,
      maxAttempts: 1,
    });
    runtime = new SageMakerRuntimeClient({
      endpoint: fake.url,
      region: 'us-east-1',
      credentials: CREDENTIALS,
      maxAttempts: 1,
    });
  });
  afterAll(async () => {
    sagemaker.destroy();
    runtime.destroy();
    await fake.close();
  });

  const ab = async (args: readonly string[]) => {
    const io = captureIo();
    const code = await runAbCommand(parseAbArgv(args), { io, sagemaker, runtime, env: {} });
    return { code, err: io.err(), out: io.out() };
  };
  /** Valid flags with `overrides` applied; null leaves a flag out. */
  const valid = (overrides: Record<string, string | null>): string[] => {
    const flags: Record<string, string | null> = {
      '--endpoint-name': ENDPOINT_NAME,
      '--strategies': 'RANDOM,PREFIX_AWARE',
      '--workload': WORKLOAD,
      ...overrides,
    };
    return Object.entries(flags).flatMap(([flag, value]) => (value === null ? [] : [flag, value]));
  };

  it.each([
    [{ '--endpoint-name': 'my_llm!' }, '--endpoint-name must be'],
    [{ '--workload': null }, '--workload is required'],
    [{ '--workload': 'long-contxt' }, '--workload:'],
    [{ '--workload': 'long-context?groups=0' }, '--workload:'],
    [{ '--concurrency': '0' }, '--concurrency'],
    [{ '--rate': '0' }, '--rate'],
    [
      { '--workload': 'short-chat', '--concurrency': '2', '--rate': '1' },
      'give --concurrency (closed loop) or --rate (open loop), not both',
    ],
    [{ '--duration': '0' }, '--duration'],
    [{ '--max-requests': '0' }, '--max-requests'],
    [{ '--warmup': '700' }, '--warmup (700 s) must be shorter than --duration (600 s)'],
    [{ '--timeout': '0' }, '--timeout'],
    [{ '--time-scale': '0' }, '--time-scale'],
    [{ '--model': '' }, '--model must not be empty'],
    [
      { '--strategies': 'RANDOM,BOGUS' },
      "--strategies: 'BOGUS' is not one of RANDOM, LEAST_OUTSTANDING_REQUESTS, PREFIX_AWARE",
    ],
    [
      { '--strategies': 'PREFIX_AWARE:prefixLength=1023' },
      'PREFIX_AWARE prefixLength must be an integer between 1024 and 65536 (got "1023")',
    ],
    [
      { '--prefix-aware-id': 'x'.repeat(65) },
      '--prefix-aware-id must be 1 to 64 printable ASCII characters (got 65 characters)',
    ],
    [{ '--poll-interval': '0' }, '--poll-interval'],
    [{ '--cloudwatch-delay': '3601' }, '--cloudwatch-delay'],
    [{ '--price-per-instance-hour': '-1' }, '--price-per-instance-hour'],
    [{ '--emf-namespace': ':x' }, '--emf-namespace must be 1-255 characters'],
  ])('GIVEN %j THEN it exits 1 naming the flag, and no request reaches SageMaker', async (overrides, message) => {
    fake.requests.length = 0;
    const r = await ab(valid(overrides));
    expect(r.code).toBe(1);
    expect(r.err).toContain(message);
    expect(fake.requests.map((q) => q.op)).toEqual([]);
  });

  it.each([
    [['--max-shadow-cost-usd', '5'], '--max-shadow-cost-usd applies with --shadow'],
    [['--inference-component', 'sql'], '--inference-component applies with --shadow'],
    [
      ['--shadow', '--variants'],
      'give --shadow (strategies on shadow endpoints) or --variants (compare existing variants), not both',
    ],
    [['--shadow', '--max-shadow-cost-usd', '-0.01'], '--max-shadow-cost-usd'],
    [['--shadow', '--max-shadow-cost-usd', '1000000.01'], '--max-shadow-cost-usd'],
    [
      ['--shadow', '--inference-component', 'bad_name'],
      '--inference-component must be 1 to 63 letters, digits and inner hyphens (got "bad_name")',
    ],
  ])(
    'GIVEN the shadow flags %j THEN it exits 1 naming the flag, and no request reaches SageMaker',
    async (extra, message) => {
      fake.requests.length = 0;
      const r = await ab([...valid({}), ...extra]);
      expect(r.code).toBe(1);
      expect(r.err).toContain(message);
      expect(fake.requests.map((q) => q.op)).toEqual([]);
    },
  );

  it.each(['0', '1000000'])(
    'GIVEN --shadow --max-shadow-cost-usd %s (a bound of its range) THEN the flag is accepted',
    async (value) => {
      fake.requests.length = 0;
      // This fake's endpoint serves a model on its variant, so --shadow is refused after the reads, not for the flag.
      const r = await ab([...valid({}), '--shadow', '--max-shadow-cost-usd', value]);
      expect(r.err).not.toContain('--max-shadow-cost-usd');
      expect(r.err).toContain('--shadow is for endpoints that host inference components');
    },
  );

  it('GIVEN several bad flags THEN one run lists them all, still without a request', async () => {
    fake.requests.length = 0;
    const r = await ab(valid({ '--duration': '0', '--timeout': '0', '--strategies': 'RANDOM,BOGUS' }));
    expect(r.code).toBe(1);
    for (const flag of ['--duration', '--timeout', '--strategies']) expect(r.err).toContain(flag);
    expect(fake.requests).toEqual([]);
  });

  it('GIVEN valid flags THEN the control plane is asked and the plan printed (the fake does record requests)', async () => {
    fake.requests.length = 0;
    const r = await ab(valid({}));
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
    expect(fake.requests.map((q) => q.op)).toEqual(
      expect.arrayContaining(['DescribeEndpoint', 'DescribeEndpointConfig']),
    );
  });
});

describe('when the SageMaker API cannot be reached', () => {
  let closed: Server;
  let port: number;
  beforeAll(async () => {
    // A port that was just listening and is closed again: connections to it are refused.
    closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
  });

  it('THEN ab exits 1 with the API it was calling and the network error, not a stack trace', async () => {
    const sagemaker = new SageMakerClient({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: CREDENTIALS,
      maxAttempts: 1,
    });
    const runtime = new SageMakerRuntimeClient({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: CREDENTIALS,
      maxAttempts: 1,
    });
    try {
      const io = captureIo();
      const code = await runAbCommand(
        parseAbArgv(['--endpoint-name', ENDPOINT_NAME, '--strategies', 'RANDOM', '--workload', WORKLOAD]),
        { io, sagemaker, runtime, env: {} },
      );
      expect(code).toBe(1);
      expect(io.err()).toMatch(
        new RegExp(
          `^prefix-router ab: could not reach AWS calling DescribeEndpoint \\(endpoint '${ENDPOINT_NAME}'\\): connect ECONNREFUSED 127\\.0\\.0\\.1:${port}`,
        ),
      );
    } finally {
      sagemaker.destroy();
      runtime.destroy();
    }
  });
});

describe('when the load flags are checked without a target', () => {
  it('GIVEN valid load flags THEN there is no problem, and no URL was needed', () => {
    expect(loadFlagProblems({ workload: WORKLOAD, duration: '60' })).toEqual([]);
  });

  it('GIVEN a bad workload and duration THEN both are listed', () => {
    expect(loadFlagProblems({ workload: 'nope', duration: '-1' })).toEqual([
      expect.stringContaining('--workload:'),
      expect.stringContaining('--duration'),
    ]);
  });
});
