import type { BlockHash } from './block-hash';

const EMPTY = -1;
const TWO_POW_32 = 4294967296;

/**
 * A fixed-size map from block hash to a non-negative integer (a block id), for the hot path of the prefix
 * cache. Block hashes are 53-bit numbers, which V8 stores as heap numbers: a `Map` keyed by them costs a
 * hash-and-compare on boxed doubles per operation. Here keys are split into two 32-bit halves stored next to
 * their value in one typed array (one cache line per probe: with a large cache the table does not fit in CPU
 * caches, so misses are the cost), with open addressing, linear probing and backward-shift deletion (no
 * tombstones). Lookups allocate nothing. Fixed-size by default (the prefix cache knows its capacity); a
 * growable table doubles when half full (the hit-rate ceilings track every block a workload ever produced).
 */
export class BlockHashTable {
  /** Slot i occupies [4i, 4i+4): key low 32 bits, key high bits, value (-1 = empty), padding. */
  private slots: Int32Array;
  private mask: number;
  private count = 0;
  /** Most entries held at once; grows with a growable table. */
  maxEntries: number;
  readonly growable: boolean;

  /**
   * @param maxEntries most entries ever held at once (the table is sized for a load factor ≤ 0.5); for a
   *   growable table, the initial size
   */
  constructor(maxEntries: number, options: { readonly growable?: boolean } = {}) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be an integer >= 1, got ${maxEntries}`);
    this.growable = options.growable ?? false;
    this.maxEntries = maxEntries;
    let slots = 8;
    while (slots < maxEntries * 2) slots *= 2;
    this.mask = slots - 1;
    this.slots = BlockHashTable.emptySlots(slots);
  }

  private static emptySlots(count: number): Int32Array {
    const slots = new Int32Array(count * 4);
    for (let i = 0; i < count; i++) slots[4 * i + 2] = EMPTY;
    return slots;
  }

  /** A growable table doubles instead of refusing; a fixed one throws (its owner sized it wrong). */
  private makeRoom(): void {
    if (!this.growable) throw new RangeError(`block hash table is full (${this.maxEntries} entries)`);
    const old = this.slots;
    this.maxEntries *= 2;
    this.mask = ((this.mask + 1) << 1) - 1;
    this.slots = BlockHashTable.emptySlots(this.mask + 1);
    this.count = 0;
    for (let at = 0; at < old.length; at += 4) {
      if (old[at + 2] !== EMPTY) this.setIfAbsent((old[at + 1] >>> 0) * TWO_POW_32 + (old[at] >>> 0), old[at + 2]);
    }
  }

  get size(): number {
    return this.count;
  }

  /** The value stored for `hash`, or -1. */
  get(hash: BlockHash): number {
    const lo = hash | 0;
    const hi = (hash / TWO_POW_32) | 0;
    const slots = this.slots;
    for (let i = this.slotOf(lo, hi); ; i = (i + 1) & this.mask) {
      const at = i << 2;
      const value = slots[at + 2];
      if (value === EMPTY) return EMPTY;
      if (slots[at] === lo && slots[at + 1] === hi) return value;
    }
  }

  has(hash: BlockHash): boolean {
    return this.get(hash) !== EMPTY;
  }

  /** Stores `value` (≥ 0) for `hash`, replacing any previous value. */
  set(hash: BlockHash, value: number): void {
    if (!(value >= 0 && value <= 0x7fffffff)) throw new RangeError(`values must be non-negative 31-bit integers, got ${value}`);
    if (!this.setIfAbsent(hash, value)) this.replace(hash, value);
  }

  private replace(hash: BlockHash, value: number): void {
    const lo = hash | 0;
    const hi = (hash / TWO_POW_32) | 0;
    const slots = this.slots;
    for (let i = this.slotOf(lo, hi); ; i = (i + 1) & this.mask) {
      const at = i << 2;
      if (slots[at] === lo && slots[at + 1] === hi && slots[at + 2] !== EMPTY) {
        slots[at + 2] = value;
        return;
      }
    }
  }

  /**
   * Stores `value` for `hash` unless the hash is present already; one probe sequence for check and insert.
   * Returns whether it stored.
   */
  setIfAbsent(hash: BlockHash, value: number): boolean {
    const lo = hash | 0;
    const hi = (hash / TWO_POW_32) | 0;
    const slots = this.slots;
    for (let i = this.slotOf(lo, hi); ; i = (i + 1) & this.mask) {
      const at = i << 2;
      if (slots[at + 2] === EMPTY) {
        if (this.count >= this.maxEntries) {
          this.makeRoom();
          return this.setIfAbsent(hash, value);
        }
        slots[at] = lo;
        slots[at + 1] = hi;
        slots[at + 2] = value;
        this.count++;
        return true;
      }
      if (slots[at] === lo && slots[at + 1] === hi) return false;
    }
  }

  /** Removes `hash`; returns whether it was present. */
  delete(hash: BlockHash): boolean {
    const lo = hash | 0;
    const hi = (hash / TWO_POW_32) | 0;
    const mask = this.mask;
    const slots = this.slots;
    let i = this.slotOf(lo, hi);
    for (; ; i = (i + 1) & mask) {
      const at = i << 2;
      if (slots[at + 2] === EMPTY) return false;
      if (slots[at] === lo && slots[at + 1] === hi) break;
    }
    // Backward shift: pull later entries of the probe run into the hole so lookups never stop early.
    let hole = i;
    for (let j = (i + 1) & mask; slots[(j << 2) + 2] !== EMPTY; j = (j + 1) & mask) {
      const home = this.slotOf(slots[j << 2], slots[(j << 2) + 1]);
      // Move j into the hole unless its home lies cyclically in (hole, j].
      const homeInRange = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (homeInRange) continue;
      slots[hole << 2] = slots[j << 2];
      slots[(hole << 2) + 1] = slots[(j << 2) + 1];
      slots[(hole << 2) + 2] = slots[(j << 2) + 2];
      hole = j;
    }
    slots[(hole << 2) + 2] = EMPTY;
    this.count--;
    return true;
  }

  /** Every (hash, value) pair, in slot order (for invariant checks). */
  *entries(): IterableIterator<[BlockHash, number]> {
    for (let at = 0; at < this.slots.length; at += 4) {
      if (this.slots[at + 2] !== EMPTY) yield [(this.slots[at + 1] >>> 0) * TWO_POW_32 + (this.slots[at] >>> 0), this.slots[at + 2]];
    }
  }

  private slotOf(lo: number, hi: number): number {
    return (lo ^ Math.imul(hi, 0x9e3779b1)) & this.mask;
  }
}
