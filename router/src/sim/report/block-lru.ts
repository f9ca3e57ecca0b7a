import type { BlockHash } from '../../state/block-hash';
import { BlockHashIndex } from '../../state/block-hash-index';

/**
 * A set of block hashes with least-recently-used eviction and a fixed capacity. Entries live in preallocated
 * typed arrays (hash by slot, an intrusive doubly linked recency list by slot index) plus one open-addressing
 * index from hash to slot that keeps no second copy of the hash, so memory is bounded by the capacity (8 + 8
 * + 8–11 ≈ 27 bytes a block; the arrays are filled in slot order, so pages never used are never mapped) and a
 * touch is O(1) without allocation: fast enough to replay an hour of a 112-instance fleet's prompts.
 */
export class BlockLru {
  private readonly slotOf: BlockHashIndex;
  private readonly hashes: Float64Array;
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  /** Most recently used slot, or -1. */
  private head = -1;
  /** Least recently used slot, or -1. */
  private tail = -1;
  private used = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`capacity must be a non-negative integer (got ${capacity})`);
    this.hashes = new Float64Array(capacity);
    this.slotOf = new BlockHashIndex(this.hashes, Math.max(1, capacity));
    this.prev = new Int32Array(capacity);
    this.next = new Int32Array(capacity);
  }

  get size(): number {
    return this.used;
  }

  has(hash: BlockHash): boolean {
    return this.slotOf.has(hash);
  }

  /**
   * Mark `hash` most recently used, inserting it (and evicting the least recently used) if absent. Returns
   * whether it was present.
   */
  touch(hash: BlockHash): boolean {
    if (this.capacity === 0) return false;
    const slot = this.slotOf.get(hash);
    if (slot !== -1) {
      if (slot !== this.head) {
        this.unlink(slot);
        this.pushHead(slot);
      }
      return true;
    }
    let free: number;
    if (this.used < this.capacity) {
      free = this.used++;
    } else {
      free = this.tail;
      this.unlink(free);
      this.slotOf.delete(this.hashes[free]!);
    }
    this.hashes[free] = hash;
    this.slotOf.add(hash, free);
    this.pushHead(free);
    return false;
  }

  /** Hashes from most to least recently used (for tests). */
  *recency(): Generator<BlockHash> {
    for (let s = this.head; s !== -1; s = this.next[s]!) yield this.hashes[s]!;
  }

  private unlink(slot: number): void {
    const p = this.prev[slot]!;
    const n = this.next[slot]!;
    if (p === -1) this.head = n;
    else this.next[p] = n;
    if (n === -1) this.tail = p;
    else this.prev[n] = p;
  }

  private pushHead(slot: number): void {
    this.prev[slot] = -1;
    this.next[slot] = this.head;
    if (this.head !== -1) this.prev[this.head] = slot;
    this.head = slot;
    if (this.tail === -1) this.tail = slot;
  }
}
