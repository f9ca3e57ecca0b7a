import { BlockHashIndex } from '../../state/block-hash-index';

const NONE = -1;
/** Slots a store starts with; it doubles when a write needs more. */
const INITIAL_SLOTS = 1024;

/**
 * The blocks of AIBrix's prefix hash table (aibrix-prefix-table.ts) without an object per block: each block is a
 * slot in typed arrays (its 53-bit hash, last write time, the pods sent it as a bit set, its two links in a list
 * from least to most recently written), found by hash through state/block-hash-index.ts. Pods are numbered in the
 * order they are first written (`podNumber`), 32 per word of a slot's bit set. The store grows as a write needs;
 * the caller bounds it (`evictOldestWhileOver`), after a whole prompt's writes as the table's rule has it.
 */
export class AibrixBlockStore {
  private capacity = 0;
  private keys = new Float64Array(0);
  private writtenAtMs = new Float64Array(0);
  /** older[s] / newer[s]: the slot written just before / after slot s (-1 at the ends). */
  private older = new Int32Array(0);
  private newer = new Int32Array(0);
  /** Slot s's pods: bit p % 32 of podBits[s × podWords + ⌊p / 32⌋]. */
  private podBits = new Int32Array(0);
  private podWords = 1;
  private index = new BlockHashIndex(this.keys, 1);
  private readonly podNumbers = new Map<string, number>();
  private oldest = NONE;
  private newest = NONE;
  /** Slots never used are `used` and above; freed ones are chained through `newer` from `freeHead`. */
  private used = 0;
  private freeHead = NONE;
  private count = 0;

  constructor() {
    this.grow(INITIAL_SLOTS);
  }

  /** Blocks held. */
  get size(): number {
    return this.count;
  }

  /** The number of `pod` in the bit sets, or -1 when it was never written (so it holds nothing). */
  podNumberOf(pod: string): number {
    return this.podNumbers.get(pod) ?? NONE;
  }

  /** The slot holding `key`, or -1. */
  slotOf(key: number): number {
    return this.index.get(key);
  }

  /** When `slot`'s block was last written. */
  writtenAt(slot: number): number {
    return this.writtenAtMs[slot];
  }

  /** Whether pod number `pod` (podNumberOf, ≥ 0) was sent `slot`'s block. */
  holds(slot: number, pod: number): boolean {
    return (this.podBits[slot * this.podWords + (pod >> 5)] & (1 << (pod & 31))) !== 0;
  }

  /** The number `pod` has in the bit sets, given one if new (widening every slot's set when it needs a word more). */
  podNumber(pod: string): number {
    let p = this.podNumbers.get(pod);
    if (p === undefined) {
      p = this.podNumbers.size;
      this.podNumbers.set(pod, p);
      if (p >> 5 >= this.podWords) this.widenPodBits(this.podWords * 2);
    }
    return p;
  }

  /** Adds pod number `pod` to `key`'s block (a new one if absent), written at `nowMs`: now the most recent. */
  write(key: number, pod: number, nowMs: number): void {
    if (this.freeHead === NONE && this.used === this.capacity) this.grow(this.capacity * 2);
    // The slot a new block takes, offered to the index first: one probe stores a new block (most of a new prompt's).
    const free = this.freeHead !== NONE ? this.freeHead : this.used;
    let slot: number;
    if (this.index.add(key, free)) {
      slot = free;
      if (slot === this.freeHead) this.freeHead = this.newer[slot];
      else this.used++;
      this.keys[slot] = key;
      this.podBits.fill(0, slot * this.podWords, (slot + 1) * this.podWords);
      this.count++;
    } else {
      slot = this.index.get(key);
      this.unlink(slot);
    }
    this.podBits[slot * this.podWords + (pod >> 5)] |= 1 << (pod & 31);
    this.writtenAtMs[slot] = nowMs;
    this.linkNewest(slot);
  }

  /** Drops the least recently written blocks while more than `maxBlocks` are held. */
  evictOldestWhileOver(maxBlocks: number): void {
    while (this.count > maxBlocks) this.remove(this.oldest);
  }

  /**
   * Drops every block with `expired(writtenAt)`, from the least recently written on; `stopAtFirstLive`: the caller
   * knows the write times rise along the list (its clock never went back), so none after a live block expired.
   */
  sweep(expired: (writtenAtMs: number) => boolean, stopAtFirstLive: boolean): void {
    for (let slot = this.oldest; slot !== NONE;) {
      const next = this.newer[slot];
      if (expired(this.writtenAtMs[slot])) this.remove(slot);
      else if (stopAtFirstLive) return;
      slot = next;
    }
  }

  private remove(slot: number): void {
    this.unlink(slot);
    this.index.delete(this.keys[slot]);
    this.newer[slot] = this.freeHead;
    this.freeHead = slot;
    this.count--;
  }

  private unlink(slot: number): void {
    const before = this.older[slot];
    const after = this.newer[slot];
    if (before === NONE) this.oldest = after;
    else this.newer[before] = after;
    if (after === NONE) this.newest = before;
    else this.older[after] = before;
  }

  private linkNewest(slot: number): void {
    this.older[slot] = this.newest;
    this.newer[slot] = NONE;
    if (this.newest === NONE) this.oldest = slot;
    else this.newer[this.newest] = slot;
    this.newest = slot;
  }

  /** Room for `capacity` slots: the arrays copied, the index rebuilt over the held blocks. */
  private grow(capacity: number): void {
    const copy = <T extends Float64Array | Int32Array>(from: T, to: T): T => (to.set(from), to);
    this.keys = copy(this.keys, new Float64Array(capacity));
    this.writtenAtMs = copy(this.writtenAtMs, new Float64Array(capacity));
    this.older = copy(this.older, new Int32Array(capacity));
    this.newer = copy(this.newer, new Int32Array(capacity));
    this.podBits = copy(this.podBits, new Int32Array(capacity * this.podWords));
    this.index = new BlockHashIndex(this.keys, capacity);
    for (let slot = this.oldest; slot !== NONE; slot = this.newer[slot]) this.index.add(this.keys[slot], slot);
    this.capacity = capacity;
  }

  /** Gives every slot `words` words of pod bits, keeping what each holds. */
  private widenPodBits(words: number): void {
    const bits = new Int32Array(this.capacity * words);
    for (let slot = 0; slot < this.used; slot++)
      bits.set(this.podBits.subarray(slot * this.podWords, (slot + 1) * this.podWords), slot * words);
    this.podBits = bits;
    this.podWords = words;
  }
}
