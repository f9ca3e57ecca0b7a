/**
 * Turns the emulated engine's cache changes into vLLM's KV cache events, one batch per engine step, as vLLM's
 * scheduler takes its block pool's events once per step (vllm/v1/core/block_pool.py at
 * vllm-project/vllm@002f3491: `cache_full_blocks` appends one BlockStored for the blocks one request completed,
 * eviction one BlockRemoved per block, `reset_prefix_cache` an AllBlocksCleared).
 *
 * - Block hashes are the engine model's own (state/block-hash.ts): each chains its parent's, and the request's
 *   LoRA adapter and cache_salt seed the chain, so one hash names one prefix, as vLLM's do. Sent as ints.
 * - Token ids are the emulator's (emulator-tokens.ts), the ids its /tokenize returns for the prompt, then one id
 *   per generated word, so a router that tokenizes with the emulator's /tokenize finds the same blocks.
 * - `extra_keys` per block as vLLM builds them (`generate_block_hash_extra_keys`): the adapter's name on every
 *   block, the cache_salt on a prompt's first block; absent when no block has any.
 */
import type { AllBlocksClearedEvent, BlockRemovedEvent, KvCacheEvent } from '../kv-events/kv-event';
import type { BlockHash } from '../state/block-hash';
import { CHARS_PER_TOKEN } from '../state/block-hash';
import type { CachedBlock, EngineCacheListener } from './engine-model';
import type { EmulatorTokenizer } from './emulator-tokens';
import { outputToken } from './output-text';

/** vLLM's MEDIUM_GPU: where the emulated engine keeps every block. */
const MEDIUM_GPU = 'GPU';

/** A BlockStored still growing within the step (one request's consecutive blocks). */
interface OpenStored {
  readonly type: 'BlockStored';
  readonly blockHashes: string[];
  readonly parentBlockHash?: string;
  readonly tokenIds: number[];
  readonly blockSize: number;
  readonly medium: string;
  readonly loraName?: string;
  readonly extraKeys: (string[] | null)[];
}

type PendingEvent = OpenStored | BlockRemovedEvent | AllBlocksClearedEvent;

/** A cached block's token ids as its engine publishes them, or undefined when they cannot be named (the block is left out). */
export type BlockTokenIds = (block: CachedBlock) => readonly number[] | undefined;

/** The emulator's token ids of a block: its prompt tokens as /tokenize gives them, then one id per generated word. */
export function emulatorBlockTokenIds(tokenizer: EmulatorTokenizer, blockTokens: number): BlockTokenIds {
  return (block) => {
    const prompt = block.promptText;
    if (prompt === undefined) return undefined;
    const ids: number[] = [];
    try {
      for (let t = block.firstToken; t < block.firstToken + blockTokens; t++) {
        const chunk =
          t < block.promptTokens
            ? prompt.slice(t * CHARS_PER_TOKEN, (t + 1) * CHARS_PER_TOKEN)
            : outputToken(t - block.promptTokens);
        ids.push(tokenizer.tokenize(chunk)[0]);
      }
    } catch {
      return undefined;
    }
    return ids;
  };
}

export class KvEventRecorder implements EngineCacheListener {
  private pending: PendingEvent[] = [];
  /** Hash of the last block of the open BlockStored (the next block of the same request chains from it). */
  private openTail: BlockHash | undefined;
  /** Blocks left out because their tokens could not be named (the emulator's non-ASCII vocabulary is full). */
  unnamedBlocks = 0;

  constructor(
    /** Names a block's token ids: the emulator's (emulatorBlockTokenIds), or the simulator's (sim/simulated-kv-events.ts). */
    private readonly tokensOf: BlockTokenIds,
    private readonly blockTokens: number,
    private readonly publish: (events: readonly KvCacheEvent[]) => void,
  ) {}

  stored(block: CachedBlock): void {
    const tokens = this.tokensOf(block);
    if (tokens === undefined) {
      this.unnamedBlocks++;
      return;
    }
    const keys: string[] = [];
    if (block.loraName !== undefined) keys.push(block.loraName);
    if (block.cacheSalt !== undefined && block.firstToken === 0) keys.push(block.cacheSalt);
    const last = this.pending[this.pending.length - 1];
    const continues =
      last?.type === 'BlockStored' &&
      block.parentHash !== undefined &&
      this.openTail === block.parentHash &&
      last.loraName === block.loraName;
    const open: OpenStored = continues
      ? last
      : {
          type: 'BlockStored',
          blockHashes: [],
          ...(block.parentHash === undefined ? {} : { parentBlockHash: String(block.parentHash) }),
          tokenIds: [],
          blockSize: this.blockTokens,
          medium: MEDIUM_GPU,
          ...(block.loraName === undefined ? {} : { loraName: block.loraName }),
          extraKeys: [],
        };
    if (!continues) this.pending.push(open);
    open.blockHashes.push(String(block.hash));
    for (const id of tokens) open.tokenIds.push(id);
    open.extraKeys.push(keys.length > 0 ? keys : null);
    this.openTail = block.hash;
  }

  evicted(hash: BlockHash): void {
    this.pending.push({ type: 'BlockRemoved', blockHashes: [String(hash)], medium: MEDIUM_GPU });
  }

  /** The cache was emptied (the engine started, or its prefix cache was reset). */
  cleared(): void {
    this.pending.push({ type: 'AllBlocksCleared' });
  }

  /** Publishes what the step gathered as one batch (nothing when it gathered nothing, as vLLM). */
  flush(): void {
    if (this.pending.length === 0) return;
    const events = this.pending.map((event): KvCacheEvent => {
      if (event.type !== 'BlockStored') return event;
      const { extraKeys, ...rest } = event;
      return extraKeys.some((keys) => keys !== null) ? { ...rest, extraKeys } : rest;
    });
    this.pending = [];
    this.openTail = undefined;
    this.publish(events);
  }
}
