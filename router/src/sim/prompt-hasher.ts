import { chatTemplateHeadChars } from '../emulator/chat-template';
import { SizeBoundedLru } from '../common/size-bounded-lru';
import { blockHashesAfter, CHARS_PER_TOKEN, tokenCount } from '../state/block-hash';
import { renderedPromptOf } from '../feed/workload-routing';
import type { WorkloadRequest } from '../workload/workload-request';

/** What the engine model and the ceilings need of a request's prompt. */
export interface PromptBlocks {
  /** Chained hashes of the rendered prompt's full blocks: `blockHashes(renderedPromptOf(request), { blockTokens })`. */
  readonly hashes: Float64Array;
  readonly promptTokens: number;
}

/** Blocks of shared heads remembered; 4 M blocks = 32 MB. */
const DEFAULT_MEMO_BLOCKS = 4_000_000;

/**
 * Block hashes of workload prompts, reusing the hashes of a shared head (`request.sharedHead`: a group's
 * document, a system prompt) instead of hashing those characters again for every request that repeats them.
 * A long-context prompt is 7,000 shared tokens and 1,000 own ones, so most of its hashing is skipped.
 *
 * Exact by construction: a block's hash depends only on the characters up to its end, and requests with the
 * same head key start with the same characters, so the head's full blocks hash the same in all of them.
 * The memo forgets least recently used heads beyond `maxMemoBlocks`; forgetting changes cost, never hashes.
 */
export class PromptHasher {
  private readonly blockChars: number;
  private readonly memo: SizeBoundedLru<string, Float64Array>;

  constructor(
    private readonly blockTokens: number,
    maxMemoBlocks = DEFAULT_MEMO_BLOCKS,
  ) {
    if (!Number.isInteger(blockTokens) || blockTokens < 1)
      throw new RangeError(`blockTokens must be a positive integer (got ${blockTokens})`);
    this.blockChars = blockTokens * CHARS_PER_TOKEN;
    this.memo = new SizeBoundedLru(maxMemoBlocks, (hashes) => hashes.length);
  }

  blocksOf(request: WorkloadRequest): PromptBlocks {
    const text = renderedPromptOf(request);
    const promptTokens = tokenCount(text);
    const head = request.sharedHead;
    const known = head === undefined ? undefined : this.memo.get(head.key);
    const hashes = blockHashesAfter(text, known ?? [], { blockTokens: this.blockTokens });
    if (head === undefined || known !== undefined) return { hashes, promptTokens };
    const limit = request.kind === 'chat' ? request.messages.length : request.prompt.length;
    if (!Number.isInteger(head.length) || head.length < 0 || head.length > limit) {
      throw new RangeError(
        `request ${request.id}: sharedHead.length must be an integer between 0 and ${limit} (got ${head.length})`,
      );
    }
    const headChars = request.kind === 'chat' ? chatTemplateHeadChars(request.messages, head.length) : head.length;
    const headBlocks = Math.floor(headChars / this.blockChars);
    // A copy, not a view: the request's own array goes to the engine (or to another thread).
    if (headBlocks > 0) this.memo.set(head.key, hashes.slice(0, headBlocks));
    return { hashes, promptTokens };
  }

  /** Heads remembered (for tests and diagnostics). */
  get memoSize(): number {
    return this.memo.count;
  }
}
