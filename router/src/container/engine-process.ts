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
  /**
   * How long after the engine's exit its output may stay open before the run counts as ended anyway: a descendant
   * outside its process group (a daemonized helper) can hold the pipes for ever, and must not stall the restart or
   * the shutdown. Default ENGINE_OUTPUT_CLOSE_WAIT_MS.
   */
  readonly outputCloseWaitMs?: number;
  /** Told every exit the engine did not ask for (not after stop()), after its restart was scheduled. */
  readonly onExit?: (exit: EngineExit) => void;
}

/** One unrequested end of an engine run. */
export interface EngineExit {
  readonly engine: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the program could not be started at all (ENOENT, EACCES). */
  readonly error?: string;
  readonly ranMs: number;
  /** The engine's last output lines (both streams, without the prefix), oldest first. */
  readonly lastLines: readonly string[];
}

/** Default of EngineProcessOptions.outputCloseWaitMs: what a process needs to flush and close its pipes. */
export const ENGINE_OUTPUT_CLOSE_WAIT_MS = 2_000;
/** Output lines of an engine kept for the report of an engine that keeps failing (each cut at 2,000 characters). */
export const ENGINE_LAST_LINES = 40;
const LAST_LINE_MAX_CHARS = 2_000;

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
  private readonly tail: string[] = [];

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

  /** The engine's last output lines (both streams, without the prefix), oldest first; kept across restarts. */
  lastLines(): string[] {
    return [...this.tail];
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
    const { out, err } = this.pipeOutput(child);
    if (child.pid !== undefined) this.pids.push(child.pid);
    let resolveExited!: () => void;
    this.exited = new Promise((resolve) => (resolveExited = resolve));
    let done = false;
    let closeWait: NodeJS.Timeout | undefined;
    const finish = (code: number | null, signal: NodeJS.Signals | null, error?: Error): void => {
      if (done) return;
      done = true;
      if (closeWait !== undefined) clearTimeout(closeWait);
      out.end();
      err.end();
      this.child = undefined;
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL'); // workers the engine left behind
      this.ended(child.pid, code, signal, error);
      resolveExited();
    };
    child.once('error', (error) => {
      // Spawn failures (ENOENT, EACCES) come without an 'exit' event.
      if (child.pid === undefined) finish(null, null, error);
    });
    // The run ends at the engine's exit. Its workers may hold its output open: SIGKILL its group so the pipes close,
    // and wait for that at most outputCloseWaitMs (a descendant outside the group may hold them for ever).
    child.once('exit', (code, signal) => {
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
      const waitMs = this.options.outputCloseWaitMs ?? ENGINE_OUTPUT_CLOSE_WAIT_MS;
      closeWait = setTimeout(() => {
        this.options.log.warn(
          { engine: this.spec.name, pid: child.pid, afterMs: waitMs },
          'engine exited but its output is still open (held by a process outside its group); counting it as ended',
        );
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish(code, signal);
      }, waitMs);
    });
    child.once('close', (code, signal) => finish(code, signal));
    this.options.log.info(
      {
        engine: this.spec.name,
        pid: child.pid,
        port: this.spec.port,
        gpus: this.spec.gpuIds.join(','),
        tensorParallelSize: this.spec.tensorParallelSize,
        argv: redactArgv(this.spec.argv),
      },
      'engine started',
    );
  }

  /** Forwards the engine's output, each line prefixed with its name, and keeps its last lines. */
  private pipeOutput(child: ChildProcess): { out: LinePrefixer; err: LinePrefixer } {
    const prefix = `[${this.spec.name}] `;
    const keep = (text: string): void => {
      for (const line of text.split('\n')) {
        if (line === '') continue;
        this.tail.push(line.slice(prefix.length, prefix.length + LAST_LINE_MAX_CHARS));
        if (this.tail.length > ENGINE_LAST_LINES) this.tail.shift();
      }
    };
    const out = new LinePrefixer(prefix, (t) => {
      keep(t);
      this.options.stdout(t);
    });
    const err = new LinePrefixer(prefix, (t) => {
      keep(t);
      this.options.stderr(t);
    });
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    return { out, err };
  }

  /** A run ended: logged as stopped when asked to stop, else restarted after the back-off and told to onExit. */
  private ended(pid: number | undefined, code: number | null, signal: NodeJS.Signals | null, error?: Error): void {
    const ranMs = Date.now() - this.startedAt;
    if (this.stopping) {
      this.options.log.info({ engine: this.spec.name, pid, code, signal }, 'engine stopped');
      return;
    }
    const restartInMs = this.backoff.nextDelay(ranMs);
    this.options.log.error(
      { engine: this.spec.name, pid, code, signal, error: error?.message, ranMs, restartInMs },
      'engine exited; restarting after backoff',
    );
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.restarts++;
      this.start();
    }, restartInMs);
    this.options.onExit?.({
      engine: this.spec.name,
      code,
      signal,
      error: error?.message,
      ranMs,
      lastLines: this.lastLines(),
    });
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
      this.options.log.warn(
        { engine: this.spec.name, pid: child.pid, afterMs: this.options.stopTimeoutMs },
        'engine did not stop after SIGTERM; sending SIGKILL',
      );
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
