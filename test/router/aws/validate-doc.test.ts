import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { parseAbArgv, runAbCommand } from '../../../router/src/cli/ab-command';
import { parseEmulateFlags, register as registerEmulate } from '../../../router/src/cli/emulate-command';
import { register as registerServe } from '../../../router/src/cli/serve-command';
import { loadRouterConfig } from '../../../router/src/config';
import type { BenchIo } from '../../../router/src/cli/bench-command';
import { parseRawBenchArgv, runSageMakerBench } from '../../../router/src/cli/sagemaker-bench';
import { FakeControlPlane, VirtualClock } from './helpers/fake-control-plane';
import { startLocalEndpoint, TIME_SCALE, useLocalRuntimeEnv, type LocalEndpoint } from './helpers/local-endpoint';

/**
 * Every `prefix-router bench` and `prefix-router ab` command in docs/validate.md, run as written with small counts
 * appended (--max-requests, --warmup 0, the emulators' time scale, a temporary --out): bench against the local
 * router through AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME, ab against the scripted control plane.
 */
const DOC = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'validate.md'), 'utf8');

/** Commands of the ```bash blocks, continuation lines joined, split into words (quotes honoured; $VARS kept). */
function docCommands(): string[][] {
  const blocks = [...DOC.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]);
  const lines = blocks.flatMap((b) => b.replace(/\\\n\s*/g, ' ').split('\n')).map((l) => l.replace(/\s+#.*$/, '').trim());
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

  it('GIVEN the rehearsal\'s emulate and serve commands THEN their flags are valid (the servers themselves are the test endpoint\'s)', () => {
    expect(commandsOf('emulate')).toHaveLength(1);
    expect(commandsOf('serve')).toHaveLength(1);
    for (const [name, register] of [['emulate', registerEmulate], ['serve', registerServe]] as const) {
      const program = new Command().exitOverride();
      register(program);
      const sub = program.commands.find((c) => c.name() === name)!;
      let parsed: Record<string, unknown> | undefined;
      sub.exitOverride().action((flags: Record<string, unknown>) => {
        parsed = flags;
      });
      program.parse([name, ...commandsOf(name)[0]], { from: 'user' });
      if (name === 'emulate') expect(parseEmulateFlags(parsed as Record<string, string>)).toMatchObject({ instances: 2, timeScale: 10 });
      else expect(loadRouterConfig({ flags: parsed!, env: {} }).backends).toHaveLength(2);
    }
  });

  it('GIVEN the doc THEN it has bench and ab commands to test', () => {
    expect(commandsOf('bench').length).toBeGreaterThanOrEqual(3);
    expect(commandsOf('ab').length).toBeGreaterThanOrEqual(2);
  });

  it.each(commandsOf('bench').map((args, i) => [i, args.join(' ')]))('GIVEN bench command %i (%s) THEN it runs against the local runtime API', async (i) => {
    const args = commandsOf('bench')[i as number];
    const io = captureIo();
    const code = await runSageMakerBench(parseRawBenchArgv([...args, ...SMALL, '--out', join(dir, `bench-${i}`)]), io);
    expect({ code, err: io.err().replace(/note: .*\n/g, '') }).toEqual({ code: 0, err: '' });
  });

  it.each(commandsOf('ab').map((args, i) => [i, args.join(' ')]))('GIVEN ab command %i (%s) THEN it runs against the scripted control plane', async (i) => {
    const args = commandsOf('ab')[i as number].map((w) => (w === 'NAME-FROM-THE-STACK-OUTPUT' ? 'my-llm' : w));
    const fake = new FakeControlPlane({ variants: args.includes('--variants') ? 2 : 1, servedModel: 'meta-llama/Llama-3.1-70B-Instruct' });
    const runtime = new SageMakerRuntimeClient({ endpoint: endpoint.url, region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    try {
      const io = captureIo();
      const code = await runAbCommand(parseAbArgv([...args, ...SMALL, '--yes', '--out', join(dir, `ab-${i}`)]), {
        io,
        sagemaker: new SageMakerClient({ region: 'us-east-1' }),
        cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
        runtime,
        clock: new VirtualClock(),
        env: {},
      });
      expect({ code, err: io.err().includes('prefix-router ab:') ? io.err() : '' }).toEqual({ code: 0, err: '' });
    } finally {
      runtime.destroy();
      fake.restore();
    }
  });
});
