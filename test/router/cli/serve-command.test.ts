import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import { startFakeBackend, type FakeBackend } from '../../../router/bench/fake-openai-backend';
import { compiledCli } from '../../compiled-dist';

const ROOT = join(__dirname, '..', '..', '..');

/** Runs the compiled CLI (dist/bin/prefix-router.js, built when stale: test/compiled-dist.ts). */
function cli(args: string[], env: Record<string, string> = {}): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [compiledCli(), ...args], { cwd: ROOT, env: { ...process.env, ...env } });
}

function exitOf(
  child: ChildProcessWithoutNullStreams,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** Waits for the JSON log line whose msg is `msg`. */
function logLine(
  child: ChildProcessWithoutNullStreams,
  msg: string,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`no "${msg}" log line within ${timeoutMs} ms`)), timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      for (const line of buffered.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const parsed = JSON.parse(line) as Record<string, unknown>;
          if (parsed.msg === msg) {
            clearTimeout(timer);
            resolve(parsed);
          }
        } catch {
          // a partial line; wait for the rest
        }
      }
    });
  });
}

describe('when prefix-router serve runs as a process', () => {
  let backend: FakeBackend;
  beforeAll(async () => {
    backend = await startFakeBackend({ name: 'cli' });
  });
  afterAll(() => backend.close());

  it('GIVEN valid flags THEN it serves requests and exits 0 after draining on SIGTERM', async () => {
    const child = cli(
      [
        'serve',
        '--backend',
        backend.url,
        '--port',
        '0',
        '--health-interval-ms',
        '100',
        '--routing-headers',
        'instance',
      ],
      { PREFIX_ROUTER_PREFIX_LENGTH: '2048' },
    );
    const exited = exitOf(child);
    const listening = await logLine(child, 'router listening');
    expect(listening).toMatchObject({
      policy: 'sagemaker-prefix-aware',
      backends: [{ id: backend.url, health: 'healthy' }],
    });
    const res = await request(`${listening.url as string}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-prefix-router-instance']).toBe('backend-1');
    expect(res.headers['x-prefix-router-decision']).toBeUndefined();
    await res.body.dump();
    child.kill('SIGTERM');
    const { code, stdout } = await exited;
    expect(code).toBe(0);
    expect(stdout).toContain('"msg":"router closed"');
  });

  it('GIVEN an out-of-range flag and a bad env var THEN it exits non-zero naming both', async () => {
    const { code, stderr } = await exitOf(
      cli(['serve', '--backend', backend.url, '--prefix-length', '512'], { PREFIX_ROUTER_PORT: '99999' }),
    );
    expect(code).not.toBe(0);
    expect(stderr).toContain('--prefix-length must be an integer between 1024 and 65536 (got 512)');
    expect(stderr).toContain('PREFIX_ROUTER_PORT must be an integer between 0 and 65535 (got 99999)');
  });
});
