import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { redactArgv } from './engine-command';
import type { EngineSpec } from './engine-plan';
import { LinePrefixer } from './line-prefixer';
import { RestartBackoff } from './restart-backoff';

export interface EngineProcessOptions {
  /** The container's environment; the spec's variables are added on top. */
  readonly baseEnv: NodeJS.ProcessEnv;
  readonly restartBackoffMs: number;
  readonly restartBackoffMaxMs: number;
  /** Time between SIGTERM and SIGKILL in stop(). */
  readonly stopTimeoutMs: number;
  readonly log: Logger;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/**
 * One supervised engine: a child process in its own process group (so a tensor-parallel engine's worker
 * processes are signalled with it and none is left behind), its output forwarded line by line with an
 * `[engine-i] ` prefix, restarted with backoff whenever it exits until stop() is called.
 */
export class EngineProcess {
  private child: ChildProcess | undefined;
  private startedAt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private exited: Promise<void> = Promise.resolve();
  private readonly backoff: RestartBackoff;
  /** Process ids of every run, for tests and the exit-time sweep. */
  readonly pids: number[] = [];
  restarts = 0;

  constructor(
    readonly spec: EngineSpec,
    private readonly options: EngineProcessOptions,
  ) {
    this.backoff = new RestartBackoff(options.restartBackoffMs, options.restartBackoffMaxMs);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  start(): void {
    if (this.stopping || this.child !== undefined) return;
    const [program, ...args] = this.spec.argv;
    const child = spawn(program, args, {
      env: { ...this.options.baseEnv, ...this.spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    this.startedAt = Date.now();
    const prefix = `[${this.spec.name}] `;
    const out = new LinePrefixer(prefix, this.options.stdout);
    const err = new LinePrefixer(prefix, this.options.stderr);
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    if (child.pid !== undefined) this.pids.push(child.pid);
    let resolveExited!: () => void;
    this.exited = new Promise((resolve) => (resolveExited = resolve));
    let done = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null, error?: Error): void => {
      if (done) return;
      done = true;
      out.end();
      err.end();
      this.child = undefined;
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL'); // workers the engine left behind
      const ranMs = Date.now() - this.startedAt;
      if (this.stopping) {
        this.options.log.info({ engine: this.spec.name, pid: child.pid, code, signal }, 'engine stopped');
      } else {
        const restartInMs = this.backoff.nextDelay(ranMs);
        this.options.log.error(
          { engine: this.spec.name, pid: child.pid, code, signal, error: error?.message, ranMs, restartInMs },
          'engine exited; restarting after backoff',
        );
        this.restartTimer = setTimeout(() => {
          this.restartTimer = undefined;
          this.restarts++;
          this.start();
        }, restartInMs);
      }
      resolveExited();
    };
    child.once('error', (error) => {
      // Spawn failures (ENOENT, EACCES) come without an 'exit' event.
      if (child.pid === undefined) finish(null, null, error);
    });
    // Workers of the engine may hold its stdout open after it died: kill its group on 'exit', so 'close' follows.
    child.once('exit', () => {
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
    });
    child.once('close', (code, signal) => finish(code, signal));
    this.options.log.info(
      { engine: this.spec.name, pid: child.pid, port: this.spec.port, gpus: this.spec.gpuIds.join(','), tensorParallelSize: this.spec.tensorParallelSize, argv: redactArgv(this.spec.argv) },
      'engine started',
    );
  }

  /** No more restarts; SIGTERM the engine's process group, SIGKILL it after stopTimeoutMs. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer !== undefined) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const child = this.child;
    if (child?.pid === undefined) return;
    killGroup(child.pid, 'SIGTERM');
    const timer = setTimeout(() => {
      this.options.log.warn({ engine: this.spec.name, pid: child.pid, afterMs: this.options.stopTimeoutMs }, 'engine did not stop after SIGTERM; sending SIGKILL');
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
    }, this.options.stopTimeoutMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Synchronous last resort (process exit, crash): SIGKILL the group, no waiting. */
  killNow(): void {
    this.stopping = true;
    if (this.restartTimer !== undefined) clearTimeout(this.restartTimer);
    const pid = this.child?.pid;
    if (pid !== undefined) killGroup(pid, 'SIGKILL');
  }
}

/** Signals a whole process group (the engine and its workers); a group already gone is not an error. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: already gone.
  }
}
