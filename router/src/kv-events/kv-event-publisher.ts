/**
 * Publishes KV event batches the way vLLM's `ZmqEventPublisher` does (vllm/distributed/kv_events.py,
 * vllm-project/vllm@0181ea31; settings from vllm/config/kv_events.py): a PUB socket the engine binds, one
 * multipart message per batch `[topic, 8-byte big-endian sequence, msgpack payload]` with the sequence counting
 * from 0, the last `bufferSteps` payloads kept for replay, and an optional ROUTER socket that answers a request
 * `[identity, "", 8-byte start sequence]` with `[identity, "", seq, payload]` for every buffered batch from that
 * sequence on, then `[identity, "", -1, ""]`. The emulator publishes its cache through it; tests use it as an engine.
 */
import { checkKvEndpoint, type KvEndpointOptions } from './zmq-endpoint';
import { encodeKvEventPayload, type KvPayloadEncoding } from './kv-event-codec';
import type { KvCacheEvent } from './kv-event';
import { loadZeromq } from './zeromq-module';
import type { Publisher, Router } from 'zeromq';

/** vLLM's KVEventsConfig defaults. */
export const DEFAULT_KV_BUFFER_STEPS = 10_000;
export const DEFAULT_KV_HWM = 100_000;
/** The encoding current vLLM sends (maps tagged by "type", batch and events). */
export const DEFAULT_KV_PAYLOAD_ENCODING: KvPayloadEncoding = { batch: 'map', events: 'map' };
/** vLLM's end-of-replay marker: sequence -1 as 8 signed big-endian bytes, with an empty payload. */
export const REPLAY_END_SEQ = Buffer.from('ffffffffffffffff', 'hex');

export interface KvEventPublisherOptions extends KvEndpointOptions {
  /** Where the PUB socket binds, `tcp://127.0.0.1:PORT` (0 = a free port: read `endpoint` afterwards). */
  readonly endpoint: string;
  /** Where the ROUTER replay socket binds; none without it (vLLM's `replay_endpoint`). */
  readonly replayEndpoint?: string;
  /** Batches kept for replay (vLLM's `buffer_steps`), 1 or more; default 10,000. */
  readonly bufferSteps?: number;
  /** The PUB socket's send high-water mark (vLLM's `hwm`); default 100,000. */
  readonly hwm?: number;
  /** vLLM's `topic`; default "" (llm-d sets `kv@POD@MODEL`). */
  readonly topic?: string;
  readonly encoding?: KvPayloadEncoding;
  /** Written into every batch, as vLLM's publisher fills in its data-parallel rank; default 0. */
  readonly dataParallelRank?: number;
  /** Wall clock in seconds (the batch's `ts`); default Date.now() / 1000. */
  readonly nowSeconds?: () => number;
}

export function sequenceBytes(seq: bigint): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(seq);
  return bytes;
}

/** The last `capacity` (sequence, payload) pairs, oldest first (vLLM's `deque(maxlen=buffer_steps)`). */
class ReplayBuffer {
  private readonly seqs: bigint[] = [];
  private readonly payloads: Uint8Array[] = [];
  private start = 0;

  constructor(private readonly capacity: number) {}

  push(seq: bigint, payload: Uint8Array): void {
    if (this.seqs.length < this.capacity) {
      this.seqs.push(seq);
      this.payloads.push(payload);
      return;
    }
    this.seqs[this.start] = seq;
    this.payloads[this.start] = payload;
    this.start = (this.start + 1) % this.capacity;
  }

  /** Buffered pairs with a sequence ≥ `from`, oldest first (a copy: publishing may go on meanwhile). */
  from(from: bigint): [bigint, Uint8Array][] {
    const out: [bigint, Uint8Array][] = [];
    for (let i = 0; i < this.seqs.length; i++) {
      const at = (this.start + i) % this.seqs.length;
      if (this.seqs[at] >= from) out.push([this.seqs[at], this.payloads[at]]);
    }
    return out;
  }
}

export class KvEventPublisher {
  private nextSeq = 0n;
  private sending: Promise<void> = Promise.resolve();
  private replayLoop: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly topic: Buffer;
  private readonly encoding: KvPayloadEncoding;
  private readonly rank: number;
  private readonly nowSeconds: () => number;
  private readonly buffer: ReplayBuffer;
  /** Sends the PUB socket refused (counted, never thrown: a subscriber's gap recovers them by replay). */
  sendFailures = 0;

  private constructor(
    private readonly pub: Publisher,
    private readonly router: Router | undefined,
    /** The bound PUB endpoint (the real port when 0 was asked). */
    readonly endpoint: string,
    /** The bound replay endpoint, if any. */
    readonly replayEndpoint: string | undefined,
    options: KvEventPublisherOptions,
  ) {
    this.topic = Buffer.from(options.topic ?? '', 'utf8');
    this.encoding = options.encoding ?? DEFAULT_KV_PAYLOAD_ENCODING;
    this.rank = options.dataParallelRank ?? 0;
    this.nowSeconds = options.nowSeconds ?? (() => Date.now() / 1000);
    this.buffer = new ReplayBuffer(options.bufferSteps ?? DEFAULT_KV_BUFFER_STEPS);
    if (router !== undefined) this.replayLoop = this.serveReplays(router);
  }

  /** Binds the sockets; throws a RangeError for a bad option, or the socket's error when a port is taken. */
  static async bind(options: KvEventPublisherOptions): Promise<KvEventPublisher> {
    checkKvEndpoint('KV events endpoint', options.endpoint, options);
    if (options.replayEndpoint !== undefined)
      checkKvEndpoint('KV events replay endpoint', options.replayEndpoint, options);
    const bufferSteps = options.bufferSteps ?? DEFAULT_KV_BUFFER_STEPS;
    if (!Number.isSafeInteger(bufferSteps) || bufferSteps < 1)
      throw new RangeError(`KV events bufferSteps must be an integer >= 1, got ${String(bufferSteps)}`);
    const hwm = options.hwm ?? DEFAULT_KV_HWM;
    if (!Number.isSafeInteger(hwm) || hwm < 1)
      throw new RangeError(`KV events hwm must be an integer >= 1, got ${hwm}`);
    const zmq = await loadZeromq();
    const pub = new zmq.Publisher({ sendHighWaterMark: hwm, linger: 0 });
    let router: Router | undefined;
    try {
      await pub.bind(options.endpoint);
      if (options.replayEndpoint !== undefined) {
        router = new zmq.Router({ linger: 0 });
        await router.bind(options.replayEndpoint);
      }
    } catch (err) {
      pub.close();
      router?.close();
      throw err;
    }
    return new KvEventPublisher(
      pub,
      router,
      pub.lastEndpoint ?? options.endpoint,
      router?.lastEndpoint ?? undefined,
      options,
    );
  }

  /** Publishes one batch (one engine step's events) and returns its sequence number. */
  publish(events: readonly KvCacheEvent[]): bigint {
    if (this.closed) throw new Error('KV event publisher is closed');
    const seq = this.nextSeq++;
    const payload = encodeKvEventPayload(
      { timestampSeconds: this.nowSeconds(), events, dataParallelRank: this.rank },
      this.encoding,
    );
    this.buffer.push(seq, payload);
    const frames = [this.topic, sequenceBytes(seq), payload];
    // zeromq.js allows one send in flight per socket: batches go out in order, one after the other.
    this.sending = this.sending.then(
      () => this.pub.send(frames),
      () => undefined,
    );
    this.sending = this.sending.catch(() => {
      this.sendFailures++;
    });
    return seq;
  }

  /** The sequence the next batch gets. */
  get sequence(): bigint {
    return this.nextSeq;
  }

  /** Waits for queued sends, then closes both sockets (idempotent). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.sending;
    this.pub.close();
    this.router?.close();
    await this.replayLoop;
  }

  /** vLLM's `_service_replay`, one request at a time; a malformed request is ignored, as vLLM logs and skips it. */
  private async serveReplays(router: Router): Promise<void> {
    try {
      for await (const frames of router) {
        if (frames.length !== 3 || frames[1].length !== 0 || frames[2].length !== 8) continue;
        const [identity] = frames;
        for (const [seq, payload] of this.buffer.from(frames[2].readBigUInt64BE()))
          await router.send([identity, '', sequenceBytes(seq), payload]);
        await router.send([identity, '', REPLAY_END_SEQ, '']);
      }
    } catch {
      // The socket closed under the loop (close()) or the peer went away mid-reply: nothing more to serve.
    }
  }
}
