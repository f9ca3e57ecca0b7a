/**
 * Reads one engine's KV event stream (vLLM's ZmqEventPublisher, vllm/distributed/kv_events.py at
 * vllm-project/vllm@0181ea31) and hands its batches, in sequence order, to a KvEventSink.
 *
 * - A SUB socket connects to the engine's endpoint (the engine binds) with the engine's topic (vLLM's default "";
 *   llm-d's `kv@POD@MODEL`; a non-empty topic must match exactly, not only as ZeroMQ's prefix).
 * - Each message is `[topic, 8-byte big-endian sequence, msgpack payload]`, decoded in the socket's loop.
 * - A sequence gap (lost batches, or joining an engine that already published) is repaired through the replay
 *   socket when one is configured: a DEALER sends `["", start sequence]` to vLLM's ROUTER and reads `["", seq,
 *   payload]` until seq -1 (`_service_replay`); what the live stream delivers meanwhile is held, and batches both
 *   paths deliver are applied once. Without replay, or when replay fails, times out or no longer holds the missing
 *   batches, the sink is told the engine is stale; a batch with AllBlocksCleared, or a sequence restarting at 0
 *   (a new engine process, whose cache is empty), makes it whole again.
 * - A malformed message or an undecodable payload is counted (`prefix_router_kv_events_dropped_total{engine,
 *   reason}`) and logged at most once per interval, naming the engine, never the payload (token ids are prompts);
 *   a dropped batch with a readable sequence loses its events, so the engine is stale until a resync. Unknown
 *   event types inside a good batch are counted and skipped; the rest of the batch applies.
 */
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Dealer, Subscriber } from 'zeromq';
import { decodeKvEventPayload } from './kv-event-codec';
import type { KvCacheEvent, KvEventBatch, KvEventSink } from './kv-event';
import { REPLAY_END_SEQ, sequenceBytes } from './kv-event-publisher';
import { eventsAfterRestart, KvBatchOrder } from './kv-event-sequence';
import { checkKvEndpoint, type KvEndpointOptions } from './zmq-endpoint';
import { loadZeromq } from './zeromq-module';

export interface KvEventSubscriberOptions extends KvEndpointOptions {
  /** The engine's name in sink calls, metrics and logs (its backend URL, say). */
  readonly engine: string;
  /** The engine's PUB endpoint, `tcp://127.0.0.1:5557`. */
  readonly endpoint: string;
  /** The engine's replay (ROUTER) endpoint; without it a gap marks the engine stale. */
  readonly replayEndpoint?: string;
  /** Topic the engine publishes on; default "" (every message). */
  readonly topic?: string;
  readonly sink: KvEventSink;
  /** Where the drop and gap counters live (shared by every engine's subscriber). */
  readonly registry: Registry;
  readonly logger: Logger;
  /** Longest wait for each replay message, and for the whole replay 10 times that; default 2,000 ms. */
  readonly replayTimeoutMs?: number;
  /** Live batches held while a replay runs, at most; beyond, the replay is abandoned (stale). Default 10,000. */
  readonly maxHeldBatches?: number;
  /** At most one warning per engine per this interval (the others are counted in it); default 10,000 ms. */
  readonly logIntervalMs?: number;
}

/** Why a message was not applied (a closed set: a label of the dropped counter). */
export type KvDropReason =
  'malformed-frame' | 'topic' | 'undecodable' | 'bad-batch' | 'bad-event' | 'unknown-event' | 'replay-failed';

const DEFAULT_REPLAY_TIMEOUT_MS = 2000;
const DEFAULT_MAX_HELD = 10_000;
const DEFAULT_LOG_INTERVAL_MS = 10_000;

interface Metrics {
  readonly dropped: Counter<'engine' | 'reason'>;
  readonly gaps: Counter<'engine' | 'outcome'>;
  readonly batches: Counter<'engine'>;
}

/** The counters, registered once per registry (every engine's subscriber shares them). */
function metricsOn(registry: Registry): Metrics {
  const existing = (name: string): Counter<string> | undefined =>
    registry.getSingleMetric(name) as Counter<string> | undefined;
  return {
    dropped:
      existing('prefix_router_kv_events_dropped_total') ??
      new Counter({
        name: 'prefix_router_kv_events_dropped_total',
        help: 'KV event messages or events not applied, by engine and reason (malformed frame, undecodable payload, unknown event, ...)',
        labelNames: ['engine', 'reason'],
        registers: [registry],
      }),
    gaps:
      existing('prefix_router_kv_events_gaps_total') ??
      new Counter({
        name: 'prefix_router_kv_events_gaps_total',
        help: 'KV event sequence gaps by engine and outcome: replayed (repaired) or stale (the engine index fell back to the estimate)',
        labelNames: ['engine', 'outcome'],
        registers: [registry],
      }),
    batches:
      existing('prefix_router_kv_event_batches_total') ??
      new Counter({
        name: 'prefix_router_kv_event_batches_total',
        help: 'KV event batches applied to the engine index, by engine',
        labelNames: ['engine'],
        registers: [registry],
      }),
  };
}

/** A frame's sequence, or undefined when it is not 8 bytes. */
function sequenceOf(frame: Buffer): bigint | undefined {
  return frame.length === 8 ? frame.readBigUInt64BE() : undefined;
}

export class KvEventSubscriber {
  readonly engine: string;
  private readonly metrics: Metrics;
  /** The stream's batch order: the sequence the next applied batch must have. */
  private readonly order = new KvBatchOrder();
  private stale = false;
  private replaying = false;
  private held: [bigint, Buffer][] = [];
  private closed = false;
  private readonly loop: Promise<void>;
  private replayDone: Promise<void> = Promise.resolve();
  private lastLogMs = -Infinity;
  private unlogged = 0;
  private dealer: Dealer | undefined;

  private constructor(
    private readonly options: KvEventSubscriberOptions,
    private readonly socket: Subscriber,
    private readonly zmq: Awaited<ReturnType<typeof loadZeromq>>,
  ) {
    this.engine = options.engine;
    this.metrics = metricsOn(options.registry);
    this.loop = this.receive();
  }

  /** Connects to the engine (ZeroMQ retries until the engine binds); throws a RangeError for a bad option. */
  static async connect(options: KvEventSubscriberOptions): Promise<KvEventSubscriber> {
    checkKvEndpoint(`KV events endpoint of ${options.engine}`, options.endpoint, options);
    if (options.replayEndpoint !== undefined)
      checkKvEndpoint(`KV events replay endpoint of ${options.engine}`, options.replayEndpoint, options);
    for (const [name, value] of [
      ['replayTimeoutMs', options.replayTimeoutMs],
      ['maxHeldBatches', options.maxHeldBatches],
      ['logIntervalMs', options.logIntervalMs],
    ] as const) {
      if (value !== undefined && (!Number.isSafeInteger(value) || value < 1))
        throw new RangeError(`KV event subscriber ${name} must be an integer >= 1, got ${String(value)}`);
    }
    const zmq = await loadZeromq();
    const socket = new zmq.Subscriber({ linger: 0 });
    socket.connect(options.endpoint);
    socket.subscribe(options.topic ?? '');
    return new KvEventSubscriber(options, socket, zmq);
  }

  /** Whether batches were lost since the last resync (the sink was told). */
  get isStale(): boolean {
    return this.stale;
  }

  /** The next sequence expected, or undefined before the first batch. */
  get expectedSequence(): bigint | undefined {
    return this.order.expectedSequence;
  }

  /** Closes the sockets (idempotent); the sink hears nothing afterwards. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.socket.close();
    this.dealer?.close();
    this.dealer = undefined;
    await this.loop;
    await this.replayDone;
  }

  private async receive(): Promise<void> {
    try {
      for await (const frames of this.socket) this.onMessage(frames);
    } catch (err) {
      if (!this.closed) this.options.logger.error({ engine: this.engine, err }, 'KV event subscriber stopped');
    }
  }

  private onMessage(frames: Buffer[]): void {
    if (frames.length !== 3) return this.drop('malformed-frame', `${frames.length} frames, expected 3`);
    const seq = sequenceOf(frames[1]);
    if (seq === undefined) return this.drop('malformed-frame', `a ${frames[1].length}-byte sequence, expected 8`);
    const topic = this.options.topic ?? '';
    if (topic !== '' && frames[0].toString('utf8') !== topic) return this.drop('topic', 'another topic');
    if (this.replaying) {
      // Held until the replay ends; too many, and the replay is given up (what it would have filled is stale).
      if (this.held.length >= (this.options.maxHeldBatches ?? DEFAULT_MAX_HELD)) this.abandonReplay();
      this.held.push([seq, frames[2]]);
      return;
    }
    this.accept(seq, frames[2], true);
  }

  /**
   * Places one batch in the sequence: a duplicate is skipped, the expected one applied, a restart at 0 applied
   * after an implicit clear, a later one opens a gap (replayed when `mayReplay` and an endpoint is configured).
   */
  private accept(seq: bigint, payload: Buffer, mayReplay: boolean): void {
    const placement = this.order.place(seq);
    if (placement.kind === 'duplicate') return;
    if (placement.kind === 'gap') {
      if (mayReplay && this.options.replayEndpoint !== undefined) {
        this.held.push([seq, payload]);
        this.startReplay(this.order.expectedSequence ?? 0n);
        return;
      }
      this.markStale(placement.reason);
    }
    this.apply(seq, payload, placement.kind === 'restart');
  }

  private apply(seq: bigint, payload: Buffer, restarted: boolean): void {
    this.order.applied(seq);
    const decoded = decodeKvEventPayload(payload);
    if (!decoded.ok) {
      this.drop(decoded.reason, decoded.detail);
      this.markStale(`batch ${seq} could not be decoded`);
      return;
    }
    for (const skipped of decoded.skipped) this.drop('unknown-event', skipped);
    const events: KvCacheEvent[] = restarted ? eventsAfterRestart(decoded.payload.events) : [...decoded.payload.events];
    if (events.some((event) => event.type === 'AllBlocksCleared')) this.stale = false;
    const batch: KvEventBatch = { topic: this.options.topic ?? '', seq, ...decoded.payload, events };
    this.metrics.batches.inc({ engine: this.engine });
    this.options.sink.applyBatch(this.engine, batch);
  }

  private markStale(reason: string): void {
    this.stale = true;
    this.metrics.gaps.inc({ engine: this.engine, outcome: 'stale' });
    this.warn(`engine KV events are stale: ${reason}`);
    this.options.sink.markStale(this.engine, reason);
  }

  private startReplay(from: bigint): void {
    this.replaying = true;
    this.replayDone = this.replay(from).then(
      (repaired) => this.endReplay(repaired),
      () => this.endReplay(false),
    );
  }

  /** Too many live batches arrived while replaying: stop holding them, the replay's outcome no longer matters. */
  private abandonReplay(): void {
    this.dealer?.close();
    this.dealer = undefined;
  }

  /** Asks the replay socket for every batch from `from` on; true when the gap it was called for is filled. */
  private async replay(from: bigint): Promise<boolean> {
    const timeoutMs = this.options.replayTimeoutMs ?? DEFAULT_REPLAY_TIMEOUT_MS;
    const dealer = new this.zmq.Dealer({ linger: 0, receiveTimeout: timeoutMs, sendTimeout: timeoutMs });
    this.dealer = dealer;
    dealer.connect(this.options.replayEndpoint as string);
    const deadline = Date.now() + 10 * timeoutMs;
    try {
      await dealer.send(['', sequenceBytes(from)]);
      for (;;) {
        const frames = await dealer.receive();
        if (this.closed || Date.now() > deadline) return false;
        if (frames.length !== 3 || frames[0].length !== 0) return false;
        if (frames[1].equals(REPLAY_END_SEQ)) return true;
        const seq = sequenceOf(frames[1]);
        if (seq === undefined) return false;
        // In order from `from`; if the buffer no longer reaches back that far, accept marks the rest lost (stale).
        this.accept(seq, frames[2], false);
      }
    } finally {
      dealer.close();
      if (this.dealer === dealer) this.dealer = undefined;
    }
  }

  /** Applies the held live batches after a replay; a gap still open (replay failed or fell short) is stale. */
  private endReplay(answered: boolean): void {
    this.replaying = false;
    const held = this.held;
    this.held = [];
    if (this.closed) return;
    if (!answered) this.drop('replay-failed', 'the replay socket did not answer in time');
    held.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const first = held[0]?.[0];
    const expected = this.order.expectedSequence;
    if (answered && first !== undefined && expected !== undefined && first <= expected)
      this.metrics.gaps.inc({ engine: this.engine, outcome: 'replayed' });
    for (const [seq, payload] of held) this.accept(seq, payload, false);
  }

  private drop(reason: KvDropReason, detail: string): void {
    this.metrics.dropped.inc({ engine: this.engine, reason });
    this.warn(`KV event message skipped (${reason}): ${detail}`);
  }

  /** One warning per interval per engine; the ones in between are counted into the next. */
  private warn(message: string): void {
    const now = Date.now();
    if (now - this.lastLogMs < (this.options.logIntervalMs ?? DEFAULT_LOG_INTERVAL_MS)) {
      this.unlogged++;
      return;
    }
    this.options.logger.warn({ engine: this.engine, suppressed: this.unlogged }, message);
    this.lastLogMs = now;
    this.unlogged = 0;
  }
}
