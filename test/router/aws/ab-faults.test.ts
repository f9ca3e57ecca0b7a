import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { compiledCli } from '../../compiled-dist';
import { runAwsCli } from './helpers/aws-cli';
import { startLocalEndpoint, TIME_SCALE, type LocalEndpoint } from './helpers/local-endpoint';
import {
  describedConfig,
  ORIGINAL_CONFIG,
  SageMakerControlPlane,
  type ControlPlaneOptions,
  type DeploymentOutcome,
  type FaultKind,
} from './helpers/sagemaker-control-plane';

/**
 * The A/B's invariant under faults and signals, for the real `prefix-router ab --yes` (the built CLI as a child
 * process, so SIGINT, SIGTERM and SIGHUP are real signals) against the stateful control-plane fake and the local
 * router and emulators:
 *
 *   the endpoint ends InService on its original configuration, nothing pending, every copy deleted — or the tool
 *   exits 3 naming the state and the exact commands that finish the job (run here: they must finish it); and no
 *   configuration in use is ever deleted, and nothing but the restore is sent after a signal.
 *
 * fast-check draws the schedule: strategies, fleet size, how each deployment ends (ok, rolled back,
 * UpdateRollbackFailed, OutOfService, Failed), faults by request number (throttling, 5xx, socket resets before and
 * after the request took effect, expired credentials, ResourceLimitExceeded), autoscaling (Updating, or RollingBack
 * when the capacity change fails), maintenance (SystemUpdating), the
 * original configuration deleted by someone else, PREFIX_AWARE refused, and a signal at any request.
 */
/** The built CLI (rebuilt when a source is newer: test/compiled-dist.ts). */
const CLI = compiledCli();
const RUNS = 20;
const CHILD_TIMEOUT_MS = 25_000;

interface Schedule {
  readonly strategies: string;
  readonly instances: number;
  readonly outcomes: DeploymentOutcome[];
  readonly faults: [number, FaultKind][];
  readonly autoscale: [number, number][];
  readonly autoscaleFailsAt: number | undefined;
  readonly systemUpdateAt: number | undefined;
  readonly deleteOriginalAt: number | undefined;
  readonly refusePrefixAware: boolean;
  readonly signal: { readonly name: 'SIGINT' | 'SIGTERM' | 'SIGHUP'; readonly atRequest: number } | undefined;
}

const outcome = fc.oneof(
  { weight: 8, arbitrary: fc.constant<DeploymentOutcome>('ok') },
  { weight: 2, arbitrary: fc.constant<DeploymentOutcome>('rollback') },
  { weight: 1, arbitrary: fc.constant<DeploymentOutcome>('rollback-failed') },
  { weight: 1, arbitrary: fc.constant<DeploymentOutcome>('out-of-service') },
  { weight: 1, arbitrary: fc.constant<DeploymentOutcome>('failed') },
);
const fault = fc.constantFrom<FaultKind>(
  'throttle',
  'server-error',
  'reset',
  'reset-after',
  'expire-credentials',
  'limit-exceeded',
);

const schedule: fc.Arbitrary<Schedule> = fc.record({
  strategies: fc.constantFrom(
    'RANDOM',
    'RANDOM,PREFIX_AWARE',
    'PREFIX_AWARE:prefixLength=2048,LEAST_OUTSTANDING_REQUESTS',
  ),
  instances: fc.integer({ min: 2, max: 4 }),
  outcomes: fc.array(outcome, { minLength: 5, maxLength: 5 }),
  faults: fc.uniqueArray(fc.tuple(fc.integer({ min: 4, max: 40 }), fault), { maxLength: 4, selector: ([seq]) => seq }),
  autoscale: fc.array(fc.tuple(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 5 })), { maxLength: 2 }),
  autoscaleFailsAt: fc.option(fc.integer({ min: 1, max: 20 }), { freq: 3, nil: undefined }),
  systemUpdateAt: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
  deleteOriginalAt: fc.option(fc.integer({ min: 1, max: 20 }), { freq: 4, nil: undefined }),
  refusePrefixAware: fc.integer({ min: 0, max: 4 }).map((x) => x === 0),
  signal: fc.option(
    fc.record({
      name: fc.constantFrom<'SIGINT' | 'SIGTERM' | 'SIGHUP'>('SIGINT', 'SIGTERM', 'SIGHUP'),
      atRequest: fc.integer({ min: 4, max: 35 }),
    }),
    { nil: undefined },
  ),
});

interface ChildResult {
  readonly code: number | null;
  readonly stderr: string;
  readonly stdout: string;
  readonly signalSeq: number | undefined;
  readonly timedOut: boolean;
}

describe('when prefix-router ab runs under generated faults and signals', () => {
  let endpoint: LocalEndpoint;
  let dir: string;

  beforeAll(async () => {
    endpoint = await startLocalEndpoint(2);
    dir = await mkdtemp(join(tmpdir(), 'ab-faults-'));
  });
  afterAll(async () => {
    await endpoint.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function runChild(
    fake: SageMakerControlPlane,
    s: Schedule,
    out: string,
    extraEnv: NodeJS.ProcessEnv = {},
  ): Promise<ChildResult> {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      AWS_ENDPOINT_URL_SAGEMAKER: fake.url,
      AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: endpoint.url,
      AWS_REGION: 'us-east-1',
      // Credentials come from the fake's container-credentials endpoint, so an expired key can be replaced.
      AWS_CONTAINER_CREDENTIALS_FULL_URI: fake.credentialsUrl,
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
      AWS_CONFIG_FILE: join(dir, 'no-config'),
      AWS_EC2_METADATA_DISABLED: 'true',
      // The tool's own retries are under test, not the SDK's.
      AWS_MAX_ATTEMPTS: '1',
      NO_COLOR: '1',
      ...extraEnv,
    };
    const args = [
      CLI,
      'ab',
      '--endpoint-name',
      'my-llm',
      '--strategies',
      s.strategies,
      '--workload',
      'shared-system?groups=1&promptsPerGroup=2&systemTokens=200&questionTokens=20&outputTokens=2&concurrency=2',
      '--max-requests',
      '2',
      '--warmup',
      '0',
      '--time-scale',
      String(TIME_SCALE),
      '--poll-interval',
      '1',
      '--restore-timeout',
      '1',
      '--no-cloudwatch',
      '--quiet',
      '--out',
      out,
      '--yes',
    ];
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let signalSeq: number | undefined;
    const earlier = fake.onRequest;
    fake.onRequest = async (record) => {
      await earlier?.(record);
      if (s.signal === undefined || record.seq !== s.signal.atRequest) return;
      signalSeq = record.seq;
      child.kill(s.signal.name);
      // The answer arrives after the signal: the tool is mid-call (CreateEndpointConfig, a backoff, a wait) when it lands.
      await new Promise((r) => setTimeout(r, 40));
    };
    let timedOut = false;
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, CHILD_TIMEOUT_MS);
      child.on('close', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    fake.onRequest = undefined;
    return { code, stderr, stdout, signalSeq, timedOut };
  }

  const quiet: Schedule = {
    strategies: 'RANDOM',
    instances: 2,
    outcomes: ['ok', 'ok', 'ok', 'ok', 'ok'],
    faults: [],
    autoscale: [],
    autoscaleFailsAt: undefined,
    systemUpdateAt: undefined,
    deleteOriginalAt: undefined,
    refusePrefixAware: false,
    signal: undefined,
  };

  it('GIVEN the credentials expire during the restore THEN it re-resolves the credential chain (a fresh key from the container endpoint) and restores', async () => {
    // Requests 1-3 plan, 4 create, 5 describe, 6 update, 7-9 waits, then the restore from 10 on.
    const fake = await new SageMakerControlPlane({ faults: new Map([[10, 'expire-credentials']]) }).start();
    try {
      const r = await runChild(fake, quiet, join(dir, 'expire'));
      expect({ code: r.code, err: r.stderr.slice(-2000) }).toMatchObject({ code: 0 });
      expect(r.stderr).toContain('the credentials expired; re-resolving the credential chain');
      const first = fake.requests[0].key;
      expect(fake.requests.find((q) => q.seq === 10)).toMatchObject({ key: first, error: 'ExpiredTokenException' });
      expect(fake.requests.filter((q) => q.seq > 10).every((q) => q.key !== first)).toBe(true);
      expect(fake.restored()).toBe(true);
    } finally {
      await fake.close();
    }
  });

  it('GIVEN keys in the shared credentials file that expire and are replaced there THEN the restore re-reads the file and restores', async () => {
    const file = join(dir, 'credentials');
    const write = (key: string) =>
      writeFileSync(file, `[default]\naws_access_key_id = ${key}\naws_secret_access_key = secret\n`);
    write('AKIAFIRSTKEY00000001');
    const fake = await new SageMakerControlPlane({ faults: new Map([[10, 'expire-credentials']]) }).start();
    // The user writes new keys as soon as the old ones are refused.
    fake.onRequest = (q) => {
      if (q.seq === 10) write('AKIASECONDKEY0000002');
    };
    try {
      const r = await runChild(fake, quiet, join(dir, 'file-keys'), {
        AWS_CONTAINER_CREDENTIALS_FULL_URI: undefined,
        AWS_SHARED_CREDENTIALS_FILE: file,
      });
      expect({ code: r.code, err: r.stderr.slice(-2000) }).toMatchObject({ code: 0 });
      expect(fake.requests.find((q) => q.seq === 10)).toMatchObject({
        key: 'AKIAFIRSTKEY00000001',
        error: 'ExpiredTokenException',
      });
      expect(fake.requests.filter((q) => q.seq > 10).map((q) => q.key)).toEqual(
        fake.requests.filter((q) => q.seq > 10).map(() => 'AKIASECONDKEY0000002'),
      );
      expect(fake.restored()).toBe(true);
    } finally {
      await fake.close();
    }
  });

  it('GIVEN SIGHUP while CreateEndpointConfig is in flight THEN no UpdateEndpoint is sent, the copy is deleted and it exits 129', async () => {
    const fake = await new SageMakerControlPlane().start();
    try {
      const r = await runChild(
        fake,
        { ...quiet, strategies: 'RANDOM,PREFIX_AWARE', signal: { name: 'SIGHUP', atRequest: 4 } },
        join(dir, 'hup'),
      );
      expect(fake.requests[3]).toMatchObject({ op: 'CreateEndpointConfig' });
      expect({ code: r.code, err: r.stderr.slice(-2000) }).toMatchObject({ code: 129 });
      expect(fake.requests.filter((q) => q.op === 'UpdateEndpoint')).toEqual([]);
      expect(fake.restored()).toBe(true);
    } finally {
      await fake.close();
    }
  });

  it(`GIVEN ${RUNS} generated schedules THEN each run ends restored with every copy deleted, or exits 3 with commands that finish the job; nothing in use is deleted`, async () => {
    let run = 0;
    let switched = 0;
    let unfinished = 0;
    await fc.assert(
      fc.asyncProperty(schedule, async (s) => {
        const options: ControlPlaneOptions = {
          instanceCount: s.instances,
          outcomes: s.outcomes,
          faults: new Map(s.faults),
          autoscale: new Map(s.autoscale),
          autoscaleFailsAt: s.autoscaleFailsAt,
          systemUpdateAt: s.systemUpdateAt,
          deleteOriginalAt: s.deleteOriginalAt,
          refusePrefixAware: s.refusePrefixAware,
          pollsPerUpdate: 2,
        };
        const fake = await new SageMakerControlPlane(options).start();
        const out = join(dir, `run-${run++}`);
        try {
          const r = await runChild(fake, s, out);
          // What a failure shows: the exit, the tool's last lines and every request the fake answered.
          const context = `exit ${r.code}\n${r.stderr.slice(-3000)}\n${fake.requests.map((q) => `${q.seq} ${q.op} ${String(q.input.EndpointConfigName ?? '')} ${q.error ?? ''}`).join('\n')}`;
          expect({ violations: fake.violations, context }).toEqual({ violations: [], context });
          // After a signal nothing but the restore changes the endpoint: no copy created, no switch to a copy.
          if (r.signalSeq !== undefined) {
            const forward = fake.requests.filter(
              (q) =>
                q.seq > r.signalSeq! &&
                ((q.op === 'UpdateEndpoint' && q.input.EndpointConfigName !== ORIGINAL_CONFIG) ||
                  (q.op === 'CreateEndpointConfig' && q.input.EndpointConfigName !== ORIGINAL_CONFIG)),
            );
            expect({
              forward: forward.map((q) => `${q.seq} ${q.op} ${String(q.input.EndpointConfigName)}`),
              context,
            }).toEqual({ forward: [], context });
          }
          if (fake.requests.some((q) => q.op === 'UpdateEndpoint')) switched++;
          if (r.code === 3) unfinished++;
          const mutations = fake.requests.filter(
            (q) => q.op === 'CreateEndpointConfig' || q.op === 'UpdateEndpoint' || q.op === 'DeleteEndpointConfig',
          );
          if (r.code === 1 || (r.code === null && r.signalSeq !== undefined && !r.timedOut)) {
            // A setup failure (a fault while the plan was read), or a signal before the first change, changes nothing.
            expect({ mutations, context }).toEqual({ mutations: [], context });
            expect(fake.copies()).toEqual([]);
            expect(fake.state.config).toBe(ORIGINAL_CONFIG);
            return;
          }
          expect({ allowed: [0, 2, 3, 129, 130, 143].includes(r.code ?? -1), context }).toEqual({
            allowed: true,
            context,
          });
          if (r.code === 3) {
            expect(r.stderr).toMatch(/State: my-llm is \S+/);
            const commands = r.stderr
              .split('\n')
              .filter((l) => l.startsWith('  aws sagemaker '))
              .map((l) => l.trim());
            expect(commands.length).toBeGreaterThan(0);
            // The commands, as printed, finish the job.
            fake.clearFaults();
            const client = new SageMakerClient({
              endpoint: fake.url,
              region: 'us-east-1',
              credentials: { accessKeyId: `${fake.accessKeyId}`, secretAccessKey: 'x' },
              maxAttempts: 1,
            });
            try {
              for (const c of commands) await runAwsCli(c, client);
            } finally {
              client.destroy();
            }
          } else if (r.signalSeq !== undefined && r.stderr.includes(': stopping the run and restoring')) {
            expect(r.code).toBe({ SIGHUP: 129, SIGINT: 130, SIGTERM: 143 }[s.signal!.name]);
          }
          expect({ restored: fake.restored(), state: fake.state, copies: fake.copies(), context }).toMatchObject({
            restored: true,
            context,
          });
          expect(fake.violations).toEqual([]);
          // The original configuration is the one that was deployed (recreated with the same settings if deleted).
          const {
            EndpointConfigArn: _a,
            CreationTime: _c,
            $metadata: _m,
            ...want
          } = describedConfig(ORIGINAL_CONFIG, 1, s.instances);
          const { EndpointConfigArn: _b, CreationTime: _d, $metadata: _n, ...got } = fake.configs.get(ORIGINAL_CONFIG)!;
          expect(got).toEqual(want);
        } finally {
          await fake.close();
        }
      }),
      { numRuns: RUNS, seed: Number(process.env.AB_FAULTS_SEED ?? 20261201), endOnFailure: true },
    );
    // Not vacuous: most runs reached a switch (faults and signals did not all end them during the plan).
    expect(switched).toBeGreaterThanOrEqual(RUNS / 2);
    expect(unfinished).toBeLessThan(RUNS);
  }, 240_000);
});
