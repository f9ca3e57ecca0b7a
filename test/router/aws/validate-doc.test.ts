import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { CreateEndpointConfigCommand, SageMakerClient, UpdateEndpointCommand } from '@aws-sdk/client-sagemaker';
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile as writeFileText } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { parseAbArgv, runAbCommand } from '../../../router/src/cli/ab-command';
import { parseEmulateFlags, register as registerEmulate } from '../../../router/src/cli/emulate-command';
import { register as registerServe } from '../../../router/src/cli/serve-command';
import { loadRouterConfig } from '../../../router/src/config';
import type { BenchIo } from '../../../router/src/cli/bench-run';
import { parseRawBenchArgv, runSageMakerBench } from '../../../router/src/cli/sagemaker-bench';
import { configCopyInput } from '../../../router/src/aws/routing-ab';
import { shadowResourceName } from '../../../router/src/aws/shadow-ab';
import { startEmulator } from '../../../router/src/emulator/emulator-server';
import { startRouter } from '../../../router/src/server';
import { runAwsCli } from './helpers/aws-cli';
import { fakeCloudWatch } from './helpers/cloudwatch-fake';
import {
  describedConfig,
  ORIGINAL_CONFIG,
  SageMakerControlPlane,
  type ControlPlaneOptions,
} from './helpers/sagemaker-control-plane';
import { VirtualClock } from './helpers/virtual-clock';
import { startLocalEndpoint, TIME_SCALE, useLocalRuntimeEnv, type LocalEndpoint } from './helpers/local-endpoint';

/**
 * Every `prefix-router bench` and `prefix-router ab` command in docs/validate.md, run as written with small counts
 * appended (--max-requests, --warmup 0, the emulators' time scale, a temporary --out): bench against the local
 * router through AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME, ab against the stateful control-plane fake; and every
 * `aws sagemaker` finishing command, placeholders filled in, against the fake left where a killed run leaves it:
 * the commands must bring the endpoint back.
 */
const DOC = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'validate.md'), 'utf8');

/** Commands of the ```bash blocks, continuation lines joined, split into words (quotes honoured; $VARS kept). */
function docCommands(): string[][] {
  const blocks = [...DOC.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]);
  const lines = blocks
    .flatMap((b) => b.replace(/\\\n\s*/g, ' ').split('\n'))
    .map((l) => l.replace(/\s+#.*$/, '').trim());
  return lines.filter((l) => l.length > 0).map(words);
}

function words(line: string): string[] {
  const out: string[] = [];
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g;
  for (const m of line.matchAll(re)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

function commandsOf(sub: 'bench' | 'ab' | 'emulate' | 'serve'): string[][] {
  return docCommands()
    .map((w) => w.slice(w.findIndex((x) => x === 'prefix-router')))
    .filter((w) => w[0] === 'prefix-router' && w[1] === sub)
    .map((w) => w.slice(2).filter((x) => x !== '&'));
}

function captureIo(): BenchIo & { err: () => string } {
  let err = '';
  return { stdout: { write: () => true }, stderr: { write: (t: string) => (err += t), isTTY: false }, err: () => err };
}

const SMALL = ['--max-requests', '4', '--warmup', '0', '--time-scale', String(TIME_SCALE), '--quiet'];

describe('when the commands of docs/validate.md run with small counts', () => {
  let endpoint: LocalEndpoint;
  let restoreEnv: () => void;
  let dir: string;

  beforeAll(async () => {
    endpoint = await startLocalEndpoint(2, 1024, 'p5-llama-3.1-70b');
    restoreEnv = useLocalRuntimeEnv(endpoint.url);
    dir = await mkdtemp(join(tmpdir(), 'validate-doc-'));
  });
  afterAll(async () => {
    restoreEnv();
    await endpoint.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("GIVEN the rehearsal's emulate and serve commands THEN their flags are valid (the servers themselves are the test endpoint's)", () => {
    expect(commandsOf('emulate')).toHaveLength(1);
    expect(commandsOf('serve')).toHaveLength(1);
    for (const [name, register] of [
      ['emulate', registerEmulate],
      ['serve', registerServe],
    ] as const) {
      const program = new Command().exitOverride();
      register(program);
      const sub = program.commands.find((c) => c.name() === name)!;
      let parsed: Record<string, unknown> | undefined;
      sub.exitOverride().action((flags: Record<string, unknown>) => {
        parsed = flags;
      });
      program.parse([name, ...commandsOf(name)[0]], { from: 'user' });
      if (name === 'emulate')
        expect(parseEmulateFlags(parsed as Record<string, string>)).toMatchObject({ instances: 2, timeScale: 10 });
      else expect(loadRouterConfig({ flags: parsed!, env: {} }).backends).toHaveLength(2);
    }
  });

  it('GIVEN the doc THEN it has bench and ab commands to test', () => {
    expect(commandsOf('bench').length).toBeGreaterThanOrEqual(3);
    expect(commandsOf('ab').length).toBeGreaterThanOrEqual(2);
  });

  it.each(commandsOf('bench').map((args, i) => [i, args.join(' ')]))(
    'GIVEN bench command %i (%s) THEN it runs against the local runtime API',
    async (i) => {
      const args = commandsOf('bench')[i];
      const io = captureIo();
      const code = await runSageMakerBench(
        parseRawBenchArgv([...args, ...SMALL, '--out', join(dir, `bench-${i}`)]),
        io,
      );
      expect({ code, err: io.err().replace(/note: .*\n/g, '') }).toEqual({ code: 0, err: '' });
    },
  );

  it.each(commandsOf('ab').map((args, i) => [i, args.join(' ')]))(
    'GIVEN ab command %i (%s) THEN it runs against the control-plane fake',
    async (i) => {
      const args = commandsOf('ab')[i].map((w) => (w === 'NAME-FROM-THE-STACK-OUTPUT' ? 'my-llm' : w));
      if (args.includes('--shadow')) return shadowCommand(args, i);
      const fake = await new SageMakerControlPlane({
        variants: args.includes('--variants') ? 2 : 1,
        servedModel: 'meta-llama/Llama-3.1-70B-Instruct',
      }).start();
      const cloud = fakeCloudWatch();
      const sagemaker = new SageMakerClient({
        endpoint: fake.url,
        region: 'us-east-1',
        credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
        maxAttempts: 1,
      });
      const runtime = new SageMakerRuntimeClient({
        endpoint: endpoint.url,
        region: 'us-east-1',
        credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      });
      try {
        const io = captureIo();
        const code = await runAbCommand(parseAbArgv([...args, ...SMALL, '--yes', '--out', join(dir, `ab-${i}`)]), {
          io,
          sagemaker,
          cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
          runtime,
          clock: new VirtualClock(),
          env: {},
        });
        expect({ code, err: io.err().includes('prefix-router ab:') ? io.err() : '' }).toEqual({ code: 0, err: '' });
        expect(fake.restored()).toBe(true);
      } finally {
        runtime.destroy();
        sagemaker.destroy();
        cloud.restore();
        await fake.close();
      }
    },
  );

  /**
   * `ab --shadow` against an endpoint hosting a base component and the adapter the command names; the shadows'
   * data plane is a router in front of engines serving the shadows' copies of the adapter (run id doc1). It must
   * end with nothing created left and no mutating call naming the live endpoint's resources.
   */
  async function shadowCommand(args: string[], i: number): Promise<void> {
    const adapter = args[args.indexOf('--inference-component') + 1];
    const fake = await new SageMakerControlPlane({
      instanceCount: 2,
      inferenceComponents: [
        { name: 'llama-base', environment: { SM_VLLM_SERVED_MODEL_NAME: 'base' }, copies: 2 },
        { name: adapter, base: 'llama-base' },
      ],
    }).start();
    const engines = await Promise.all(
      [0, 1].map(() =>
        startEmulator({
          profile: 'p5-llama-3.1-70b',
          timeScale: TIME_SCALE,
          modelName: 'base',
          loraModules: [0, 1].map((n) => ({ name: shadowResourceName('doc1', n, adapter), path: `/adapters/${n}` })),
        }),
      ),
    );
    const router = await startRouter({
      backends: engines.map((e) => e.url),
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 0 },
      policy: { name: 'sagemaker-prefix-aware', prefixLength: 1024 },
    });
    const sagemaker = new SageMakerClient({
      endpoint: fake.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      maxAttempts: 1,
    });
    const runtime = new SageMakerRuntimeClient({
      endpoint: router.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    try {
      const io = captureIo();
      const code = await runAbCommand(parseAbArgv([...args, ...SMALL, '--out', join(dir, `ab-${i}`)]), {
        io,
        sagemaker,
        runtime,
        clock: new VirtualClock(),
        env: {},
        runId: 'doc1',
      });
      expect({ code, err: io.err().includes('prefix-router ab:') ? io.err() : '' }).toEqual({ code: 0, err: '' });
      expect(fake.mutations().length).toBeGreaterThan(0);
      expect(fake.mutationsOfLive()).toEqual([]);
      expect(fake.extraResources()).toEqual([]);
    } finally {
      runtime.destroy();
      sagemaker.destroy();
      await router.close();
      await Promise.all(engines.map((e) => e.close()));
      await fake.close();
    }
  }

  /** The doc's `aws sagemaker` blocks, one list of command lines per block, placeholders filled in. */
  const awsBlocks = (): string[][] =>
    [...DOC.matchAll(/```bash\n([\s\S]*?)```/g)]
      .map((m) =>
        m[1]
          .replace(/\\\n\s*/g, ' ')
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l.startsWith('aws sagemaker ')),
      )
      .filter((b) => b.length > 0);
  const fill = (line: string, reportDir: string): string =>
    line
      .replace(/ORIGINAL-CONFIG-NAME/g, ORIGINAL_CONFIG)
      .replace(/abRUNID/g, 'abdoc1')
      .replace(/REPORT-DIR/g, reportDir);

  async function killedRun(
    options: ControlPlaneOptions,
    outcome: 'on-a-copy' | 'failed-and-config-deleted',
  ): Promise<{ fake: SageMakerControlPlane; client: SageMakerClient }> {
    // Where a run killed mid-switch leaves the endpoint: its copy deployed (or deploying), the copy left behind.
    const fake = await new SageMakerControlPlane({
      ...options,
      outcomes: outcome === 'failed-and-config-deleted' ? ['failed'] : ['ok'],
    }).start();
    const client = new SageMakerClient({
      endpoint: fake.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      maxAttempts: 1,
    });
    const copy = `${ORIGINAL_CONFIG}-abdoc1-1`;
    await client.send(
      new CreateEndpointConfigCommand(configCopyInput(describedConfig(), copy, { RoutingStrategy: 'RANDOM' })),
    );
    await client.send(
      new UpdateEndpointCommand({ EndpointName: 'my-llm', EndpointConfigName: copy, RetainAllVariantProperties: true }),
    );
    return { fake, client };
  }

  it('GIVEN the doc THEN it has the two finishing blocks (by hand after a kill; recreate and a Failed endpoint)', () => {
    expect(awsBlocks().map((b) => b.length)).toEqual([6, 5]);
  });

  it('GIVEN a run killed mid-switch WHEN the first block runs as written THEN the endpoint is back on its original configuration and the copy is gone', async () => {
    const { fake, client } = await killedRun({}, 'on-a-copy');
    try {
      for (const line of awsBlocks()[0]) await runAwsCli(fill(line, dir), client);
      expect(fake.restored()).toBe(true);
      expect(fake.violations).toEqual([]);
    } finally {
      client.destroy();
      await fake.close();
    }
  });

  it("GIVEN an endpoint left Failed with its original configuration deleted WHEN the second block and then the first block's checks and deletes run THEN it is back", async () => {
    const { fake, client } = await killedRun({}, 'failed-and-config-deleted');
    try {
      await writeFileText(
        join(dir, 'original-endpoint-config.json'),
        JSON.stringify(configCopyInput(describedConfig(), ORIGINAL_CONFIG)),
      );
      // The run had gone as far as Failed; someone deleted the original configuration (the API allows it).
      for (let i = 0; i < 4 && fake.state.status !== 'Failed'; i++)
        await runAwsCli('aws sagemaker describe-endpoint --endpoint-name my-llm', client);
      expect(fake.state.status).toBe('Failed');
      fake.configs.delete(ORIGINAL_CONFIG);
      for (const line of awsBlocks()[1]) await runAwsCli(fill(line, dir), client);
      for (const line of awsBlocks()[0].slice(3)) await runAwsCli(fill(line, dir), client);
      expect(fake.restored()).toBe(true);
    } finally {
      client.destroy();
      await fake.close();
    }
  });
});
