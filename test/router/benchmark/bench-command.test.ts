import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../router/src/common/config-error';
import { liveOptionsOf, parseBenchArgv } from '../../../router/src/cli/bench-flags';
import { runBenchWithOutcome, type BenchIo } from '../../../router/src/cli/bench-run';
import { startEmulator, type RunningEmulator } from '../../../router/src/emulator';
import { parseReportJson } from '../../../router/src/report';
import { compiledCli } from '../../compiled-dist';
import { startScriptedServer, type ScriptedServer } from './helpers/scripted-server';

const ROOT = join(__dirname, '..', '..', '..');
const URL_FLAGS = ['--url', 'http://127.0.0.1:8080'];
const WORKLOAD = 'shared-system?groups=2&promptsPerGroup=3&systemTokens=40&questionTokens=8&outputTokens=4';

function argv(...extra: string[]): string[] {
  return [...URL_FLAGS, '--workload', WORKLOAD, ...extra];
}

function problemOf(args: string[]): string {
  try {
    parseBenchArgv(args);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).message;
  }
  throw new Error(`no error for ${args.join(' ')}`);
}

describe('when bench flags are parsed', () => {
  it('GIVEN only --url and --workload THEN the defaults apply', () => {
    const s = parseBenchArgv(argv());
    expect(s).toMatchObject({
      label: 'live',
      strategy: { name: 'live' },
      warmupMs: 0,
      timeScale: 1,
      requestTimeoutMs: 600_000,
      instanceHeader: 'x-prefix-router-instance',
      ignoreEos: true,
      quiet: false,
    });
    expect(s.workload.load).toEqual({ mode: 'open-poisson', ratePerSecond: 8 });
  });

  it.each([
    // flag, value, message (undefined = accepted)
    ['--concurrency', '0', '--concurrency must be an integer between 1 and 100000 (got "0")'],
    ['--concurrency', '1', undefined],
    ['--concurrency', '100000', undefined],
    ['--concurrency', '100001', '--concurrency must be an integer between 1 and 100000 (got "100001")'],
    ['--concurrency', '1.5', '--concurrency must be an integer between 1 and 100000 (got "1.5")'],
    ['--rate', '0', '--rate must be a number greater than 0 and at most 100000 (got "0")'],
    ['--rate', '0.001', undefined],
    ['--rate', '100000', undefined],
    ['--rate', '100001', '--rate must be a number greater than 0 and at most 100000 (got "100001")'],
    ['--rate', 'fast', '--rate must be a number greater than 0 and at most 100000 (got "fast")'],
    ['--duration', '0', '--duration must be a number greater than 0 and at most 604800 (got "0")'],
    ['--duration', '604800', undefined],
    ['--duration', '604801', '--duration must be a number greater than 0 and at most 604800 (got "604801")'],
    ['--max-requests', '0', '--max-requests must be an integer between 1 and 100000000 (got "0")'],
    ['--max-requests', '1', undefined],
    ['--max-requests', '100000000', undefined],
    ['--max-requests', '100000001', '--max-requests must be an integer between 1 and 100000000 (got "100000001")'],
    ['--warmup', '-1', '--warmup must be a number between 0 and 604800 (got "-1")'],
    ['--warmup', '0', undefined],
    ['--warmup', '604800', undefined],
    ['--warmup', '604801', '--warmup must be a number between 0 and 604800 (got "604801")'],
    ['--time-scale', '0', '--time-scale must be a number greater than 0 and at most 1000000 (got "0")'],
    ['--time-scale', '1000000', undefined],
    ['--time-scale', '1000001', '--time-scale must be a number greater than 0 and at most 1000000 (got "1000001")'],
    ['--timeout', '0', '--timeout must be a number greater than 0 and at most 86400 (got "0")'],
    ['--timeout', '86400', undefined],
    ['--timeout', '86401', '--timeout must be a number greater than 0 and at most 86400 (got "86401")'],
    ['--drain', '-1', '--drain must be a number between 0 and 86400 (got "-1")'],
    ['--drain', '0', undefined],
    ['--drain', '86400', undefined],
    ['--drain', '86401', '--drain must be a number between 0 and 86400 (got "86401")'],
    ['--fleet-kv-tokens', '15', '--fleet-kv-tokens must be an integer between 16 and 1000000000000 (got "15")'],
    ['--fleet-kv-tokens', '16', undefined],
    ['--instance-header', 'x y', '--instance-header must be an HTTP header name (got "x y")'],
    ['--header', 'no-colon', '--header must be "name: value" with an HTTP header name (got "no-colon")'],
    ['--backend-metrics', 'ftp://h', "--backend-metrics must be an http:// or https:// URL (got 'ftp://h')"],
    ['--label', ' ', '--label must not be empty'],
  ])('GIVEN %s %s THEN %s', (flag, value, message) => {
    if (message === undefined) expect(() => parseBenchArgv(argv(flag, value))).not.toThrow();
    else expect(problemOf(argv(flag, value))).toBe(message);
  });

  it.each([
    [['--workload', WORKLOAD], '--url is required: the base URL of the server, e.g. http://127.0.0.1:8080'],
    [['--url', 'ftp://h', '--workload', WORKLOAD], "--url must be an http:// or https:// URL (got 'ftp://h')"],
    [URL_FLAGS, "--workload is required: a workload spec such as 'long-context' or 'short-chat?count=100'"],
    [
      [...URL_FLAGS, '--workload', 'long-context?groups=0'],
      '--workload: invalid workload long-context: groups must be an integer between 1 and 1000000',
    ],
    [argv('--rate', '2', '--concurrency', '2'), 'give --concurrency (closed loop) or --rate (open loop), not both'],
    [
      [...URL_FLAGS, '--workload', `${WORKLOAD}&rate=3`, '--rate', '2'],
      '--rate conflicts with rate= in --workload; give one of them',
    ],
    [
      [...URL_FLAGS, '--workload', `${WORKLOAD}&concurrency=3`, '--rate', '2'],
      '--rate conflicts with concurrency= in --workload (a closed loop); give one of them',
    ],
    [
      [...URL_FLAGS, '--workload', `${WORKLOAD}&concurrency=3`, '--concurrency', '2'],
      '--concurrency conflicts with concurrency= in --workload; give one of them',
    ],
    [[...URL_FLAGS, '--workload', 'trace:x.jsonl', '--rate', '2'], '--rate does not apply to trace workloads'],
    [argv('--warmup', '10', '--duration', '10'), '--warmup (10 s) must be shorter than --duration (10 s)'],
    [
      argv('--strategy', 'sagemaker-prefix-aware?prefixLength=1'),
      '--strategy sagemaker-prefix-aware option prefixLength',
    ],
    [argv('--append', 'dir/bad name.json'), '--append must name a .json file'],
    [argv('--label', 'mine', '--baseline', 'random'), "--baseline 'random' is not one of the runs (mine)"],
    [argv('--bogus'), "unknown option '--bogus'"],
  ])('GIVEN %p THEN the message names the flag: %s', (args, message) => {
    expect(problemOf(args)).toContain(message);
  });

  it('GIVEN several bad flags THEN all are reported at once', () => {
    expect(problemOf(argv('--time-scale', '0', '--timeout', '0')).split('\n')).toHaveLength(3);
  });

  it('GIVEN --rate or --concurrency THEN the workload spec carries it, so the report reproduces the run', () => {
    expect(parseBenchArgv(argv('--rate', '2.5')).workload.load).toEqual({ mode: 'open-poisson', ratePerSecond: 2.5 });
    const closed = parseBenchArgv(argv('--concurrency', '4'));
    expect(closed.workload.load).toEqual({ mode: 'closed', concurrency: 4 });
    expect(closed.workload.spec).toContain('concurrency=4');
  });

  it('GIVEN a policy spec as --strategy THEN its options are recorded and label the run', () => {
    const s = parseBenchArgv(argv('--strategy', 'sagemaker-prefix-aware?prefixLength=2048'));
    expect(s.strategy).toEqual({ name: 'sagemaker-prefix-aware', options: { prefixLength: 2048 } });
    expect(s.label).toBe('sagemaker-prefix-aware (prefixLength=2048)');
  });

  it('GIVEN seconds, headers and KV tokens THEN the live options are in milliseconds, lower-case headers and blocks', () => {
    const s = parseBenchArgv(
      argv(
        '--duration',
        '60',
        '--warmup',
        '5',
        '--timeout',
        '30',
        '--drain',
        '10',
        '--header',
        'Authorization: Bearer t',
        '--fleet-kv-tokens',
        '1000',
        '--no-ignore-eos',
        '--backend-metrics',
        'http://a:1',
        'http://b:2',
      ),
    );
    expect(liveOptionsOf(s)).toMatchObject({
      durationMs: 60_000,
      warmupMs: 5000,
      requestTimeoutMs: 30_000,
      drainTimeoutMs: 10_000,
      headers: { authorization: 'Bearer t' },
      ignoreEos: false,
      ceilings: { fleetCapacityBlocks: 62, blockTokens: 16 },
      backendMetricsUrls: ['http://a:1/metrics', 'http://b:2/metrics'],
    });
  });
});

function captureIo(): BenchIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t), isTTY: false },
    out: () => out,
    err: () => err,
  };
}

describe('when bench runs in-process against an emulator', () => {
  let emulator: RunningEmulator;
  let dir: string;
  beforeAll(async () => {
    emulator = await startEmulator({ profile: 'tiny', timeScale: 20 });
    dir = await mkdtemp(join(tmpdir(), 'bench-'));
  });
  afterAll(async () => {
    await emulator.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('GIVEN two runs, the second with --append THEN one report holds both, compared against the random one, with a records file each', async () => {
    const common = [
      '--url',
      emulator.url,
      '--workload',
      `${WORKLOAD}&concurrency=2`,
      '--time-scale',
      '20',
      '--backend-metrics',
      emulator.url,
    ];
    const io1 = captureIo();
    const first = await runBenchWithOutcome(parseBenchArgv([...common, '--strategy', 'random', '--out', dir]), io1);
    expect(first.exitCode).toBe(0);
    expect(io1.out()).toMatch(/^random  +\S/m);
    expect(io1.out()).not.toContain('| random |'); // the full tables stay in report.md
    for (const line of io1.out().split('\n'))
      if (!line.startsWith('report:') && !line.startsWith(' ')) expect(line.length).toBeLessThanOrEqual(120);
    expect(io1.out()).toContain(`report: ${join(dir, 'report.md')}`);
    const io2 = captureIo();
    const second = await runBenchWithOutcome(
      parseBenchArgv([...common, '--label', 'again', '--append', join(dir, 'report.json')]),
      io2,
    );
    expect(second.exitCode).toBe(0);
    const report = parseReportJson(await readFile(join(dir, 'report.json'), 'utf8'));
    expect(report.strategies.map((s) => [s.label, s.requests, s.errors])).toEqual([
      ['random', 6, 0],
      ['again', 6, 0],
    ]);
    expect(report.baseline).toBe('random');
    expect(report.comparisons.map((c) => c.label)).toEqual(['again']);
    expect(report.strategies.every((s) => s.cacheHitRate.prometheus !== null)).toBe(true);
    // No --fleet-kv-tokens: the fleet's KV size came from the backend's vllm:cache_config_info.
    expect(report.ceilings?.fleetCapacityBlocks).toBe(emulator.profile.kvCapacityBlocks);
    expect(report.strategies.every((s) => s.cacheHitRate.ofFleetCeiling !== null)).toBe(true);
    expect(io2.out()).toMatch(/^again {2}/m);
    expect(io2.out()).toContain('Δ: change against random');
    expect(io2.out()).toMatch(/against random|beyond noise/);
    for (const name of ['report.md', 'report.html', 'report.records.random.jsonl', 'report.records.again.jsonl'])
      expect(existsSync(join(dir, name))).toBe(true);
  });

  it('GIVEN --append with a label the report already has THEN it refuses before sending anything', async () => {
    const server: ScriptedServer = await startScriptedServer(() => undefined);
    try {
      const args = [
        '--url',
        server.url,
        '--workload',
        `${WORKLOAD}&concurrency=2`,
        '--time-scale',
        '20',
        '--strategy',
        'random',
        '--append',
        join(dir, 'report.json'),
      ];
      await expect(runBenchWithOutcome(parseBenchArgv(args), captureIo())).rejects.toThrow(
        "already has a run labelled 'random'",
      );
      expect(server.calls).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  it('GIVEN --append with a --baseline naming no run of the report or this one THEN it refuses before sending anything', async () => {
    const server: ScriptedServer = await startScriptedServer(() => undefined);
    try {
      const args = [
        '--url',
        server.url,
        '--workload',
        `${WORKLOAD}&concurrency=2`,
        '--time-scale',
        '20',
        '--label',
        'third',
        '--baseline',
        'fourth',
        '--append',
        join(dir, 'report.json'),
      ];
      await expect(runBenchWithOutcome(parseBenchArgv(args), captureIo())).rejects.toThrow(
        "--baseline 'fourth' is not one of the runs (random, again, third)",
      );
      expect(server.calls).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  it('GIVEN a server failing every request THEN the report is still written and the exit code is 2 with the first error', async () => {
    const server = await startScriptedServer((_call, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"busy","type":"server_error","code":"overloaded"}}');
    });
    try {
      const io = captureIo();
      const out = join(dir, 'failing');
      const outcome = await runBenchWithOutcome(
        parseBenchArgv(['--url', server.url, '--workload', WORKLOAD, '--max-requests', '3', '--out', out, '--quiet']),
        io,
      );
      expect(outcome.exitCode).toBe(2);
      expect(io.err()).toContain('every request failed (first: http_503:overloaded: busy)');
      expect(io.out()).not.toContain('TTFT P50');
      expect(parseReportJson(await readFile(join(out, 'report.json'), 'utf8')).strategies[0].errorsByCode).toEqual({
        'http_503:overloaded': 3,
      });
    } finally {
      await server.close();
    }
  });
});

describe('when prefix-router bench runs as a process', () => {
  let emulator: RunningEmulator;
  let dir: string;
  beforeAll(async () => {
    emulator = await startEmulator({ profile: 'tiny', timeScale: 20 });
    dir = await mkdtemp(join(tmpdir(), 'bench-cli-'));
  });
  afterAll(async () => {
    await emulator.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('GIVEN a loopback emulator THEN it writes the report, prints its paths and exits 0', async () => {
    const child = spawn(
      process.execPath,
      [
        compiledCli(),
        'bench',
        '--url',
        emulator.url,
        '--workload',
        WORKLOAD,
        '--rate',
        '50',
        '--max-requests',
        '4',
        '--time-scale',
        '20',
        '--out',
        dir,
      ],
      { cwd: ROOT },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(`report: ${join(dir, 'report.md')}`);
    expect(stderr).toContain('live: sent 4/4');
    const report = parseReportJson(await readFile(join(dir, 'report.json'), 'utf8'));
    expect(report.strategies[0]).toMatchObject({ label: 'live', requests: 4, errors: 0 });
    expect(report.workload.spec).toContain('rate=50');
  });
});
