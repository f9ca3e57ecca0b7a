/**
 * The token and block model shared by the emulator, the simulator and cache-aware routing.
 *
 * We never run a tokenizer: 1 token = 4 characters of the (rendered) prompt text. A prompt is cut into blocks
 * of `blockTokens` tokens; each block's hash chains the previous block's hash, so two prompts share a block
 * hash only if they share every character up to the end of that block (vLLM's prefix-cache rule). Only full
 * blocks get a hash.
 */
/** Characters per token: the project's one token estimate (1 token = 4 characters of prompt text). */
export const CHARS_PER_TOKEN = 4;
/** vLLM's default KV-cache block size in tokens (`--block-size 16`). */
export const DEFAULT_BLOCK_TOKENS = 16;

/** A block hash: a 53-bit non-negative integer, safe as a Map key and in JSON. */
export type BlockHash = number;

/** Tokens a text counts for: a trailing partial group of characters is still a token. */
export function tokenCount(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export interface BlockHashOptions {
  /** Tokens per block (default 16, vLLM's default block size). */
  readonly blockTokens?: number;
  /** Mixed into the first block, e.g. model name and tenant key, so different namespaces never share blocks. */
  readonly seed?: string;
  /** Stop after this many blocks (routing only needs a bounded prefix). */
  readonly maxBlocks?: number;
}

// Read once: Jest runs tests in a vm context where a global lookup inside a hot loop is many times slower.
const imul = Math.imul;

const FNV_OFFSET_A = 0x811c9dc5;
const FNV_OFFSET_B = 0x9747b28c;

/** Two independent 32-bit hashes of `text[start, end)` continued from (a, b); combined into 53 bits. */
function hashRange(text: string, start: number, end: number, a: number, b: number): BlockHash {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    a = imul(a ^ c, 0x01000193);
    b = imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return finishLanes(a, b);
}

/** The 53-bit value two FNV-style 32-bit lanes finish to (murmur-style avalanche on each, then 32 + 21 bits). */
export function finishLanes(a: number, b: number): number {
  a ^= a >>> 16;
  a = imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b = imul(b, 0xc2b2ae35);
  b ^= b >>> 16;
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

function seedPair(seed: string | undefined): [number, number] {
  if (!seed) return [FNV_OFFSET_A, FNV_OFFSET_B];
  const h = hashRange(seed, 0, seed.length, FNV_OFFSET_A, FNV_OFFSET_B);
  return [(h % 0x100000000) >>> 0, Math.floor(h / 0x100000000) >>> 0];
}

/**
 * Chained hashes of every full block of `text`: it is cut into blocks of `blockTokens` tokens, and each block's
 * hash chains the previous block's, so block i's hash depends on blocks 0..i (and the seed) and two prompts share
 * a block hash only if they share every character up to the end of that block (vLLM's prefix-cache rule). Only
 * full blocks get a hash.
 */
export function blockHashes(text: string, options: BlockHashOptions = {}): BlockHash[] {
  const [a, b] = seedPair(options.seed);
  return chainHashes(text, a, b, blockCharsOf(options), options.maxBlocks);
}

/**
 * blockHashes with blocks of `blockChars` characters, whole tokens or not, as a Float64Array: the same chained
 * 53-bit hash, for a router-side table whose block size is set in characters (aibrix-prefix-cache's 4-character
 * blocks, where a keyed MAC per block would cost more than the rest of the decision).
 */
export function characterBlockHashes(text: string, blockChars: number, seed: string): Float64Array {
  const [a, b] = seedPair(seed);
  return chainHashes(text, a, b, blockChars, undefined, 0, new Float64Array(Math.floor(text.length / blockChars)));
}

/** The chain state a block's successor starts from. */
function chainState(h: BlockHash): [number, number] {
  return [(h % 0x100000000) >>> 0, (Math.floor(h / 0x100000000) ^ 0x27d4eb2f) >>> 0];
}

/** Characters per block of a BlockHashOptions. */
function blockCharsOf(options: BlockHashOptions): number {
  return (options.blockTokens ?? DEFAULT_BLOCK_TOKENS) * CHARS_PER_TOKEN;
}

function chainHashes<T extends BlockHash[] | Float64Array = BlockHash[]>(
  text: string,
  a: number,
  b: number,
  blockChars: number,
  maxBlocks: number | undefined,
  startChar = 0,
  into?: T,
  at = 0,
): T {
  const fullBlocks = Math.floor((text.length - startChar) / blockChars);
  const count = maxBlocks === undefined ? fullBlocks : Math.max(0, Math.min(fullBlocks, maxBlocks));
  const hashes = into ?? (new Array<BlockHash>(count) as T);
  for (let i = 0; i < count; i++) {
    const from = startChar + i * blockChars;
    const h = hashRange(text, from, from + blockChars, a, b);
    hashes[at + i] = h;
    // Chain: the next block starts from this block's hash (chainState, inlined: no allocation per block).
    a = (h % 0x100000000) >>> 0;
    b = (Math.floor(h / 0x100000000) ^ 0x27d4eb2f) >>> 0;
  }
  return hashes;
}

/**
 * Tokens of a `promptTokens`-token prompt that a prefix cache can serve when its first `matchedBlocks` blocks
 * are cached: whole blocks only, and never the last prompt token (vLLM always recomputes it to get logits).
 */
export function cacheableHitTokens(
  matchedBlocks: number,
  promptTokens: number,
  blockTokens = DEFAULT_BLOCK_TOKENS,
): number {
  if (promptTokens <= 0) return 0;
  const limit = Math.floor((promptTokens - 1) / blockTokens);
  return Math.min(matchedBlocks, limit) * blockTokens;
}

/**
 * Continues a chain: the hashes of every full block of `text` when `text` starts right after a block whose
 * hash is `previousHash` (undefined: `text` starts the chain, so `options.seed` applies). With
 * `t = a + b` and `a.length` a multiple of the block size,
 * `continueBlockHashes(b, last(blockHashes(a)))` equals `blockHashes(t).slice(blockHashes(a).length)`.
 * The engine model uses it to hash the blocks a request generated without rehashing its whole prompt.
 */
export function continueBlockHashes(
  text: string,
  previousHash: BlockHash | undefined,
  options: BlockHashOptions = {},
): BlockHash[] {
  if (previousHash === undefined) return blockHashes(text, options);
  const [a, b] = chainState(previousHash);
  return chainHashes(text, a, b, blockCharsOf(options), options.maxBlocks);
}

/**
 * `blockHashes(text)` as a Float64Array, given the hashes of its first `known.length` blocks (exactly those):
 * only the rest is hashed. The simulator uses it for prompts that start with a text many others start with.
 */
export function blockHashesAfter(
  text: string,
  known: ArrayLike<BlockHash>,
  options: BlockHashOptions = {},
): Float64Array {
  if (options.maxBlocks !== undefined) throw new RangeError('blockHashesAfter does not take maxBlocks');
  const blockChars = blockCharsOf(options);
  const knownCount = known.length;
  const total = Math.floor(text.length / blockChars);
  if (knownCount > total) throw new RangeError(`${knownCount} known blocks but the text has ${total} full blocks`);
  const hashes = new Float64Array(total);
  hashes.set(known);
  let a: number;
  let b: number;
  if (knownCount === 0) [a, b] = seedPair(options.seed);
  else [a, b] = chainState(known[knownCount - 1]);
  chainHashes(text, a, b, blockChars, undefined, knownCount * blockChars, hashes, knownCount);
  return hashes;
}
