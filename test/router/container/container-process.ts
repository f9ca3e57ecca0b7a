import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { compiledCli } from '../../compiled-dist';

/**
 * The real `prefix-router container` as a child process (the compiled CLI, dist/bin/prefix-router.js, built when
 * stale: test/compiled-dist.ts), with emulated engines. Collects its output, finds log lines, and kills the supervisor and every
 * engine process group it started, whatever state the test left them in.
 */
export const ROOT = join(__dirname, '..', '..', '..');

/**
 * `prefix-router emulate` as the engine command: one tiny emulated vLLM on {port}. With `startGate`, each engine
 * process waits until that file exists before it starts, so a test decides when the engine can be ready.
 */
export function emulatorEngineCommand(extra = '', startGate?: string): string {
  const emulate =
    `'${process.execPath}' '${compiledCli()}' emulate --instances 1 --port {port} --profile tiny --log-level warn ${extra}`.trim();
  if (startGate === undefined) return emulate;
  return `bash -c 'until [ -e "$0" ]; do sleep 0.05; done; exec "$@"' '${startGate}' ${emulate}`;
}

export type LogLine = Record<string, unknown>;

export class ContainerProcess {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: Array<() => void> = [];

  constructor(env: Record<string, string>, args: string[] = ['container']) {
    this.child = spawn(process.execPath, [compiledCli(), ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        PREFIX_ROUTER_HOST: '127.0.0.1',
        PREFIX_ROUTER_PORT: '0',
        PREFIX_ROUTER_ENGINE_BASE_PORT: '0',
        ...env,
      },
    });
    const wake = (): void => {
      for (const w of this.waiters.splice(0)) w();
    };
    this.child.stdout.on('data', (d: Buffer) => {
      this.stdout += d.toString();
      wake();
    });
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString();
      wake();
    });
    this.exited = new Promise((resolve) => this.child.on('close', (code, signal) => resolve({ code, signal })));
  }

  /** Every complete stdout line. */
  lines(): string[] {
    const all = this.stdout.split('\n');
    all.pop();
    return all;
  }

  /** Every JSON log line (engine lines carry a `[engine-i] ` prefix and are not JSON at the start). */
  logs(): LogLine[] {
    const out: LogLine[] = [];
    for (const line of this.lines()) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as LogLine);
      } catch {
        // not JSON
      }
    }
    return out;
  }

  /** Resolves with the `n`-th (1-based) log line matching, waiting for it. */
  async waitForLog(match: (line: LogLine) => boolean, what: string, timeoutMs = 45_000, n = 1): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.logs().filter(match);
      if (found.length >= n) return found[n - 1];
      if (this.child.exitCode !== null)
        throw new Error(`container exited before "${what}"; stderr: ${this.stderr.slice(-2000)}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `no "${what}" within ${timeoutMs} ms; last output: ${this.stdout.slice(-3000)} ${this.stderr.slice(-1000)}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async routerUrl(): Promise<string> {
    const line = await this.waitForLog((l) => l.msg === 'router listening', 'router listening');
    return line.url as string;
  }

  /** Pids of every engine run so far, by engine name. */
  enginePids(): Map<string, number[]> {
    const pids = new Map<string, number[]>();
    for (const l of this.logs()) {
      if (l.msg !== 'engine started' || typeof l.pid !== 'number') continue;
      const list = pids.get(l.engine as string) ?? [];
      list.push(l.pid);
      pids.set(l.engine as string, list);
    }
    return pids;
  }

  /** SIGKILL the supervisor and every engine process group it reported; safe to call twice. */
  killAll(): void {
    for (const pids of this.enginePids().values()) {
      for (const pid of pids) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function eventually(
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 30_000,
  stepMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
