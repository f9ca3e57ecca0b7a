/**
 * Test helpers for KV event streams on real ZeroMQ sockets (127.0.0.1, ephemeral ports): a sink that records what
 * it is told, a bounded wait, and an engine stand-in (XPUB: it knows when a subscriber has joined, so a test never
 * depends on ZeroMQ's slow-joiner timing).
 */
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { XPublisher } from 'zeromq';
import { encodeKvEventPayload } from '../../../router/src/kv-events/kv-event-codec';
import type { KvCacheEvent, KvEventBatch, KvEventSink } from '../../../router/src/kv-events/kv-event';
import { sequenceBytes } from '../../../router/src/kv-events/kv-event-publisher';

export class RecordingSink implements KvEventSink {
  readonly batches: KvEventBatch[] = [];
  readonly stale: string[] = [];

  applyBatch(engine: string, batch: KvEventBatch): void {
    expect(engine).toBe('engine-a');
    this.batches.push(batch);
  }

  markStale(engine: string, reason: string): void {
    expect(engine).toBe('engine-a');
    this.stale.push(reason);
  }

  get sequences(): number[] {
    return this.batches.map((batch) => Number(batch.seq));
  }
}

/** Polls `condition` every 10 ms, at most `limitMs`; throws naming `what` if it never holds. */
export async function waitFor(what: string, condition: () => boolean, limitMs = 5000): Promise<void> {
  for (let waited = 0; waited <= limitMs; waited += 10) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A pino logger writing JSON lines into `lines`. */
export function capturingLogger(lines: string[]): Logger {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done): void {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return pino({ level: 'info' }, stream);
}

/** An engine's PUB side, hand-driven: sends exactly the frames a test asks for. */
export class TestEngine {
  readonly socket = new XPublisher({ linger: 0 });
  endpoint = '';

  async bind(): Promise<void> {
    await this.socket.bind('tcp://127.0.0.1:0');
    this.endpoint = this.socket.lastEndpoint as string;
  }

  /** Waits for a subscription message (a subscriber has joined and its filter is in place). */
  async joined(): Promise<void> {
    await this.socket.receive();
  }

  async sendBatch(seq: number, events: readonly KvCacheEvent[], topic = ''): Promise<void> {
    const payload = encodeKvEventPayload({ timestampSeconds: 1, events }, { batch: 'map', events: 'map' });
    await this.socket.send([topic, sequenceBytes(BigInt(seq)), payload]);
  }

  close(): void {
    this.socket.close();
  }
}

export function stored(hash: string, tokens: number[]): KvCacheEvent {
  return { type: 'BlockStored', blockHashes: [hash], tokenIds: tokens, blockSize: tokens.length };
}
