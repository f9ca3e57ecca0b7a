import type { KvCacheEvent } from './kv-event';

/** Where a batch falls in an engine's stream, given the sequence expected next (vLLM numbers batches 0, 1, 2, …). */
export type BatchPlacement =
  /** The batch expected next, or the first one heard from a stream that starts at 0. */
  | { readonly kind: 'next' }
  /** Sequence 0 after later ones: a new engine process, whose cache started empty. */
  | { readonly kind: 'restart' }
  /** Already applied (a replayed batch the live stream also delivered): skipped. */
  | { readonly kind: 'duplicate' }
  /** Batches before it were lost (or published before the subscriber joined): the engine's index is stale. */
  | { readonly kind: 'gap'; readonly reason: string };

/**
 * One engine's batch order, the rule every consumer of a KV event stream follows (the ZeroMQ subscriber,
 * kv-event-subscriber.ts, and the simulator's delivery, sim/simulated-kv-events.ts): a duplicate is skipped, the
 * expected batch applied, a restart at 0 applied after an implicit clear, a later one opens a gap that (unless
 * replayed) marks the engine stale before the batch is applied.
 */
export class KvBatchOrder {
  /** The sequence the next applied batch must have; undefined before the first. */
  private expected: bigint | undefined;

  get expectedSequence(): bigint | undefined {
    return this.expected;
  }

  place(seq: bigint): BatchPlacement {
    const expected = this.expected;
    if (expected !== undefined && seq === 0n && expected > 0n) return { kind: 'restart' };
    if (expected !== undefined && seq < expected) return { kind: 'duplicate' };
    if (seq > (expected ?? 0n))
      return {
        kind: 'gap',
        reason:
          expected === undefined
            ? `joined at batch ${seq}: batches 0..${seq - 1n} were published before`
            : `lost batches ${expected}..${seq - 1n}`,
      };
    return { kind: 'next' };
  }

  /** Batch `seq` is being applied: the next one expected follows it. */
  applied(seq: bigint): void {
    this.expected = seq + 1n;
  }
}

/** A restarted stream's events: its cache started empty, so it says AllBlocksCleared first if the engine did not. */
export function eventsAfterRestart(events: readonly KvCacheEvent[]): KvCacheEvent[] {
  return events[0]?.type === 'AllBlocksCleared' ? [...events] : [{ type: 'AllBlocksCleared' }, ...events];
}
