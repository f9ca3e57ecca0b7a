import { closeSync, createReadStream, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { systemClock, withThrottlingRetry, type Clock, type RetryPolicy } from '../aws/throttling-retry';

/**
 * Where captured requests are read from: files, directories (recursively) and `s3://bucket/prefix`. Every
 * source is streamed in chunks, never read whole, so an import's memory does not grow with the files.
 *
 * Order: a directory's files in order of their first line's time (given `firstLineTime`), then path; an S3
 * prefix's objects in key order (reading every object's first line first would cost a GET each). Data Capture
 * writes `PREFIX/ENDPOINT/VARIANT/yyyy/mm/dd/hh/<minute>-<second>-<ms>-<uuid>.jsonl`, so its key order is time
 * order; what is left over (files that overlap in time) the importer's reorder window absorbs, and anything
 * beyond it is counted as out of order.
 */
export interface ImportSource {
  /** As shown in problems: the path, or `s3://bucket/key`. */
  readonly name: string;
  open(): AsyncIterable<Uint8Array>;
}

export interface SourceOptions {
  /** The S3 client (default: a new one from the SDK's default credential chain and region). */
  readonly s3?: S3Client;
  /** Backoff of throttled S3 calls (injected by tests). */
  readonly clock?: Clock;
  readonly retry?: RetryPolicy;
  /** Called for every throttled S3 call that is retried. */
  readonly onThrottled?: (what: string, attempt: number, delayMs: number) => void;
  /**
   * The time (ms) of a file's first line, or undefined: a directory's files are read in order of it (then path),
   * so logs whose names do not sort by time (app.log, app.log.1, …) are still read oldest first.
   */
  readonly firstLineTime?: (line: string) => number | undefined;
}

/** Bytes read from the start of a file to find its first line's time. */
const FIRST_LINE_PEEK = 1 << 16;

function firstLineOf(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(FIRST_LINE_PEEK);
    const n = readSync(fd, buffer, 0, FIRST_LINE_PEEK, 0);
    const text = buffer.toString('utf8', 0, n);
    const nl = text.indexOf('\n');
    return nl === -1 ? text : text.slice(0, nl);
  } finally {
    closeSync(fd);
  }
}

/** Files in order of their first line's time, files without one after them, ties and the rest in path order. */
function inTimeOrder(files: string[], firstLineTime: (line: string) => number | undefined): string[] {
  const keyed = files.map((file, index) => ({ file, index, time: firstLineTime(firstLineOf(file)) ?? Infinity }));
  keyed.sort((a, b) => a.time - b.time || a.index - b.index);
  return keyed.map((k) => k.file);
}

const S3_URI = /^s3:\/\/([^/]+)\/?(.*)$/;

/** True for names that are not data: hidden files and the `.partial` files an interrupted import leaves. */
function skipped(name: string): boolean {
  return name.startsWith('.') || name.endsWith('.partial');
}

function localFiles(path: string): string[] {
  const stat = statSync(path);
  if (!stat.isDirectory()) return [path];
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (skipped(entry.name)) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) out.push(full);
    }
  };
  walk(path);
  // Path order, compared as the S3 listing compares keys (UTF-8 binary order), so a copy of a capture
  // prefix reads in the same order from disk as from S3.
  return out.sort((a, b) => Buffer.compare(Buffer.from(relative(path, a)), Buffer.from(relative(path, b))));
}

function localSource(path: string): ImportSource {
  return { name: path, open: () => createReadStream(path, { highWaterMark: 1 << 20 }) };
}

/**
 * GetObject calls kept in flight ahead of the one being read: Data Capture writes many small objects (about one
 * per instance and minute), so reading them one after another would wait one request latency per object.
 */
export const S3_PREFETCH = 8;

/** Every object under an S3 prefix, page by page (ListObjectsV2, 1,000 keys a page), throttled calls retried. */
async function* s3Sources(uri: string, options: SourceOptions): AsyncGenerator<ImportSource, void, undefined> {
  const match = S3_URI.exec(uri);
  if (!match) throw new Error(`${uri} is not an s3://bucket/prefix URI`);
  const [, bucket, prefix] = match as unknown as [string, string, string];
  const s3 = options.s3 ?? new S3Client({});
  const clock = options.clock ?? systemClock;
  const ahead: ImportSource[] = [];
  const fetchAhead = (key: string): ImportSource => {
    const response = withThrottlingRetry(
      `GetObject s3://${bucket}/${key}`,
      () => s3.send(new GetObjectCommand({ Bucket: bucket, Key: key })),
      clock,
      options.retry,
      (attempt, delay) => options.onThrottled?.('GetObject', attempt, delay),
    );
    // Its failure is reported when the object is read, not as an unhandled rejection before.
    response.catch(() => undefined);
    return { name: `s3://${bucket}/${key}`, open: () => bodyOf(response) };
  };
  let token: string | undefined;
  do {
    const page = await withThrottlingRetry(
      `ListObjectsV2 s3://${bucket}/${prefix}`,
      () => s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token })),
      clock,
      options.retry,
      (attempt, delay) => options.onThrottled?.('ListObjectsV2', attempt, delay),
    );
    for (const object of page.Contents ?? []) {
      const key = object.Key;
      if (key === undefined || key.endsWith('/') || skipped(key.slice(key.lastIndexOf('/') + 1))) continue;
      ahead.push(fetchAhead(key));
      if (ahead.length > S3_PREFETCH) yield ahead.shift()!;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  while (ahead.length > 0) yield ahead.shift()!;
}

async function* bodyOf(response: Promise<{ Body?: unknown }>): AsyncGenerator<Uint8Array, void, undefined> {
  const body = (await response).Body as AsyncIterable<Uint8Array> | undefined;
  if (body === undefined) return;
  yield* body;
}

/** The sources of every INPUT, in the order given, each directory and prefix expanded in path order. */
export async function* importSources(
  inputs: readonly string[],
  options: SourceOptions = {},
): AsyncGenerator<ImportSource, void, undefined> {
  for (const input of inputs) {
    if (input.startsWith('s3://')) {
      yield* s3Sources(input, options);
      continue;
    }
    let files: string[];
    try {
      files = localFiles(input);
      if (files.length > 1 && options.firstLineTime !== undefined) files = inTimeOrder(files, options.firstLineTime);
    } catch (error) {
      throw new Error(`cannot read ${input}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    for (const file of files) yield localSource(file);
  }
}

export interface SourceLine {
  /** 1-based. */
  readonly lineNumber: number;
  readonly text: string;
  /** False for a last line with no newline after it: possibly cut off mid-write. */
  readonly terminated: boolean;
}

/**
 * Lines of a chunked UTF-8 stream, with whether each ended in a newline (a truncated last line has none). A
 * trailing "\r" is removed. Lines are found in the bytes and each is decoded on its own (no chunk-sized string
 * is built and sliced), so memory is one chunk plus the longest line. (workload/line-reader.ts reads local
 * files synchronously for the simulator's loop; S3 bodies are async streams, hence this async twin.)
 */
export async function* sourceLines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SourceLine, void, undefined> {
  let carry: Buffer | undefined;
  let lineNumber = 0;
  const text = (bytes: Buffer, start: number, nl: number): string => {
    const end = nl > start && bytes[nl - 1] === 13 ? nl - 1 : nl;
    return bytes.toString('utf8', start, end);
  };
  for await (const chunk of chunks) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    if (carry !== undefined) {
      // Only the line that spans the chunks is joined, never the whole chunk.
      const nl = bytes.indexOf(10);
      if (nl === -1) {
        carry = Buffer.concat([carry, bytes]);
        continue;
      }
      const joined = Buffer.concat([carry, bytes.subarray(0, nl)]);
      carry = undefined;
      lineNumber++;
      yield { lineNumber, text: text(joined, 0, joined.length), terminated: true };
      start = nl + 1;
    }
    for (let nl = bytes.indexOf(10, start); nl !== -1; nl = bytes.indexOf(10, start)) {
      lineNumber++;
      yield { lineNumber, text: text(bytes, start, nl), terminated: true };
      start = nl + 1;
    }
    // The unfinished line, copied so the chunk it came from can be freed.
    if (start < bytes.length) carry = Buffer.from(bytes.subarray(start));
  }
  if (carry !== undefined) yield { lineNumber: lineNumber + 1, text: text(carry, 0, carry.length), terminated: false };
}
