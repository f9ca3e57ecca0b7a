import { createHmac, randomBytes } from 'node:crypto';

/**
 * Block ids that reveal nothing of the prompts. Each block's id is an HMAC-SHA256 chained over the blocks before
 * it (block i's MAC covers the previous MAC and block i's content), under a 32-byte secret drawn for this import
 * and never written anywhere: without the secret nobody can test a guessed prompt against the trace, and two
 * imports of the same traffic share no ids. The MACs are then renumbered to small integers in order of first
 * appearance, so the trace holds only those integers, and a trace whose ids are already numbered that way
 * (Mooncake's are) comes back with the same ids.
 *
 * Chaining gives Mooncake's meaning: two requests share id k only if they share every block up to k.
 */
export class KeyedBlockIds {
  private readonly secret: Buffer;
  private readonly table = new DigestTable();

  constructor(secret: Buffer = randomBytes(32)) {
    this.secret = secret;
  }

  /** Distinct blocks seen so far (the next new block gets this id). */
  get size(): number {
    return this.table.size;
  }

  /**
   * Ids of `text` cut into `blockChars`-character blocks (the last may be partial), chained from `namespace`
   * (model and tenant key: requests of different models or tenants never share a block). `isNew` receives,
   * per block, whether its id is new.
   */
  idsOfText(
    text: string,
    blockChars: number,
    namespace: string,
    onBlock?: (id: number, parent: number, isNew: boolean) => void,
  ): number[] {
    const count = Math.ceil(text.length / blockChars);
    const ids = new Array<number>(count);
    let previous: Buffer | undefined;
    let parent = -1;
    for (let i = 0; i < count; i++) {
      previous = this.link(previous, namespace, Buffer.from(text.slice(i * blockChars, (i + 1) * blockChars), 'utf8'));
      parent = ids[i] = this.idOf(previous, parent, onBlock);
    }
    return ids;
  }

  /** Ids of token ids cut into `blockTokens`-token blocks, chained from `namespace` (as idsOfText). */
  idsOfTokens(
    tokens: ArrayLike<number>,
    blockTokens: number,
    namespace: string,
    onBlock?: (id: number, parent: number, isNew: boolean) => void,
  ): number[] {
    const count = Math.ceil(tokens.length / blockTokens);
    const ids = new Array<number>(count);
    let previous: Buffer | undefined;
    let parent = -1;
    const words = new Uint32Array(blockTokens);
    for (let i = 0; i < count; i++) {
      const from = i * blockTokens;
      const n = Math.min(blockTokens, tokens.length - from);
      for (let j = 0; j < n; j++) words[j] = tokens[from + j]!;
      previous = this.link(previous, namespace, new Uint8Array(words.buffer, 0, n * 4));
      parent = ids[i] = this.idOf(previous, parent, onBlock);
    }
    return ids;
  }

  /** One link of the chain: the first block is keyed with the namespace, each later one with the link before it. */
  private link(previous: Buffer | undefined, namespace: string, block: Uint8Array): Buffer {
    const mac = createHmac('sha256', this.secret);
    if (previous === undefined) mac.update(NAMESPACE_TAG).update(namespace, 'utf8');
    else mac.update(previous);
    return mac.update(BLOCK_TAG).update(block).digest();
  }

  /** The small id of a link, telling `onBlock` its parent and whether the id is new. */
  private idOf(
    digest: Buffer,
    parent: number,
    onBlock: ((id: number, parent: number, isNew: boolean) => void) | undefined,
  ): number {
    const before = this.table.size;
    const id = this.table.idOf(digest);
    onBlock?.(id, parent, this.table.size > before);
    return id;
  }
}

/** Domain separation: a namespace can never read as block content or the other way round. */
const NAMESPACE_TAG = Buffer.from([0]);
const BLOCK_TAG = Buffer.from([1]);

/**
 * MAC → small integer, keyed on the MAC's first 64 bits (two blocks colliding there: about n²/2^65, under 10^-5
 * for 10 million distinct blocks). Open addressing with linear probing over two typed arrays (the key's two
 * words and the id + 1), grown ×2 at a load of 1/2: 24 bytes per distinct block at worst, no per-entry objects,
 * so an import of millions of distinct blocks stays in a few hundred MB.
 */
export class DigestTable {
  private keys = new Int32Array(2 << 16);
  private values = new Int32Array(1 << 16);
  private count = 0;

  get size(): number {
    return this.count;
  }

  idOf(digest: Uint8Array): number {
    const hi = (digest[0] << 24) | (digest[1] << 16) | (digest[2] << 8) | digest[3];
    const lo = (digest[4] << 24) | (digest[5] << 16) | (digest[6] << 8) | digest[7];
    if ((this.count + 1) * 2 > this.values.length) this.grow();
    return this.find(hi, lo, true);
  }

  private find(hi: number, lo: number, insert: boolean, value = this.count): number {
    const mask = this.values.length - 1;
    for (let slot = (Math.imul(lo ^ hi, 0x9e3779b1) >>> 0) & mask; ; slot = (slot + 1) & mask) {
      const stored = this.values[slot];
      if (stored === 0) {
        if (!insert) return -1;
        this.keys[2 * slot] = hi;
        this.keys[2 * slot + 1] = lo;
        this.values[slot] = value + 1;
        this.count++;
        return value;
      }
      if (this.keys[2 * slot] === hi && this.keys[2 * slot + 1] === lo) return stored - 1;
    }
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    this.keys = new Int32Array(oldKeys.length * 2);
    this.values = new Int32Array(oldValues.length * 2);
    const entries = this.count;
    this.count = 0;
    for (let s = 0; s < oldValues.length; s++) {
      if (oldValues[s] !== 0) this.find(oldKeys[2 * s], oldKeys[2 * s + 1], true, oldValues[s] - 1);
    }
    this.count = entries;
  }
}
