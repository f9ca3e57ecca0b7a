import { randomBytes } from 'node:crypto';
import { CHARS_PER_TOKEN } from './block-hash';
import { InstanceLoad, type LoadTicket } from './instance-load';
import { EngineFeedback, InstancePrefixIndex, RecencyClock, type FeedbackAdmission } from './prefix-index';
import {
  processStateHashKey,
  type RoutingBlockKey,
  type StateHashKey,
  type StateHashKeySource,
} from './state-hash-key';

/** An instance's load as it counts it itself: every request it was sent, by any router. */
export interface InstanceLoadFigures {
  readonly inFlight: number;
  readonly queuedPrefillTokens: number;
  readonly decodeSequences: number;
}

/**
 * One change to a published index, replayed in order by observers: a prompt's blocks recorded, or the engine's
 * evidence that it evicted every block used no later than a recency (InstancePrefixIndex.evictNotNewerThan).
 */
export type IndexEvent = { readonly record: readonly RoutingBlockKey[] } | { readonly evictNotNewerThan: number };

/**
 * What an instance publishes about itself (GET /router/v1/instance-state): its load, and the routing blocks it
 * was recently sent, as an index any observer can rebuild exactly. `events` are the changes after the observer's
 * `since`, oldest first (replayed into a copy of the index they give the same index); `snapshot` is the whole
 * index instead, when the observer is new, on another epoch, or too far behind.
 */
export interface InstanceStateUpdate {
  /** Identifies one run of the publisher: a restart starts a new index, so an observer must start over. */
  readonly epoch: string;
  /** Index events since the epoch began. */
  readonly seq: number;
  /** InstanceStateLog.version when the update was taken. */
  readonly version: number;
  readonly blockChars: number;
  /** The public id of the secret the block hashes are keyed with (StateHashKey.id): an observer holding another cannot match them. */
  readonly hashKeyId: string;
  /** Where that secret came from: 'process' means the publisher has no key file, so no other router can hold it. */
  readonly hashKeySource: StateHashKeySource;
  readonly capacityBlocks: number;
  readonly load: InstanceLoadFigures;
  readonly snapshot?: {
    readonly clock: number;
    readonly hashes: readonly RoutingBlockKey[];
    readonly recency: Float64Array;
  };
  readonly events?: readonly IndexEvent[];
}

/**
 * The instance side of observed routing: the requests this instance is sent, whichever router replica sent
 * them, as load (InstanceLoad) and as an LRU index of their routing blocks sized to its KV capacity — the same
 * index a single router in front of the whole fleet would keep for it. Replicas that each observe every instance
 * see the same cache contents and the whole load, so they agree on what a prompt would find where, which their
 * own sends alone cannot tell them.
 *
 * The log keeps the recent events for observers to replay; once they hold more blocks than the index itself, a
 * snapshot is no larger, so older events are dropped and a slower observer gets the snapshot.
 *
 * Engine feedback: when the engine reports fewer cached tokens for a request than the index predicted (by at
 * least FEEDBACK_TOLERANCE_BLOCKS, see engineEvictionCutoff) and the report is one an LRU engine can give
 * (EngineFeedback: no shallower than what it was seen serving, no faster than it admits), it evicted those blocks
 * and all it used less recently; the index drops them and records the request's blocks again (the engine has just
 * computed them), as cache-aware does with its own index. So the published index follows what the engine kept, not
 * only what it was sent, and one request that renders a hot prefix differently cannot empty it.
 */
export class InstanceStateLog {
  readonly load = new InstanceLoad();
  private readonly index: InstancePrefixIndex;
  private readonly clock = new RecencyClock();
  private readonly feedback = new EngineFeedback();
  private seq = 0;
  /** Events seq − (log.length − logStart) + 1 … seq are log[logStart…]; the dropped head is cut off in bulk. */
  private log: IndexEvent[] = [];
  private logStart = 0;
  private logBlocks = 0;

  constructor(
    readonly blockChars: number,
    readonly capacityBlocks: number,
    readonly epoch: string = randomBytes(8).toString('hex'),
    /** The secret the recorded block hashes were keyed with (only its public id is published). */
    readonly hashKey: StateHashKey = processStateHashKey(),
  ) {
    if (!Number.isInteger(capacityBlocks) || capacityBlocks < 1)
      throw new RangeError(`capacityBlocks must be a positive integer (got ${capacityBlocks})`);
    this.index = new InstancePrefixIndex(capacityBlocks);
  }

  /**
   * A request the instance was sent: its load ticket starts with the prompt tokens the index does not predict
   * cached (the whole prompt's match, never the last token). Its blocks are recorded once the caller says the
   * engine accepted it ('accepted': AdmittedRequest.accepted, what the routing core admits with; the live router
   * says so on a 2xx answer — a request the engine rejects put nothing in its cache and must not be published as if
   * it had), or at once ('now': a caller that knows the engine takes it, such as a benchmark filling an index).
   */
  admit(hashes: readonly RoutingBlockKey[], promptTokens: number, record: 'now' | 'accepted' = 'now'): AdmittedRequest {
    const priorRecency = this.index.recenciesOfMatch(hashes);
    const cached = Math.min(
      Math.floor((priorRecency.length * this.blockChars) / CHARS_PER_TOKEN),
      Math.max(0, promptTokens - 1),
    );
    const admitted = new AdmittedRequest(this, this.load.start(promptTokens - cached), hashes, {
      priorRecency,
      clockAtAdmission: this.clock.now,
    });
    if (record === 'now') admitted.accepted();
    return admitted;
  }

  /** The engine served `cachedTokens` of a request admitted as `admission`. */
  correct(hashes: readonly RoutingBlockKey[], admission: FeedbackAdmission, cachedTokens: number): void {
    const notNewerThan = this.feedback.correct(this.index, this.clock, admission, cachedTokens, this.blockChars);
    if (notNewerThan === undefined) return;
    this.append({ evictNotNewerThan: notNewerThan }, 0);
    this.recordBlocks(hashes);
  }

  /** Records (and publishes) a request's blocks; nothing for an empty list (load-only publishing). */
  recordBlocks(hashes: readonly RoutingBlockKey[]): void {
    if (hashes.length === 0) return;
    this.index.record(hashes, this.clock);
    this.append({ record: hashes }, hashes.length);
  }

  private append(event: IndexEvent, blocks: number): void {
    this.seq++;
    this.log.push(event);
    this.logBlocks += blocks;
    while (this.log.length - this.logStart > 1 && this.logBlocks > this.capacityBlocks) {
      const dropped = this.log[this.logStart++];
      if ('record' in dropped) this.logBlocks -= dropped.record.length;
    }
    // Amortized O(1): the array is compacted once its dropped head is as long as what is kept.
    if (this.logStart > 64 && this.logStart * 2 > this.log.length) {
      this.log = this.log.slice(this.logStart);
      this.logStart = 0;
    }
  }

  /** Changes so far (index events, requests started, first tokens, ends): equal versions mean nothing changed. */
  get version(): number {
    return this.seq + this.load.changes;
  }

  /** Blocks indexed now. */
  get indexedBlocks(): number {
    return this.index.size;
  }

  /** What an observer at (`epoch`, `since`) needs to catch up: the events after `since`, or a snapshot. */
  /**
   * Which answer updateSince gives for (epoch, since) at the current version: 'snapshot', or 'events:S' for the
   * events after S. Equal kinds at one version are equal answers, so a publisher can encode each once.
   */
  answerKind(epoch: string | undefined, since: number | undefined): string {
    return this.eventsAvailableSince(epoch, since) ? `events:${since}` : 'snapshot';
  }

  private eventsAvailableSince(epoch: string | undefined, since: number | undefined): since is number {
    const oldest = this.seq - (this.log.length - this.logStart);
    return (
      epoch === this.epoch && since !== undefined && Number.isInteger(since) && since >= oldest && since <= this.seq
    );
  }

  updateSince(epoch: string | undefined, since: number | undefined): InstanceStateUpdate {
    const base = {
      epoch: this.epoch,
      seq: this.seq,
      version: this.version,
      blockChars: this.blockChars,
      hashKeyId: this.hashKey.id,
      hashKeySource: this.hashKey.source,
      capacityBlocks: this.capacityBlocks,
      load: {
        inFlight: this.load.inFlight,
        queuedPrefillTokens: this.load.queuedPrefillTokens,
        decodeSequences: this.load.decodeSequences,
      },
    };
    if (this.eventsAvailableSince(epoch, since)) {
      return { ...base, events: this.log.slice(this.log.length - (this.seq - since)) };
    }
    const { hashes, recency } = this.index.export();
    return { ...base, snapshot: { clock: this.clock.now, hashes, recency } };
  }
}

/** A request admitted to an InstanceStateLog: its load ticket, and what the engine's feedback on it is checked against. */
export class AdmittedRequest {
  private corrected = false;
  private recorded = false;

  constructor(
    private readonly log: InstanceStateLog,
    readonly ticket: LoadTicket,
    private readonly hashes: readonly RoutingBlockKey[],
    private readonly admission: FeedbackAdmission,
  ) {}

  /** The engine accepted the request (a 2xx answer started): its blocks are recorded. Idempotent. */
  accepted(): void {
    if (this.recorded) return;
    this.recorded = true;
    this.log.recordBlocks(this.hashes);
  }

  /** The first token arrived: prefill done. Idempotent. */
  firstToken(): void {
    this.ticket.firstToken();
  }

  /** The request ended, however. Idempotent. */
  end(): void {
    this.ticket.end();
  }

  /** The engine reported `usage.prompt_tokens_details.cached_tokens` for it (at most once counts). */
  engineCached(cachedTokens: number): void {
    if (this.corrected || !this.recorded) return;
    this.corrected = true;
    this.log.correct(this.hashes, this.admission, cachedTokens);
  }
}

/**
 * An observer's copy of one instance's published state (the router side of InstanceStateLog): the same index,
 * rebuilt from snapshots and replayed events, and the load the instance last reported.
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
  match(hashes: readonly RoutingBlockKey[]): number {
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
      const events = update.events ?? [];
      if (this.index === undefined || update.epoch !== this.epoch || update.seq - events.length !== this.seq) {
        throw new RangeError(
          `instance-state update (epoch ${update.epoch}, seq ${update.seq}, ${events.length} events) does not follow on from epoch ${this.epoch}, seq ${this.seq}`,
        );
      }
      for (const event of events) {
        if ('record' in event) this.index.record(event.record, this.clock);
        else this.index.evictNotNewerThan(event.evictNotNewerThan);
      }
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
export function observedLoadOf(
  observed: InstanceLoadFigures,
  ownNow: InstanceLoadFigures,
  ownAtObservation: InstanceLoadFigures,
): InstanceLoadFigures {
  return {
    inFlight: Math.max(ownNow.inFlight, observed.inFlight + ownNow.inFlight - ownAtObservation.inFlight),
    queuedPrefillTokens: Math.max(
      ownNow.queuedPrefillTokens,
      observed.queuedPrefillTokens + ownNow.queuedPrefillTokens - ownAtObservation.queuedPrefillTokens,
    ),
    decodeSequences: Math.max(
      ownNow.decodeSequences,
      observed.decodeSequences + ownNow.decodeSequences - ownAtObservation.decodeSequences,
    ),
  };
}

/** A copy of a load's figures at one instant. */
export function loadFiguresOf(load: InstanceLoadFigures): InstanceLoadFigures {
  return {
    inFlight: load.inFlight,
    queuedPrefillTokens: load.queuedPrefillTokens,
    decodeSequences: load.decodeSequences,
  };
}
