import pino from 'pino';
import { EngineProcess, type EngineSpec } from '../../../router/src/container';
import { eventually, isAlive } from './container-process';

/** One supervised engine with real child processes (small `node -e` / `sh -c` programs standing in for vLLM). */
function engine(argv: string[], stopTimeoutMs = 2_000, outputCloseWaitMs?: number) {
  const out: string[] = [];
  const err: string[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const log = pino(
    { level: 'info' },
    { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const spec: EngineSpec = {
    index: 2,
    name: 'engine-2',
    port: 1,
    gpuIds: ['4', '5'],
    tensorParallelSize: 2,
    argv,
    env: { CUDA_VISIBLE_DEVICES: '4,5' },
    url: 'http://127.0.0.1:1',
  };
  const process_ = new EngineProcess(spec, {
    baseEnv: { PATH: process.env.PATH, FROM_CONTAINER: 'yes' },
    restartBackoffMs: 100,
    restartBackoffMaxMs: 400,
    stopTimeoutMs,
    log,
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    outputCloseWaitMs,
  });
  return { process: process_, out, err, logs };
}

describe('when an engine process is supervised', () => {
  const started: EngineProcess[] = [];
  afterEach(async () => {
    for (const e of started.splice(0)) {
      e.killNow();
      for (const pid of e.pids) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  });

  it('GIVEN an engine printing on both streams THEN lines are prefixed, and it sees its GPUs and the container environment', async () => {
    const e = engine([
      process.execPath,
      '-e',
      "console.log('gpus ' + process.env.CUDA_VISIBLE_DEVICES + ' ' + process.env.FROM_CONTAINER); console.error('warn'); setTimeout(() => {}, 60000)",
    ]);
    started.push(e.process);
    e.process.start();
    await eventually(() => e.out.join('').includes('\n') && e.err.join('').includes('\n'), 'output');
    expect(e.out.join('')).toBe('[engine-2] gpus 4,5 yes\n');
    expect(e.err.join('')).toBe('[engine-2] warn\n');
    await e.process.stop();
    expect(e.logs.find((l) => l.msg === 'engine stopped')).toMatchObject({ engine: 'engine-2', signal: 'SIGTERM' });
  });

  it('GIVEN an engine that exits THEN its exit code is logged and it is restarted with growing backoff', async () => {
    const e = engine([process.execPath, '-e', 'process.exit(3)']);
    started.push(e.process);
    e.process.start();
    await eventually(() => e.process.pids.length >= 3, 'two restarts', 10_000, 20);
    await e.process.stop();
    const exits = e.logs.filter((l) => l.msg === 'engine exited; restarting after backoff');
    expect(exits.slice(0, 2).map((l) => [l.code, l.restartInMs])).toEqual([
      [3, 100],
      [3, 200],
    ]);
    const count = e.process.pids.length;
    await new Promise((r) => setTimeout(r, 500));
    expect(e.process.pids.length).toBe(count); // no restart after stop()
  });

  it('GIVEN a program that does not exist THEN the failure is logged and retried, never thrown', async () => {
    const e = engine(['/nonexistent/vllm-server']);
    started.push(e.process);
    e.process.start();
    await eventually(
      () => e.logs.filter((l) => l.msg === 'engine exited; restarting after backoff').length >= 2,
      'two failed starts',
      10_000,
      20,
    );
    expect(e.logs.find((l) => l.msg === 'engine exited; restarting after backoff')?.error).toContain('ENOENT');
    await e.process.stop();
  });

  it('GIVEN an engine that dies leaving a worker holding its output THEN the worker is killed and the engine restarts', async () => {
    // `sh` starts a worker (sleep) in its process group, prints its pid, then dies abruptly.
    const e = engine(['sh', '-c', 'sleep 30 & echo worker $!; kill -9 $$']);
    started.push(e.process);
    e.process.start();
    await eventually(() => e.process.pids.length >= 2, 'restart after the engine died', 10_000, 20);
    const worker = Number(/worker (\d+)/.exec(e.out.join(''))![1]);
    await eventually(() => !isAlive(worker), 'worker killed', 5_000, 20);
    await e.process.stop();
  });

  it('GIVEN an engine that ignores SIGTERM THEN stop() SIGKILLs it after the timeout', async () => {
    const e = engine(
      [process.execPath, '-e', "process.on('SIGTERM', () => {}); console.log('up'); setInterval(() => {}, 1000)"],
      300,
    );
    started.push(e.process);
    e.process.start();
    await eventually(() => e.out.join('').includes('up'), 'engine up');
    const pid = e.process.pid!;
    const t0 = Date.now();
    await e.process.stop();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(isAlive(pid)).toBe(false);
    expect(e.logs.some((l) => l.msg === 'engine did not stop after SIGTERM; sending SIGKILL')).toBe(true);
  });

  it('GIVEN an engine whose descendant outside its group holds its output WHEN it exits THEN the run ends within the bounded wait and it restarts', async () => {
    // setsid puts the holder in its own session and group, so killing the engine's group does not close the pipes.
    const e = engine(['sh', '-c', "setsid sh -c 'echo holder $$; exec sleep 30' & sleep 0.2; exit 4"], 2_000, 300);
    started.push(e.process);
    const t0 = Date.now();
    e.process.start();
    await eventually(() => e.process.pids.length >= 2, 'restart although the output stayed open', 5_000, 20);
    expect(Date.now() - t0).toBeLessThan(3_000); // not the holder's 30 s
    const holders = [...e.out.join('').matchAll(/holder (\d+)/g)].map((m) => Number(m[1]));
    try {
      expect(e.logs.find((l) => l.msg === 'engine exited; restarting after backoff')).toMatchObject({ code: 4 });
      expect(e.logs.some((l) => String(l.msg).startsWith('engine exited but its output is still open'))).toBe(true);
      // WHEN it is stopped while a holder keeps the new run's output open THEN stop() does not wait for the holder
      const t1 = Date.now();
      await e.process.stop();
      expect(Date.now() - t1).toBeLessThan(2_000);
    } finally {
      for (const pid of [...e.out.join('').matchAll(/holder (\d+)/g)].map((m) => Number(m[1])).concat(holders)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  });

  it('GIVEN an engine that exits THEN its last output lines are reported with the exit', async () => {
    const exits: Array<{ code: number | null; lastLines: readonly string[] }> = [];
    const e = engine(['sh', '-c', 'echo one; echo two >&2; exit 5']);
    const withHook = new EngineProcess(e.process.spec, {
      baseEnv: { PATH: process.env.PATH },
      restartBackoffMs: 5_000,
      restartBackoffMaxMs: 5_000,
      stopTimeoutMs: 1_000,
      log: pino({ level: 'silent' }),
      stdout: () => undefined,
      stderr: () => undefined,
      onExit: (exit) => exits.push(exit),
    });
    started.push(withHook);
    withHook.start();
    await eventually(() => exits.length === 1, 'the exit reported', 5_000, 20);
    expect(exits[0]).toMatchObject({ code: 5 });
    expect([...exits[0].lastLines].sort()).toEqual(['one', 'two']);
    await withHook.stop();
  });
});
