import type { BlockRemovedEvent, BlockStoredEvent, EngineBlockHash, KvEventBatch, KvEventSink } from './kv-event';
import type { PromptBlocks } from './prompt-blocks';
import { chainSeedOf, tokenBlockKeys, type TokenBlockKey } from './token-block-keys';

/** A stored block the index cannot match a request against (an unknown extra key): its descendants are not either. */
const UNMATCHABLE = -1;
/** LoRA adapter names remembered per engine (vLLM's --max-loras is far smaller): a publisher cannot grow the set without limit. */
const MAX_LORA_NAMES = 1024;

/** Blocks one KV cache group of an engine holds on its GPU. */
class GroupBlocks {
  /** Engine block hash → router chain key (or UNMATCHABLE), in the order stored: the oldest first. */
  readonly byEngineHash = new Map<EngineBlockHash, TokenBlockKey>();
  /** Router chain key → how many engine blocks carry it. */
  readonly keys = new Map<TokenBlockKey, number>();

  constructor(readonly blockSize: number) {}

  store(hash: EngineBlockHash, key: TokenBlockKey): void {
    this.remove(hash);
    this.byEngineHash.set(hash, key);
    if (key !== UNMATCHABLE) this.keys.set(key, (this.keys.get(key) ?? 0) + 1);
  }

  remove(hash: EngineBlockHash): boolean {
    const key = this.byEngineHash.get(hash);
    if (key === undefined) return false;
    this.byEngineHash.delete(hash);
    if (key === UNMATCHABLE) return true;
    const count = this.keys.get(key)! - 1;
    if (count === 0) this.keys.delete(key);
    else this.keys.set(key, count);
    return true;
  }

  /** Forgets the block stored longest ago. */
  removeOldest(): void {
    const oldest = this.byEngineHash.keys().next();
    if (oldest.done !== true) this.remove(oldest.value);
  }

  /** Leading blocks of `keys` this group holds. */
  matchOf(keys: readonly TokenBlockKey[]): number {
    let n = 0;
    while (n < keys.length && this.keys.has(keys[n])) n++;
    return n;
  }
}

interface EngineState {
  /** live: its account is complete since its stream began or was last cleared; stale: batches were lost. */
  status: 'live' | 'stale';
  staleReason?: string;
  readonly groups: Map<number, GroupBlocks>;
  /** LoRA adapters it stored blocks for: a request naming one is matched in that adapter's chain. */
  readonly loraNames: Set<string>;
  blocks: number;
}

/** What the index counts (Prometheus counters and the docs' figures). */
export interface EngineIndexCounters {
  /** Blocks dropped because an engine stored more than its bound without removing any (a misbehaving publisher). */
  overflowDrops: number;
  /** BlockStored events whose parent the index does not hold (stored before it subscribed, or evicted). */
  orphanStores: number;
  /** Events not on the GPU (a connector's CPU or disk tier): they never count for a hit. */
  otherMediumEvents: number;
  /** BlockStored events whose token ids do not fill their blocks (skipped). */
  malformedEvents: number;
  /** Batches for an engine that is not configured (skipped). */
  unknownEngineBatches: number;
}

export interface EngineKvIndexOptions {
  /** The engines whose events are applied (backend URLs); others are counted and skipped. */
  readonly engines: readonly string[];
  /**
   * Blocks kept per engine, all groups together: an engine's KV capacity in blocks, with room to spare. Past it the
   * oldest stored block is forgotten, so a publisher that stores without removing cannot grow memory without limit.
   */
  readonly maxBlocksPerEngine: number;
}

/** How the index sees an engine when asked about a request. */
export type EngineAccount =
  { readonly known: true; readonly cachedTokens: number } | { readonly known: false; readonly reason: string };

/**
 * What each engine says its prefix cache holds, from its KV cache events (KvEventSink): per engine and KV cache
 * group, the engine's block hashes mapped to the router's chain keys over the blocks' token ids
 * (token-block-keys.ts), so a request tokenized as the engine sees it (prompt-blocks.ts) is matched block by block.
 * Only GPU blocks count (a connector's CPU tier is not a prefix-cache hit for the scheduler); a block stored with
 * extra keys other than its LoRA adapter's name (cache_salt, multimodal hashes) is never matched, since the router
 * does not reproduce them. An engine with no batch yet, or whose stream lost batches (markStale), is unknown: the
 * caller falls back to its own estimate until AllBlocksCleared or a new stream (sequence 0) starts it afresh.
 */
export class EngineKvIndex implements KvEventSink {
  readonly counters: EngineIndexCounters = {
    overflowDrops: 0,
    orphanStores: 0,
    otherMediumEvents: 0,
    malformedEvents: 0,
    unknownEngineBatches: 0,
  };
  private readonly engines = new Map<string, EngineState | undefined>();

  constructor(private readonly options: EngineKvIndexOptions) {
    if (!Number.isInteger(options.maxBlocksPerEngine) || options.maxBlocksPerEngine < 1)
      throw new RangeError(`maxBlocksPerEngine must be an integer >= 1, got ${options.maxBlocksPerEngine}`);
    for (const engine of options.engines) this.engines.set(engine, undefined);
  }

  applyBatch(engine: string, batch: KvEventBatch): void {
    if (!this.engines.has(engine)) {
      this.counters.unknownEngineBatches++;
      return;
    }
    let state = this.engines.get(engine);
    // A new stream (the engine restarted): whatever was lost before, its cache started empty.
    if (state === undefined || (state.status === 'stale' && batch.seq === 0n)) state = this.reset(engine);
    for (const event of batch.events) {
      if (event.type === 'AllBlocksCleared') state = this.reset(engine);
      else if (state.status === 'stale') continue;
      else if (event.type === 'BlockStored') this.store(state, event);
      else this.remove(state, event);
    }
  }

  markStale(engine: string, reason: string): void {
    if (!this.engines.has(engine)) return;
    this.engines.set(engine, {
      status: 'stale',
      staleReason: reason,
      groups: new Map(),
      loraNames: new Set(),
      blocks: 0,
    });
  }

  /**
   * Tokens of the prompt's leading full blocks the engine holds in every KV cache group, as a prefix cache serves
   * them (never the prompt's last token: the engine recomputes it), or why the engine's account is unknown.
   */
  accountOf(engine: string, prompt: PromptBlocks, model: string): EngineAccount {
    const state = this.engines.get(engine);
    if (state === undefined) return { known: false, reason: this.engines.has(engine) ? 'no events yet' : 'no events' };
    if (state.status === 'stale') return { known: false, reason: state.staleReason ?? 'stale' };
    const lora = state.loraNames.has(model) ? model : undefined;
    let held = Infinity;
    for (const group of state.groups.values()) {
      const blocks = group.matchOf(prompt.keysOf(group.blockSize, lora));
      held = Math.min(held, prompt.servableTokens(blocks, group.blockSize));
    }
    return { known: true, cachedTokens: held === Infinity ? 0 : held };
  }

  /** Blocks indexed for `engine` (all groups), or undefined when unknown. */
  blocksOf(engine: string): number | undefined {
    const state = this.engines.get(engine);
    return state === undefined || state.status === 'stale' ? undefined : state.blocks;
  }

  private reset(engine: string): EngineState {
    const state: EngineState = { status: 'live', groups: new Map(), loraNames: new Set(), blocks: 0 };
    this.engines.set(engine, state);
    return state;
  }

  private store(state: EngineState, event: BlockStoredEvent): void {
    if (!onGpu(event.medium)) {
      this.counters.otherMediumEvents++;
      return;
    }
    const { blockHashes, tokenIds, blockSize } = event;
    if (!Number.isInteger(blockSize) || blockSize < 1 || tokenIds.length !== blockHashes.length * blockSize) {
      this.counters.malformedEvents++;
      return;
    }
    const group = this.groupOf(state, event.groupIdx ?? 0, blockSize);
    let parent = event.parentBlockHash === undefined ? undefined : group.byEngineHash.get(event.parentBlockHash);
    if (event.parentBlockHash !== undefined && parent === undefined) {
      this.counters.orphanStores++;
      return;
    }
    const lora = event.loraName;
    if (lora !== undefined && state.loraNames.size < MAX_LORA_NAMES) state.loraNames.add(lora);
    const keys = tokenBlockKeys(tokenIds, blockSize, parent ?? chainSeedOf(lora));
    for (let i = 0; i < blockHashes.length; i++) {
      parent = parent === UNMATCHABLE || !matchable(event.extraKeys?.[i], lora) ? UNMATCHABLE : keys[i];
      this.storeBlock(state, group, blockHashes[i], parent);
    }
  }

  private storeBlock(state: EngineState, group: GroupBlocks, hash: EngineBlockHash, key: TokenBlockKey): void {
    if (!group.byEngineHash.has(hash)) state.blocks++;
    group.store(hash, key);
    while (state.blocks > this.options.maxBlocksPerEngine) {
      largestGroupOf(state).removeOldest();
      state.blocks--;
      this.counters.overflowDrops++;
    }
  }

  private remove(state: EngineState, event: BlockRemovedEvent): void {
    if (!onGpu(event.medium)) {
      this.counters.otherMediumEvents++;
      return;
    }
    const group = state.groups.get(event.groupIdx ?? 0);
    if (group === undefined) return;
    for (const hash of event.blockHashes) if (group.remove(hash)) state.blocks--;
  }

  private groupOf(state: EngineState, index: number, blockSize: number): GroupBlocks {
    let group = state.groups.get(index);
    if (group === undefined || group.blockSize !== blockSize) {
      // A group's block size is fixed for an engine's life; a different one means a new engine behind the URL.
      if (group !== undefined) state.blocks -= group.byEngineHash.size;
      group = new GroupBlocks(blockSize);
      state.groups.set(index, group);
    }
    return group;
  }
}

/** True for the GPU tier (vLLM's `medium` is absent on engines older than the field, and "GPU" on newer ones). */
function onGpu(medium: string | undefined): boolean {
  return medium === undefined || medium.toUpperCase() === 'GPU';
}

/** A block is matchable when its extra keys are none or only its LoRA adapter's name (vLLM adds it to every block). */
function matchable(extraKeys: readonly unknown[] | null | undefined, lora: string | undefined): boolean {
  if (extraKeys === undefined || extraKeys === null) return true;
  return extraKeys.every((key) => key === lora && lora !== undefined);
}

/** The group holding the most blocks (never empty while the engine holds more than its bound). */
function largestGroupOf(state: EngineState): GroupBlocks {
  let largest: GroupBlocks | undefined;
  for (const group of state.groups.values())
    if (largest === undefined || group.byEngineHash.size > largest.byEngineHash.size) largest = group;
  return largest!;
}
