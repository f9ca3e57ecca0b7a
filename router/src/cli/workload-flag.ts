import { basename, dirname, join } from 'node:path';
import { ConfigError } from '../common/config-error';
import { CAPTURE_FORMAT_TITLES, recognizeCaptureLine, type CaptureFormat } from '../trace-import/capture-formats';
import { readLines } from '../workload/line-reader';
import { TraceFormatError } from '../workload/mooncake-trace';

/** Non-blank lines read to recognize a file: enough to be sure, few enough to stay instant on any file. */
const RECOGNIZED_LINES = 3;

/**
 * The capture format of a file whose first non-blank lines (up to RECOGNIZED_LINES) are all records of one
 * format the importer reads, else undefined. Recognition is trace-import's own (recognizeCaptureLine).
 */
export function recognizeCaptureFile(path: string): CaptureFormat | undefined {
  const formats = new Set<CaptureFormat | undefined>();
  let read = 0;
  for (const { text } of readLines(path)) {
    if (text.trim() === '') continue;
    formats.add(recognizeCaptureLine(text));
    if (++read === RECOGNIZED_LINES) break;
  }
  const [only] = formats;
  return formats.size === 1 ? only : undefined;
}

/** A path as a shell word: as is when it holds only safe characters, else single-quoted. */
function shellWord(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/** Where `trace import` should write the trace of `path`: beside it, `<name>-trace.jsonl`. */
export function importedTracePath(path: string): string {
  const name = basename(path).replace(/\.jsonl?$/i, '');
  return join(dirname(path), `${name}-trace.jsonl`);
}

/**
 * Parses a --workload value with `parse`, turning a TraceFormatError on a file that is a capture (an OpenAI
 * request log or SageMaker Data Capture) into one error that says so and gives the `prefix-router trace import`
 * command that makes it a trace — instead of one "bad line" per request. Other errors pass unchanged.
 */
export function recognizingCaptureFiles<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (!(err instanceof TraceFormatError)) throw err;
    let format: CaptureFormat | undefined;
    try {
      format = recognizeCaptureFile(err.path);
    } catch {
      throw err; // unreadable: the original error says more
    }
    if (format === undefined) throw err;
    const trace = importedTracePath(err.path);
    throw new ConfigError([
      `trace:${err.path} is ${CAPTURE_FORMAT_TITLES[format]}, not a replayable trace; import it first (the trace keeps block hashes and lengths, no prompt text):\n` +
        `    prefix-router trace import --out ${shellWord(trace)} ${shellWord(err.path)}\n` +
        `  then use --workload ${shellWord(`trace:${trace}`)}`,
    ]);
  }
}
