import { NO_SLOT, SlotList } from '../../common/slot-list';
import { BlockHashIndex } from '../../state/block-hash-index';

const NONE = -1;
/** Slots a store starts with; it doubles when a write needs more. */
const INITIAL_SLOTS = 1024;

/**
 * The blocks of AIBrix's prefix hash table (aibrix-prefix-table.ts) without an object per block: each block is a
 * slot in typed arrays (its 53-bit hash, last write time, the pods sent it as a bit set, its place in a list
 * from least to most recently written: common/slot-list.ts), found by hash through state/block-hash-index.ts. Pods are numbered in the
 * order they are first written (`podNumber`), 32 per word of a slot's bit set. The store grows as a write needs;
 * the caller bounds it (`evictOldestWhileOver`), after a whole prompt's writes as the table's rule has it.
 */
export class AibrixBlockStore {
  private capacity = 0;
  private keys = new Float64Array(0);
  private writtenAtMs = new Float64Array(0);
  /** The held blocks' slots, least recently written first. */
  private readonly recency = new SlotList(0);
  /** Slot s's pods: bit p % 32 of podBits[s × podWords + ⌊p / 32⌋]. */
  private podBits = new Int32Array(0);
  private podWords = 1;
  private index = new BlockHashIndex(this.keys, 1);
  private readonly podNumbers = new Map<string, number>();
  /** Slots never used are `used` and above; freed ones are stacked in `freed[0..freedCount)`, last freed on top. */
  private used = 0;
  private freed = new Int32Array(0);
  private freedCount = 0;

  constructor() {
    this.grow(INITIAL_SLOTS);
  }

  /** Blocks held. */
  get size(): number {
    return this.recency.size;
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
    if (this.freedCount === 0 && this.used === this.capacity) this.grow(this.capacity * 2);
    // The slot a new block takes, offered to the index first: one probe stores a new block (most of a new prompt's).
    const free = this.freedCount !== 0 ? this.freed[this.freedCount - 1] : this.used;
    let slot: number;
    if (this.index.add(key, free)) {
      slot = free;
      if (this.freedCount !== 0) this.freedCount--;
      else this.used++;
      this.keys[slot] = key;
      this.podBits.fill(0, slot * this.podWords, (slot + 1) * this.podWords);
    } else {
      slot = this.index.get(key);
      this.recency.unlink(slot);
    }
    this.podBits[slot * this.podWords + (pod >> 5)] |= 1 << (pod & 31);
    this.writtenAtMs[slot] = nowMs;
    this.recency.pushTail(slot);
  }

  /** Drops the least recently written blocks while more than `maxBlocks` are held. */
  evictOldestWhileOver(maxBlocks: number): void {
    while (this.recency.size > maxBlocks) this.remove(this.recency.head);
  }

  /**
   * Drops every block with `expired(writtenAt)`, from the least recently written on; `stopAtFirstLive`: the caller
   * knows the write times rise along the list (its clock never went back), so none after a live block expired.
   */
  sweep(expired: (writtenAtMs: number) => boolean, stopAtFirstLive: boolean): void {
    for (let slot = this.recency.head; slot !== NO_SLOT;) {
      const next = this.recency.next(slot);
      if (expired(this.writtenAtMs[slot])) this.remove(slot);
      else if (stopAtFirstLive) return;
      slot = next;
    }
  }

  private remove(slot: number): void {
    this.recency.unlink(slot);
    this.index.delete(this.keys[slot]);
    this.freed[this.freedCount++] = slot;
  }

  /** Room for `capacity` slots: the arrays copied, the index rebuilt over the held blocks. */
  private grow(capacity: number): void {
    const copy = <T extends Float64Array | Int32Array>(from: T, to: T): T => (to.set(from), to);
    this.keys = copy(this.keys, new Float64Array(capacity));
    this.writtenAtMs = copy(this.writtenAtMs, new Float64Array(capacity));
    this.freed = copy(this.freed, new Int32Array(capacity));
    this.recency.grow(capacity);
    this.podBits = copy(this.podBits, new Int32Array(capacity * this.podWords));
    this.index = new BlockHashIndex(this.keys, capacity);
    for (let slot = this.recency.head; slot !== NO_SLOT; slot = this.recency.next(slot))
      this.index.add(this.keys[slot], slot);
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
