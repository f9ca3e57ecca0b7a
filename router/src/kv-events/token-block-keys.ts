/**
 * The router's key for an engine's KV block, computed from token ids: block i's key chains block i-1's key with
 * the block's own token ids, and the first block starts from its LoRA adapter's name. Two prompts share a key only
 * if they share every token up to the end of that block in the same adapter (vLLM's prefix-cache rule), so the
 * engine index (engine-kv-index.ts) can match a request's blocks against what an engine's BlockStored events said
 * it holds without knowing the engine's own hash.
 *
 * Why not reproduce vLLM's block hash: vLLM hashes each block with sha256 over a pickled or CBOR-encoded tuple
 * (vllm/v1/core/kv_cache_utils.py, `hash_block_tokens`), seeded by a per-process random value unless the deployment
 * sets PYTHONHASHSEED, and the algorithm has changed between releases (builtin hash, then sha256 over pickle, then
 * sha256_cbor). Reproducing it would need that secret from every engine and a copy of each release's encoding; the
 * chain over token ids needs neither, and survives any change to the engine's hash as long as events carry tokens.
 *
 * Not keyed: the keys never leave the process (nothing publishes them), and a client that crafted a 53-bit
 * collision would only mislead the prediction for its own prompt.
 */

import { finishLanes } from '../state/block-hash';

/** A router chain key: a 53-bit non-negative integer, safe as a Map key. */
export type TokenBlockKey = number;

// Read once: Jest runs tests in a vm context where a global lookup inside a hot loop is many times slower.
const imul = Math.imul;

/** Mixes one 32-bit value into the two lanes. */
function mix(a: number, b: number, value: number): [number, number] {
  a = imul(a ^ value, 0x01000193);
  b = imul(b ^ value, 0x5bd1e995);
  b ^= b >>> 15;
  return [a, b];
}

/** The chain's starting key for a LoRA adapter (undefined: the base model). */
export function chainSeedOf(loraName: string | undefined): TokenBlockKey {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  if (loraName !== undefined) {
    [a, b] = mix(a, b, loraName.length + 1);
    for (let i = 0; i < loraName.length; i++) [a, b] = mix(a, b, loraName.charCodeAt(i));
  }
  return finishLanes(a, b);
}

/**
 * The chained keys of the full blocks of `tokenIds[0, count × blockSize)`, continuing from `parent` (the key of the
 * block before the first, or chainSeedOf(adapter) for a prompt's first block). `count` defaults to every full block.
 */
export function tokenBlockKeys(
  tokenIds: ArrayLike<number>,
  blockSize: number,
  parent: TokenBlockKey,
  count = Math.floor(tokenIds.length / blockSize),
): TokenBlockKey[] {
  const keys = new Array<TokenBlockKey>(count);
  let previous = parent;
  for (let block = 0; block < count; block++) {
    let a = (previous % 0x100000000) >>> 0;
    let b = (Math.floor(previous / 0x100000000) ^ 0x27d4eb2f) >>> 0;
    const end = (block + 1) * blockSize;
    for (let i = block * blockSize; i < end; i++) {
      // Inlined mix(): no allocation per token on the hot path.
      const id = tokenIds[i];
      a = imul(a ^ id, 0x01000193);
      b = imul(b ^ id, 0x5bd1e995);
      b ^= b >>> 15;
    }
    previous = finishLanes(a, b);
    keys[block] = previous;
  }
  return keys;
}
