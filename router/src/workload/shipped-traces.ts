import { existsSync, readdirSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * Traces that ship with the package (router/traces/*.jsonl), addressable by bare name (`trace:mooncake-synthetic`)
 * from any working directory, including a project that installed the package. The folder is found relative to
 * this module: `router/src/workload` when run from sources, `dist/router/src/workload` when compiled.
 */
const CANDIDATE_DIRS = [
  resolve(__dirname, '../../traces'),
  resolve(__dirname, '../../../../router/traces'),
  // The router package: router/dist/router/src/workload, its traces beside dist/.
  resolve(__dirname, '../../../../traces'),
];

export function shippedTracesDir(): string | undefined {
  return CANDIDATE_DIRS.find((dir) => existsSync(join(dir, 'mooncake-synthetic.jsonl')));
}

/** Names of the shipped traces (file names without `.jsonl`). */
export function shippedTraceNames(): string[] {
  const dir = shippedTracesDir();
  if (dir === undefined) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => f.slice(0, -'.jsonl'.length))
    .sort();
}

/** A bare name (no path separator, no extension) of a shipped trace. */
function isBareName(path: string): boolean {
  return !path.includes('/') && !path.includes('\\') && !path.endsWith('.jsonl') && !isAbsolute(path);
}

/**
 * The file a `trace:` spec names: an existing path as given (relative to the working directory), else a shipped
 * trace by bare name. Throws naming the workload, the path tried and the shipped names when neither exists.
 */
export function resolveTracePath(path: string): string {
  if (existsSync(path) && !isBareName(path)) return path;
  if (isBareName(path)) {
    const dir = shippedTracesDir();
    const shipped = dir === undefined ? undefined : join(dir, `${path}.jsonl`);
    if (shipped !== undefined && existsSync(shipped)) return shipped;
    if (existsSync(path)) return path;
  }
  const names = shippedTraceNames();
  throw new TraceNotFoundError(path, resolve(path), names);
}

export class TraceNotFoundError extends Error {
  constructor(
    readonly path: string,
    readonly absolutePath: string,
    readonly shippedNames: readonly string[],
  ) {
    const shipped =
      shippedNames.length > 0
        ? `; shipped traces, usable by name: ${shippedNames.map((n) => `trace:${n}`).join(', ')}`
        : '';
    super(`workload trace:${path}: no trace file at ${absolutePath}${shipped}`);
    this.name = 'TraceNotFoundError';
  }
}
