import { once } from 'node:events';
import { createWriteStream, mkdirSync, renameSync, rmSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';

/** What the writer needs of an entry: its time, lengths and ids, and where it came from (for a problem). */
export interface WritableEntry {
  readonly timestampMs: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly ids: readonly number[];
  readonly source: string;
  readonly lineNumber: number;
}

export interface TraceWriterOptions {
  /** The Mooncake JSONL file: written as OUT.partial, renamed by commit(). */
  readonly out: string;
  /** Entries may arrive this much out of order and still be written in order. */
  readonly reorderWindowMs: number;
  /** Told of each entry as it is written, in trace order. */
  readonly onWritten: (entry: WritableEntry) => void;
  /** Told of an entry that came later than the window allows; it is written at the time of the one before it. */
  readonly onLate: (entry: WritableEntry, message: string) => void;
}

/** Bytes of trace lines gathered before one write to the file. */
const WRITE_CHUNK_CHARS = 1 << 20;

/**
 * Writes Mooncake trace lines in timestamp order through a bounded reorder window (a min-heap on time, then
 * arrival), timestamps relative to the first entry written. The file is OUT.partial until commit() renames it;
 * discard() removes it.
 */
export class TraceWriter {
  private readonly partial: string;
  private readonly file: WriteStream;
  private readonly fileError: Promise<never>;
  private readonly pending = new PendingHeap();
  private buffered: string[] = [];
  private bufferedChars = 0;
  private seq = 0;
  private latestSeen = -Infinity;
  private firstWritten = NaN;
  private lastWritten = -Infinity;

  constructor(private readonly options: TraceWriterOptions) {
    mkdirSync(dirname(options.out), { recursive: true });
    this.partial = `${options.out}.partial`;
    this.file = createWriteStream(this.partial, { highWaterMark: 1 << 20 });
    this.fileError = new Promise<never>((_, reject) => this.file.once('error', reject));
    this.fileError.catch(() => undefined);
  }

  /** The first written entry's time (ms since the epoch); NaN before any. */
  get firstTimestampMs(): number {
    return this.firstWritten;
  }

  /** The last written entry's time (ms since the epoch). */
  get lastTimestampMs(): number {
    return this.lastWritten;
  }

  /** Takes an entry; writes every pending one older than the newest seen minus the window. */
  async add(entry: WritableEntry): Promise<void> {
    this.latestSeen = Math.max(this.latestSeen, entry.timestampMs);
    this.pending.push({ entry, seq: this.seq++ });
    await this.drainUpTo(this.latestSeen - this.options.reorderWindowMs);
  }

  /** Writes every pending entry and closes the file (still OUT.partial). */
  async finish(): Promise<void> {
    await this.drainUpTo(Infinity);
    await this.flush();
    this.file.end();
    await Promise.race([once(this.file, 'finish'), this.fileError]);
  }

  /** Renames the finished OUT.partial to OUT. */
  commit(): void {
    renameSync(this.partial, this.options.out);
  }

  /** Stops writing and removes OUT.partial. */
  discard(): void {
    this.file.destroy();
    rmSync(this.partial, { force: true });
  }

  private async drainUpTo(limit: number): Promise<void> {
    while (this.pending.size > 0 && this.pending.peek()!.entry.timestampMs <= limit)
      await this.write(this.pending.pop()!.entry);
  }

  private async write(entry: WritableEntry): Promise<void> {
    let timestamp = entry.timestampMs;
    if (timestamp < this.lastWritten) {
      this.options.onLate(
        entry,
        `arrived ${((this.lastWritten - timestamp) / 1000).toFixed(1)} s before a request already written (more than the ${this.options.reorderWindowMs / 1000} s reorder window); kept at that request's time`,
      );
      timestamp = this.lastWritten;
    }
    if (Number.isNaN(this.firstWritten)) this.firstWritten = timestamp;
    this.lastWritten = timestamp;
    this.options.onWritten(entry);
    const line = `{"timestamp":${Math.round(timestamp - this.firstWritten)},"input_length":${entry.inputTokens},"output_length":${entry.outputTokens},"hash_ids":[${entry.ids.join(',')}]}\n`;
    this.buffered.push(line);
    this.bufferedChars += line.length;
    if (this.bufferedChars >= WRITE_CHUNK_CHARS) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.buffered.length === 0) return;
    const chunk = this.buffered.join('');
    this.buffered = [];
    this.bufferedChars = 0;
    if (!this.file.write(chunk)) await Promise.race([once(this.file, 'drain'), this.fileError]);
  }
}

interface Pending {
  readonly entry: WritableEntry;
  /** Arrival order, which breaks ties between equal timestamps. */
  readonly seq: number;
}

/** A min-heap on (timestamp, arrival sequence): the reorder window. */
class PendingHeap {
  private readonly items: Pending[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): Pending | undefined {
    return this.items[0];
  }

  push(item: Pending): void {
    const a = this.items;
    a.push(item);
    for (let i = a.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!before(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }

  pop(): Pending | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && before(a[l], a[m])) m = l;
        if (r < a.length && before(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }
}

function before(x: Pending, y: Pending): boolean {
  return x.entry.timestampMs < y.entry.timestampMs || (x.entry.timestampMs === y.entry.timestampMs && x.seq < y.seq);
}
