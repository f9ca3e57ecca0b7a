import { fork, type ChildProcess } from 'node:child_process';
import { extname, join } from 'node:path';
import type { ChildMessage, ParentMessage, ServiceSpec } from './service-process';

/**
 * The parent's side of a service process (see service-process.ts): forks it, waits for `ready`, stops it.
 * Works from the compiled package (dist/*.js) and from TypeScript sources under ts-node or Jest.
 */
export interface ServiceHandle {
  readonly urls: readonly string[];
  /** Instance ids: the fleet's URLs, or the router's backend ids. */
  readonly ids: readonly string[];
  readonly modelName?: string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

function childModule(): { path: string; execArgv: string[] } {
  const ext = extname(__filename);
  const path = join(__dirname, `service-process${ext}`);
  // Under ts-node or Jest the sources are .ts: the child needs a TypeScript loader too.
  return { path, execArgv: ext === '.ts' ? ['-r', 'ts-node/register/transpile-only'] : [] };
}

export async function startService(service: ServiceSpec): Promise<ServiceHandle> {
  const { path, execArgv } = childModule();
  const child = fork(path, [], { execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const ready = await new Promise<Extract<ChildMessage, { type: 'ready' }>>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`${service.kind} did not start within ${START_TIMEOUT_MS / 1000} s`)),
      START_TIMEOUT_MS,
    );
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`${service.kind} process exited (code ${code}) before it was ready`)));
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve(message);
      } else if (message.type === 'failed') {
        fail(new Error(`${service.kind} failed to start: ${message.message}`));
      }
    });
    child.send({ type: 'start', service } satisfies ParentMessage);
  });
  return { urls: ready.urls, ids: ready.ids, modelName: ready.modelName, stop: () => stopChild(child) };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    if (child.connected) child.send({ type: 'stop' } satisfies ParentMessage);
    else child.kill('SIGTERM');
  });
}
