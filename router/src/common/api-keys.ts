import { createHash, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { priorityTextProblem } from './priority-text';

/**
 * Header a client whose `Authorization` already carries something else (the AWS SDK's SigV4 signature on the
 * /endpoints/* paths) sends its router key in. OpenAI clients use `Authorization: Bearer KEY`.
 */
export const API_KEY_HEADER = 'x-prefix-router-api-key';

/** How often a key file is stat()ed for changes (a Kubernetes secret update swaps a symlink: stat follows it). */
const KEY_FILE_POLL_MS = 1000;

/** Longest key line read; longer lines are not keys (and are not kept). */
const MAX_KEY_CHARS = 4096;

/**
 * Largest key file read: far above any list of keys, far below what would stall or fill the process (a symlink
 * swapped to a 400 MB file stalled the router for seconds; /dev/zero filled gigabytes).
 */
export const MAX_KEY_FILE_BYTES = 1024 * 1024;

/**
 * Opened without blocking, so a FIFO (or a device) is opened at once and refused by its type, instead of hanging
 * the open until a writer comes.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/**
 * `text` without the ASCII whitespace around it (space, tab, CR, LF): what surrounds a key in a file or a header.
 * Nothing else is trimmed, so a key presented with U+00A0 (or any other character) around it is another key.
 */
export function trimAsciiWhitespace(text: string): string {
  return text.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
}

/**
 * The keys in a key file: one per line, blank lines and `#` comments ignored, surrounding ASCII whitespace trimmed.
 * Several keys let a deployment rotate: add the new key, move clients, remove the old one.
 */
export function parseKeyFile(text: string): string[] {
  return keyLinesOf(text).map((l) => l.text);
}

/** A key line of a key file and its line number (from 1), for messages that name file:line. */
export interface KeyLine {
  readonly line: number;
  readonly text: string;
}

function keyLinesOf(text: string): KeyLine[] {
  return text
    .split(/\r?\n/)
    .map((raw, i) => ({ line: i + 1, text: trimAsciiWhitespace(raw) }))
    .filter(({ text: t }) => t !== '' && !t.startsWith('#') && t.length <= MAX_KEY_CHARS);
}

/** A key of the API key file and the priority class its requests get when the line ends in `priority=N`. */
export interface KeyEntry {
  readonly key: string;
  readonly priority?: number;
}

/** `KEY priority=N`: the priority a key's requests get (the key itself is everything before the blanks). */
const KEY_PRIORITY_SUFFIX = /[ \t]+priority=(\S*)$/;

/**
 * The API key file's entries: each key line is a key, or a key, blanks and `priority=N` (N as the
 * x-prefix-router-priority header takes it). Throws KeyFileError counting and listing every bad priority by
 * file:line (never a key).
 */
export function keyEntriesOf(path: string, lines: readonly KeyLine[]): KeyEntry[] {
  const problems: string[] = [];
  const entries = lines.map(({ line, text }): KeyEntry => {
    const suffix = KEY_PRIORITY_SUFFIX.exec(text);
    if (suffix === null) return { key: text };
    const problem = priorityTextProblem(suffix[1]);
    if (problem !== undefined) problems.push(`${path}:${line}: priority ${problem}`);
    return { key: text.slice(0, suffix.index), priority: Number(suffix[1]) };
  });
  if (problems.length > 0)
    throw new KeyFileError(
      path,
      `has ${problems.length} bad ${problems.length === 1 ? 'priority' : 'priorities'}: ${problems.join('; ')}`,
    );
  return entries;
}

/** Thrown when a key file cannot be read or holds no key. */
export class KeyFileError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path} ${reason}`);
    this.name = 'KeyFileError';
  }
}

/**
 * Reads and parses a key file, which must be a regular file of at most MAX_KEY_FILE_BYTES; throws KeyFileError
 * naming the file (never its content). Synchronous: for start-up and configuration checks (keyFileKeys re-reads).
 */
export function readKeyFile(path: string): string[] {
  return readKeyLines(path).map((l) => l.text);
}

/** The API key file's entries (keyEntriesOf), read as readKeyFile reads: start-up and configuration checks. */
export function readKeyEntries(path: string): KeyEntry[] {
  return keyEntriesOf(path, readKeyLines(path));
}

function readKeyLines(path: string): KeyLine[] {
  let fd: number | undefined;
  let bytes: Buffer;
  try {
    fd = openSync(path, OPEN_FLAGS);
    checkKeyFileStats(path, fstatSync(fd));
    bytes = Buffer.alloc(MAX_KEY_FILE_BYTES + 1);
    bytes = bytes.subarray(0, readSync(fd, bytes, 0, bytes.length, 0));
  } catch (err) {
    throw asKeyFileError(path, err);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return keysOfFile(path, bytes);
}

/** readKeyLines without blocking the event loop: what re-reads (a change seen, SIGHUP) use. */
async function keyFileLines(path: string): Promise<KeyLine[]> {
  let bytes: Buffer;
  try {
    const handle = await open(path, OPEN_FLAGS);
    try {
      checkKeyFileStats(path, await handle.stat());
      const buffer = Buffer.alloc(MAX_KEY_FILE_BYTES + 1);
      bytes = buffer.subarray(0, (await handle.read(buffer, 0, buffer.length, 0)).bytesRead);
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw asKeyFileError(path, err);
  }
  return keysOfFile(path, bytes);
}

function checkKeyFileStats(path: string, stats: Stats): void {
  if (!stats.isFile()) throw new KeyFileError(path, 'is not a regular file');
  if (stats.size > MAX_KEY_FILE_BYTES)
    throw new KeyFileError(path, `is larger than ${MAX_KEY_FILE_BYTES} bytes (${stats.size})`);
}

function asKeyFileError(path: string, err: unknown): KeyFileError {
  if (err instanceof KeyFileError) return err;
  return new KeyFileError(path, `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
}

function keysOfFile(path: string, bytes: Buffer): KeyLine[] {
  // The file grew between its stat and its read.
  if (bytes.length > MAX_KEY_FILE_BYTES) throw new KeyFileError(path, `is larger than ${MAX_KEY_FILE_BYTES} bytes`);
  const keys = keyLinesOf(bytes.toString('utf8'));
  if (keys.length === 0)
    throw new KeyFileError(path, 'holds no key (one key per line; blank lines and # comments are ignored)');
  return keys;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * The credential a request presents: the `x-prefix-router-api-key` header, else the token of
 * `Authorization: Bearer TOKEN`. Undefined when it presents none.
 */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const explicit = headers[API_KEY_HEADER];
  if (typeof explicit === 'string' && explicit !== '') return trimAsciiWhitespace(explicit);
  const authorization = headers.authorization;
  if (typeof authorization !== 'string') return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  return match?.[1];
}

/**
 * A key file read at construction and re-read when it changes (polled, without keeping the process alive) or on
 * reload() (SIGHUP). A re-read that fails (file missing mid-rotation, empty) keeps what is in use and reports
 * through onError. Subclasses keep the keys in the form they need (`take`).
 */
abstract class WatchedKeyFile {
  private readonly onStat: (current: Stats, previous: Stats) => void;
  private watching = false;
  /** The re-read under way, and the one asked for meanwhile (it reads once more after: never two reads at once). */
  private reading: Promise<boolean> | undefined;
  private nextReading: Promise<boolean> | undefined;

  protected constructor(
    readonly path: string,
    private readonly onError: (error: KeyFileError) => void,
  ) {
    this.onStat = (current, previous) => {
      if (current.mtimeMs !== previous.mtimeMs || current.size !== previous.size || current.ino !== previous.ino)
        void this.reload();
    };
  }

  /** Takes the file's key lines (called with every successful read); throws KeyFileError to refuse them. */
  protected abstract take(lines: readonly KeyLine[]): void;

  /**
   * Re-reads the file, asynchronously; on failure (not a regular file, over MAX_KEY_FILE_BYTES, unreadable, no key)
   * the keys in use stay and onError says why. Resolves to whether the new keys were taken.
   */
  reload(): Promise<boolean> {
    if (this.reading !== undefined) {
      return (this.nextReading ??= this.reading.then(() => {
        this.nextReading = undefined;
        return this.reload();
      }));
    }
    // take() may refuse what it read (a bad priority): that keeps the keys in use, as a failed read does.
    this.reading = keyFileLines(this.path)
      .then((lines) => {
        this.take(lines);
        return true;
      })
      .catch((err: unknown) => {
        this.onError(asKeyFileError(this.path, err));
        return false;
      });
    const done = this.reading;
    void done.finally(() => {
      this.reading = undefined;
    });
    return done;
  }

  /** Starts polling the file for changes (not keeping the process alive). */
  watch(): void {
    if (this.watching) return;
    this.watching = true;
    watchFile(this.path, { interval: KEY_FILE_POLL_MS, persistent: false }, this.onStat);
  }

  close(): void {
    if (!this.watching) return;
    this.watching = false;
    unwatchFile(this.path, this.onStat);
  }
}

/**
 * A set of accepted keys read from a file, re-read when the file changes (polled) or on reload() (SIGHUP).
 * Keys are held as SHA-256 digests and compared with crypto.timingSafeEqual over those fixed-length digests,
 * every key every time, so the time a check takes says nothing about how much of a guess was right. A
 * re-read that fails (file missing mid-rotation, empty) keeps the previous keys and reports through onError.
 */
export class KeyRing extends WatchedKeyFile {
  private digests: Buffer[];
  /** Each key's priority class (`KEY priority=N`), by the index `match` returns; only with `withPriorities`. */
  private priorities: (number | undefined)[];

  /**
   * `withPriorities`: the file is the API key file, whose lines may end in `priority=N` (keyEntriesOf); otherwise
   * every key line is a key as written.
   */
  constructor(
    path: string,
    onError: (error: KeyFileError) => void = () => undefined,
    private readonly withPriorities = false,
  ) {
    super(path, onError);
    [this.digests, this.priorities] = this.parse(readKeyLines(path));
  }

  protected take(lines: readonly KeyLine[]): void {
    [this.digests, this.priorities] = this.parse(lines);
  }

  private parse(lines: readonly KeyLine[]): [Buffer[], (number | undefined)[]] {
    const entries = this.withPriorities
      ? keyEntriesOf(this.path, lines)
      : lines.map((l): KeyEntry => ({ key: l.text }));
    return [entries.map((e) => digest(e.key)), entries.map((e) => e.priority)];
  }

  /** The priority class the key at `index` (from `match`) gives its requests; undefined when its line gives none. */
  priorityAt(index: number): number | undefined {
    return this.priorities[index];
  }

  /** Number of keys currently accepted. */
  get size(): number {
    return this.digests.length;
  }

  /**
   * The index of the accepted key equal to `key`, or -1. Constant-time in the key's content: every stored
   * digest is compared.
   */
  match(key: string | undefined): number {
    const presented = digest(key ?? '');
    let found = -1;
    for (let i = 0; i < this.digests.length; i++) {
      if (timingSafeEqual(presented, this.digests[i]) && key !== undefined) found = found === -1 ? i : found;
    }
    return found;
  }

  /**
   * A stable, non-reversible name of the key a request presented (hex of the first 8 bytes of its SHA-256),
   * used as the authenticated tenant; the same across replicas and rotations of other keys.
   */
  static identity(key: string): string {
    return digest(key).subarray(0, 8).toString('hex');
  }
}

/**
 * The one key the router presents to its engines (`--upstream-api-key-file`, vLLM's `--api-key`): the file's
 * first key, re-read like a KeyRing.
 */
export class UpstreamKey extends WatchedKeyFile {
  private key: string;

  constructor(path: string, onError: (error: KeyFileError) => void = () => undefined) {
    super(path, onError);
    this.key = readKeyFile(path)[0];
  }

  protected take(lines: readonly KeyLine[]): void {
    this.key = lines[0].text;
  }

  /** The Authorization header value sent upstream. */
  get authorization(): string {
    return `Bearer ${this.key}`;
  }
}

/** Shortest secret a state-hash key file may hold (64 hex digits from 32 random bytes is the suggested form). */
export const MIN_STATE_HASH_SECRET_CHARS = 32;

/**
 * The secret a `--state-hash-key-file` holds: its first key line (blank lines and `#` comments ignored), at least
 * MIN_STATE_HASH_SECRET_CHARS characters. Throws KeyFileError naming the file, never its content.
 */
export function readStateHashSecret(path: string): string {
  const [secret] = readKeyFile(path);
  if (secret.length < MIN_STATE_HASH_SECRET_CHARS) {
    throw new KeyFileError(
      path,
      `holds a key of ${secret.length} characters; a state-hash key needs at least ${MIN_STATE_HASH_SECRET_CHARS} (e.g. 64 hex digits)`,
    );
  }
  return secret;
}
