import { randomBytes } from 'node:crypto';
import { CHARS_PER_TOKEN } from './block-hash';
import { InstanceLoad, type LoadTicket } from './instance-load';
import { InstancePrefixIndex, RecencyClock } from './prefix-index';

/** An instance's load as it counts it itself: every request it was sent, by any router. */
export interface InstanceLoadFigures {
  readonly inFlight: number;
  readonly queuedPrefillTokens: number;
  readonly decodeSequences: number;
}

/**
 * What an instance publishes about itself (GET /router/v1/instance-state): its load, and the routing blocks it
 * was recently sent, as an index any observer can rebuild exactly. `records` are the prompts recorded after the
 * observer's `since`, oldest first (replayed into a copy of the index they give the same index); `snapshot` is the
 * whole index instead, when the observer is new, on another epoch, or too far behind.
 */
export interface InstanceStateUpdate {
  /** Identifies one run of the publisher: a restart starts a new index, so an observer must start over. */
  readonly epoch: string;
  /** Prompts recorded since the epoch began. */
  readonly seq: number;
  /** InstanceStateLog.version when the update was taken. */
  readonly version: number;
  readonly blockChars: number;
  readonly capacityBlocks: number;
  readonly load: InstanceLoadFigures;
  readonly snapshot?: { readonly clock: number; readonly hashes: Int32Array; readonly recency: Float64Array };
  readonly records?: readonly Int32Array[];
}

/**
 * The instance side of observed routing: the requests this instance is sent, whichever router replica sent
 * them, as load (InstanceLoad) and as an LRU index of their routing blocks sized to its KV capacity — the same
 * index a single router in front of the whole fleet would keep for it. Replicas that each observe every instance
 * see the same cache contents and the whole load, so they agree on what a prompt would find where, which their
 * own sends alone cannot tell them.
 *
 * The log keeps the recent records for observers to replay; once they hold more blocks than the index itself, a
 * snapshot is no larger, so older records are dropped and a slower observer gets the snapshot.
 */
export class InstanceStateLog {
  readonly load = new InstanceLoad();
  private readonly index: InstancePrefixIndex;
  private readonly clock = new RecencyClock();
  private seq = 0;
  /** Records seq − log.length + 1 … seq. */
  private log: Int32Array[] = [];
  private logBlocks = 0;

  constructor(
    readonly blockChars: number,
    readonly capacityBlocks: number,
    readonly epoch: string = randomBytes(8).toString('hex'),
  ) {
    if (!Number.isInteger(capacityBlocks) || capacityBlocks < 1) throw new RangeError(`capacityBlocks must be a positive integer (got ${capacityBlocks})`);
    this.index = new InstancePrefixIndex(capacityBlocks);
  }

  /**
   * A request the instance was sent: its blocks are recorded, and its load ticket starts with the prompt tokens
   * the index does not predict cached (the whole prompt's match, never the last token).
   */
  admit(hashes: Int32Array, promptTokens: number): LoadTicket {
    const matched = this.index.match(hashes);
    const cached = Math.min(Math.floor((matched * this.blockChars) / CHARS_PER_TOKEN), Math.max(0, promptTokens - 1));
    this.index.record(hashes, this.clock);
    this.seq++;
    this.log.push(hashes);
    this.logBlocks += hashes.length;
    while (this.log.length > 1 && this.logBlocks > this.capacityBlocks) this.logBlocks -= this.log.shift()!.length;
    return this.load.start(promptTokens - cached);
  }

  /** Changes so far (requests recorded, first tokens, ends): equal versions mean nothing changed. */
  get version(): number {
    return this.load.changes;
  }

  /** Blocks indexed now. */
  get indexedBlocks(): number {
    return this.index.size;
  }

  /** What an observer at (`epoch`, `since`) needs to catch up: the records after `since`, or a snapshot. */
  updateSince(epoch: string | undefined, since: number | undefined): InstanceStateUpdate {
    const base = {
      epoch: this.epoch,
      seq: this.seq,
      version: this.version,
      blockChars: this.blockChars,
      capacityBlocks: this.capacityBlocks,
      load: { inFlight: this.load.inFlight, queuedPrefillTokens: this.load.queuedPrefillTokens, decodeSequences: this.load.decodeSequences },
    };
    const oldest = this.seq - this.log.length;
    if (epoch === this.epoch && since !== undefined && Number.isInteger(since) && since >= oldest && since <= this.seq) {
      return { ...base, records: this.log.slice(this.log.length - (this.seq - since)) };
    }
    const { hashes, recency } = this.index.export();
    return { ...base, snapshot: { clock: this.clock.now, hashes, recency } };
  }
}

/**
 * An observer's copy of one instance's published state (the router side of InstanceStateLog): the same index,
 * rebuilt from snapshots and replayed records, and the load the instance last reported.
 */
export class ObservedInstance {
  private index: InstancePrefixIndex | undefined;
  private readonly clock = new RecencyClock();
  epoch: string | undefined;
  seq = 0;
  version = -1;
  blockChars = 0;
  load: InstanceLoadFigures = { inFlight: 0, queuedPrefillTokens: 0, decodeSequences: 0 };
  /** Caller's clock when the last update was applied. */
  observedAtMs = -Infinity;

  /** The longest prefix of `hashes` the instance holds, by its own account (0 before the first update). */
  match(hashes: ArrayLike<number>): number {
    return this.index === undefined ? 0 : this.index.match(hashes);
  }

  /** Blocks the instance's index holds. */
  get size(): number {
    return this.index?.size ?? 0;
  }

  get observed(): boolean {
    return this.index !== undefined;
  }

  /** Applies an update fetched with `since = this.seq` on `this.epoch`. Throws on an update that does not follow on (the caller resyncs). */
  apply(update: InstanceStateUpdate, nowMs: number): void {
    if (update.snapshot !== undefined) {
      this.index = new InstancePrefixIndex(update.capacityBlocks);
      this.index.restore(update.snapshot.hashes, update.snapshot.recency);
      this.clock.set(update.snapshot.clock);
    } else {
      const records = update.records ?? [];
      if (this.index === undefined || update.epoch !== this.epoch || update.seq - records.length !== this.seq) {
        throw new RangeError(`instance-state update (epoch ${update.epoch}, seq ${update.seq}, ${records.length} records) does not follow on from epoch ${this.epoch}, seq ${this.seq}`);
      }
      for (const hashes of records) this.index.record(hashes, this.clock);
    }
    this.epoch = update.epoch;
    this.seq = update.seq;
    this.version = update.version;
    this.blockChars = update.blockChars;
    this.load = update.load;
    this.observedAtMs = nowMs;
  }

  /** Forgets everything (the instance is gone or stopped answering): the next update must be a snapshot. */
  reset(): void {
    this.index = undefined;
    this.epoch = undefined;
    this.seq = 0;
    this.version = -1;
    this.observedAtMs = -Infinity;
  }
}

/**
 * A router's view of the load on an instance it observes: the instance's own count at the last observation
 * (every replica's requests) plus what this router changed since (its own sends and ends are known at once).
 */
export function observedLoadOf(observed: InstanceLoadFigures, ownNow: InstanceLoadFigures, ownAtObservation: InstanceLoadFigures): InstanceLoadFigures {
  return {
    inFlight: Math.max(ownNow.inFlight, observed.inFlight + ownNow.inFlight - ownAtObservation.inFlight),
    queuedPrefillTokens: Math.max(ownNow.queuedPrefillTokens, observed.queuedPrefillTokens + ownNow.queuedPrefillTokens - ownAtObservation.queuedPrefillTokens),
    decodeSequences: Math.max(ownNow.decodeSequences, observed.decodeSequences + ownNow.decodeSequences - ownAtObservation.decodeSequences),
  };
}

/** A copy of a load's figures at one instant. */
export function loadFiguresOf(load: InstanceLoadFigures): InstanceLoadFigures {
  return { inFlight: load.inFlight, queuedPrefillTokens: load.queuedPrefillTokens, decodeSequences: load.decodeSequences };
}
