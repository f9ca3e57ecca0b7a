import { chainSeedOf, tokenBlockKeys, type TokenBlockKey } from './token-block-keys';

/**
 * A request's prompt as token ids the engine would see (request-tokenizer.ts), cut into full blocks on demand: the
 * chain keys for each block size and LoRA adapter an engine index asks for are computed once per request.
 */
export class PromptBlocks {
  private readonly keys = new Map<string, TokenBlockKey[]>();

  constructor(
    /** The prompt's token ids, or its leading part when `complete` is false. */
    readonly tokenIds: ArrayLike<number>,
    /** True when `tokenIds` is the whole prompt; false when it is a prefix (the prompt has more tokens after it). */
    readonly complete: boolean,
  ) {}

  /** Chain keys of the full blocks of `blockSize` tokens, in `lora`'s chain (undefined: the base model). */
  keysOf(blockSize: number, lora: string | undefined): readonly TokenBlockKey[] {
    const id = lora === undefined ? `${blockSize}` : `${blockSize}:${lora}`;
    let keys = this.keys.get(id);
    if (keys === undefined) {
      keys = tokenBlockKeys(this.tokenIds, blockSize, chainSeedOf(lora));
      this.keys.set(id, keys);
    }
    return keys;
  }

  /**
   * Tokens a prefix cache serves when the first `blocks` blocks of `blockSize` are held: whole blocks, never the
   * prompt's last token (vLLM recomputes it for its logits: the hit stops at `num_tokens - 1`).
   */
  servableTokens(blocks: number, blockSize: number): number {
    const held = blocks * blockSize;
    if (!this.complete) return held;
    return Math.max(0, Math.min(held, Math.floor((this.tokenIds.length - 1) / blockSize) * blockSize));
  }
}
