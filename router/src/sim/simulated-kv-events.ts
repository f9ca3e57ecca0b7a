/**
 * Engine truth in simulation (`simulate --kv-events on`): each engine model's cache changes become vLLM's KV cache
 * events (emulator/kv-event-recorder.ts: one batch per step, as vLLM's scheduler publishes them), delivered to every
 * router replica a fixed delay after the step that made them, each batch lost for a replica with a seeded
 * probability. A replica applies what reaches it by the live rules: the batch order of kv-event-sequence.ts (a gap
 * marks the engine stale until its stream restarts or clears, as serve's subscriber does without a replay socket)
 * and the engine index and views of core/engine-truth.ts that cache-aware reads.
 *
 * Token ids: the engine model hashes text, not tokens, so a block's ids here are its own chained hash (low and high
 * bits, then zeros). The router's chain over them (token-block-keys.ts) then tells prefixes apart exactly as the
 * engine's hash does, and a request's prompt blocks are the same ids cut from its hashes (simulatedPromptBlocks).
 */
import { SeededRng, type Rng } from '../common/seeded-rng';
import { EngineTruth } from '../core/engine-truth';
import type { CachedBlock, EngineCacheListener } from '../emulator/engine-model';
import { KvEventRecorder } from '../emulator/kv-event-recorder';
import type { KvCacheEvent, KvEventBatch } from '../kv-events/kv-event';
import { eventsAfterRestart, KvBatchOrder } from '../kv-events/kv-event-sequence';
import { PromptBlocks } from '../kv-events/prompt-blocks';
import type { EngineCacheView } from '../policy/routing-policy';
import type { RoutingRequest } from '../protocol/routing-request';
import type { BlockHash } from '../state/block-hash';

/** How the simulated routers hear the engines' KV events (SimulationConfig.kvEvents). */
export interface SimulatedKvEventSettings {
  /** Time from the end of the step that made a batch to its arrival at every router replica (ms). */
  readonly delayMs: number;
  /** Probability that a batch never reaches a replica (drawn per batch and replica from the run's seed), 0–1. */
  readonly lossRate: number;
}

export const KV_EVENTS_DELAY_RANGE_MS = { min: 0, max: 60_000 } as const;
export const KV_EVENTS_LOSS_RANGE = { min: 0, max: 1 } as const;

/** What the run's event delivery amounted to (SimulationResult.kvEvents). */
export interface KvEventStats {
  /** Batches the engines published. */
  readonly published: number;
  /** Batches lost, summed over replicas. */
  readonly lost: number;
  /** Times a replica marked an engine stale (a gap in its stream). */
  readonly staleMarks: number;
}

/** Throws a RangeError naming the field and its range when a setting is out of range. */
export function checkKvEventSettings(settings: SimulatedKvEventSettings): void {
  const { delayMs, lossRate } = settings;
  if (!(delayMs >= KV_EVENTS_DELAY_RANGE_MS.min && delayMs <= KV_EVENTS_DELAY_RANGE_MS.max))
    throw new RangeError(
      `kvEvents.delayMs must be between ${KV_EVENTS_DELAY_RANGE_MS.min} and ${KV_EVENTS_DELAY_RANGE_MS.max} (got ${delayMs})`,
    );
  if (!(lossRate >= KV_EVENTS_LOSS_RANGE.min && lossRate <= KV_EVENTS_LOSS_RANGE.max))
    throw new RangeError(
      `kvEvents.lossRate must be between ${KV_EVENTS_LOSS_RANGE.min} and ${KV_EVENTS_LOSS_RANGE.max} (got ${lossRate})`,
    );
}

const TWO_32 = 0x100000000;

/** Writes a block's simulated token ids (its hash's low and high 32 bits, then zeros) at `ids[at, at + blockTokens)`. */
function writeBlockIds(ids: { [i: number]: number }, at: number, hash: BlockHash): void {
  ids[at] = hash % TWO_32;
  ids[at + 1] = Math.floor(hash / TWO_32);
}

/** A cached block's simulated token ids (see the file comment). */
export function simulatedBlockTokenIds(blockTokens: number): (block: CachedBlock) => number[] {
  return (block) => {
    const ids = new Array<number>(blockTokens).fill(0);
    writeBlockIds(ids, 0, block.hash);
    return ids;
  };
}

/** A prompt's simulated token ids: its full blocks' ids from their hashes, `promptTokens` ids in all. */
export function simulatedPromptBlocks(
  hashes: ArrayLike<BlockHash>,
  promptTokens: number,
  blockTokens: number,
): PromptBlocks {
  const ids = new Float64Array(Math.max(promptTokens, hashes.length * blockTokens));
  for (let b = 0; b < hashes.length; b++) writeBlockIds(ids, b * blockTokens, hashes[b]);
  return new PromptBlocks(ids, true);
}

/** One engine's side: its cache changes gathered per step, numbered as one vLLM process numbers its batches. */
class EngineStream {
  readonly recorder: KvEventRecorder;
  private seq = 0n;
  private stepEndMs = 0;
  /** Batches on their way, oldest first (an engine's steps end in time order). */
  readonly inFlight: { readonly atMs: number; readonly batch: KvEventBatch }[] = [];
  published = 0;

  constructor(
    blockTokens: number,
    private readonly delayMs: number,
  ) {
    this.recorder = new KvEventRecorder(simulatedBlockTokenIds(blockTokens), blockTokens, (events) =>
      this.publish(events),
    );
  }

  /** The step that ended at `endMs` is over: what it changed leaves as one batch. */
  flush(endMs: number): void {
    this.stepEndMs = endMs;
    this.recorder.flush();
  }

  /** A new engine process: its batches are numbered from 0 again. */
  restarted(): void {
    this.seq = 0n;
  }

  private publish(events: readonly KvCacheEvent[]): void {
    const batch: KvEventBatch = { topic: '', seq: this.seq++, timestampSeconds: this.stepEndMs / 1000, events };
    this.inFlight.push({ atMs: this.stepEndMs + this.delayMs, batch });
    this.published++;
  }
}

/** One router replica's side: its subscriptions (batch order per engine, its own losses) and its engine truth. */
export class ReplicaKvReceiver {
  readonly truth: EngineTruth;
  private readonly orders: KvBatchOrder[];
  lost = 0;
  staleMarks = 0;

  constructor(
    private readonly engines: readonly string[],
    private readonly lossRate: number,
    private readonly rng: Rng,
    blocksOf: (request: RoutingRequest) => PromptBlocks | undefined,
  ) {
    this.truth = new EngineTruth(engines, blocksOf);
    this.orders = engines.map(() => new KvBatchOrder());
  }

  receive(engine: number, batch: KvEventBatch): void {
    if (this.lossRate > 0 && this.rng.next() < this.lossRate) {
      this.lost++;
      return;
    }
    const id = this.engines[engine];
    const order = this.orders[engine];
    const placement = order.place(batch.seq);
    if (placement.kind === 'duplicate') return;
    if (placement.kind === 'gap') {
      this.truth.markStale(id, placement.reason);
      this.staleMarks++;
    }
    order.applied(batch.seq);
    this.truth.applyBatch(
      id,
      placement.kind === 'restart' ? { ...batch, events: eventsAfterRestart(batch.events) } : batch,
    );
  }
}

/**
 * The fleet's KV event streams and each replica's receiver. The simulator calls `flush` after every engine step
 * (EngineModelOptions.onStep) and after every engine call that may change a cache, and `deliverUntil` before every
 * routing decision: batches due by then reach the replicas, in order per engine.
 */
export class SimulatedKvEvents {
  private readonly streams: EngineStream[];
  private readonly receivers: ReplicaKvReceiver[];
  /** The request being decided: the only one whose prompt blocks a view is asked for. */
  private deciding: { readonly routing: RoutingRequest; readonly blocks: () => PromptBlocks } | undefined;

  constructor(
    engines: readonly string[],
    replicas: number,
    blockTokens: number,
    settings: SimulatedKvEventSettings,
    seed: number,
  ) {
    checkKvEventSettings(settings);
    this.streams = engines.map(() => new EngineStream(blockTokens, settings.delayMs));
    const losses = new SeededRng(seed).fork('kv-event-loss');
    this.receivers = Array.from(
      { length: replicas },
      (_, r) =>
        new ReplicaKvReceiver(engines, settings.lossRate, losses.fork(`replica-${r}`), (request) =>
          this.deciding !== undefined && this.deciding.routing === request ? this.deciding.blocks() : undefined,
        ),
    );
  }

  /** What engine `index`'s cache listener is (its recorder). */
  listenerOf(index: number): EngineCacheListener {
    return this.streams[index].recorder;
  }

  flush(index: number, endMs: number): void {
    this.streams[index].flush(endMs);
  }

  /** Engine `index` is a new process: its batches are numbered from 0 again (flush what the old one made first). */
  restarted(index: number): void {
    this.streams[index].restarted();
  }

  /** Replica `replica`'s view of engine `id`, for its InstanceView.engineCache. */
  viewOf(replica: number, id: string): EngineCacheView | undefined {
    return this.receivers[replica].truth.viewOf(id);
  }

  /** The request about to be decided (its prompt's hashes and tokens): the views answer for it alone. */
  decide(routing: RoutingRequest, hashes: ArrayLike<BlockHash>, promptTokens: number, blockTokens: number): void {
    let blocks: PromptBlocks | undefined;
    this.deciding = {
      routing,
      blocks: () => (blocks ??= simulatedPromptBlocks(hashes, promptTokens, blockTokens)),
    };
  }

  /** Every batch due at or before `nowMs` reaches every replica (losses drawn per replica). */
  deliverUntil(nowMs: number): void {
    for (let e = 0; e < this.streams.length; e++) {
      const inFlight = this.streams[e].inFlight;
      let n = 0;
      while (n < inFlight.length && inFlight[n].atMs <= nowMs) {
        for (const receiver of this.receivers) receiver.receive(e, inFlight[n].batch);
        n++;
      }
      if (n > 0) inFlight.splice(0, n);
    }
  }

  stats(): KvEventStats {
    let lost = 0;
    let staleMarks = 0;
    for (const r of this.receivers) {
      lost += r.lost;
      staleMarks += r.staleMarks;
    }
    return { published: this.streams.reduce((n, s) => n + s.published, 0), lost, staleMarks };
  }
}
