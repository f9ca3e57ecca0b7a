import type { BenchIo } from '../../../../router/src/cli/bench-run';

/** A command's output streams, kept in memory: what it printed on stdout and on stderr (not a TTY). */
export function captureIo(): BenchIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t), isTTY: false },
    out: () => out,
    err: () => err,
  };
}
